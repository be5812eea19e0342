#!/usr/bin/env bash
# Checks the facade's features (crates/switchboard): a selection of features compiles only what
# it needs. For each selection below, `cargo tree -e normal` must not list the forbidden crates
# (a stdio-only server compiles no HTTP stack; a client compiles no OAuth stack; an HTTP client
# compiles no axum; an HTTP server compiles no reqwest). Exits 1 naming the selection and the
# crate when one shows up.
#
#   scripts/check-features.sh            the dependency checks (seconds; part of test-all.sh)
#   scripts/check-features.sh --build    also builds the facade with each single feature and the
#                                        selections below, failing on any warning (minutes: a
#                                        selection unifies dependency features differently, so
#                                        dependencies are rebuilt)
set -euo pipefail
cd "$(dirname "$0")/.."

build=false
case "${1:-}" in
    --build) build=true ;;
    "") ;;
    *) echo "usage: $0 [--build]" >&2; exit 2 ;;
esac

# The OAuth stack: the documents crate, its URL parser, the JWT verifier. A client selection
# compiles none of it unless it asks for `auth` (or `oauth-client`); a server selection has the
# documents (the server role's scopes use them) but no JWT verifier without `resource-server`.
oauth="switchboard-auth|url|jsonwebtoken"
# The OpenTelemetry crates: only the `otel` feature brings them.
otel="switchboard-telemetry|opentelemetry|opentelemetry_sdk|opentelemetry-otlp|opentelemetry-proto|opentelemetry-http"

# selection | forbidden crates (an extended regex over crate names)
checks=(
    "server,stdio|axum|axum-core|hyper|hyper-util|reqwest|jsonwebtoken|$otel"
    "server,stdio,macros|axum|axum-core|hyper|hyper-util|reqwest|jsonwebtoken"
    "client,stdio|axum|axum-core|hyper|hyper-util|reqwest|$oauth|$otel"
    "server|axum|axum-core|hyper|hyper-util|reqwest|jsonwebtoken"
    "client|axum|axum-core|hyper|hyper-util|reqwest|$oauth"
    "client,http-client|axum|axum-core|switchboard-auth|jsonwebtoken"
    "server,http-server|reqwest|jsonwebtoken"
    "server,stdio,http-server|reqwest|jsonwebtoken"
    "client,stdio,tasks,inspect|axum|axum-core|hyper|hyper-util|reqwest|$oauth"
    "server,http-server,client,http-client|$otel"
)

fail=0
for check in "${checks[@]}"; do
    features=${check%%|*}
    forbidden=${check#*|}
    crates=$(cargo tree --locked -p switchboard --no-default-features --features "$features" \
        -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u)
    found=$(grep -xE "$forbidden" <<<"$crates" || true)
    if [[ -n $found ]]; then
        echo "FAIL  --features $features pulls in: $(tr '\n' ' ' <<<"$found")"
        fail=1
    else
        echo "ok    --features $features: none of $forbidden"
    fi
done

if $build; then
    # No features, each single feature, then every selection above not already built.
    selections=("" server client stdio http-server http-client macros auth oauth-client
        resource-server rustls proxy tasks redis inspect check otel)
    for s in "${checks[@]%%|*}"; do
        [[ " ${selections[*]} " == *" $s "* ]] || selections+=("$s")
    done
    for features in "${selections[@]}"; do
        label=${features:-(none)}
        # A warning in any crate of the selection fails the check.
        # Without incremental caches: each selection keeps its own artifacts, and those
        # caches would only multiply the disk they take.
        if ! out=$(CARGO_INCREMENTAL=0 cargo build --locked -p switchboard --no-default-features \
            ${features:+--features "$features"} --message-format short 2>&1); then
            echo "FAIL  build --features $label"
            echo "$out" | tail -20
            fail=1
        elif grep -q "warning" <<<"$out"; then
            echo "FAIL  build --features $label: warnings"
            grep "warning" <<<"$out" | head -20
            fail=1
        else
            echo "ok    build --features $label"
        fi
    done
fi

exit $fail

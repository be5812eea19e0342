#!/usr/bin/env bash
# Issue 31's "Done when", walked as a Rust developer would, with the real cargo:
#   * `cargo new` in a temporary directory; switchboard added as a path dependency on this
#     repository's facade with the README's features (server, stdio, macros) and tokio; the
#     server is the README's (one tool, `add`), named, with instructions;
#   * `switchboard dev -- cargo run` with one host connection held throughout
#     (interop/dev_walk_client.py, raw JSON-RPC): the host sees the user's serverInfo and
#     instructions; a second tool added to the source is rebuilt by cargo, the server restarted
#     in place, and the same connection receives notifications/tools/list_changed and lists and
#     calls the new tool; a source that does not compile shows rustc's error on stderr and the
#     previous build keeps serving;
#   * `switchboard pack --stdio <the built binary>` makes a bundle that the official MCPB CLI
#     validates (`mcpb validate`) and reads back (`mcpb info`), and `--server-json` writes a
#     server.json valid against the registry's schema (the one the client crate's tests vendor),
#     which refuses a document without its name (so the validation is not a no-op).
# Compile cost: the project gets this repository's Cargo.lock and dev profile and builds into
# the workspace's target directory (CARGO_TARGET_DIR, else ./target), so what the workspace
# build compiled with the same features is reused; the times are printed. Ends with
# `N passed, M failed`; exit 0 only if nothing failed. Everything it needs missing fails it.
#
#   interop/dev-walk.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/dev-walk.sh path/to/switchboard}"
. interop/lib.sh
REPO="$INTEROP_REPO"
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
command -v cargo > /dev/null || interop_die "no cargo on PATH"
interop_use_node22
[ -f "$MCPB_JS" ] || interop_die "the MCPB CLI is not installed at $MCPB_JS; run scripts/install-peers.sh"
[ -x "$VENV_PY" ] || interop_die "no Python venv at $VENV_DIR; run scripts/install-peers.sh"
"$VENV_PY" -c "import jsonschema" || interop_die "the venv has no jsonschema (a dependency of mcp); run scripts/install-peers.sh"
SCHEMA="$REPO/crates/switchboard-client/tests/registry/server.schema.json"
[ -f "$SCHEMA" ] || interop_die "no registry schema at $SCHEMA"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
case "$CARGO_TARGET_DIR" in /*) ;; *) CARGO_TARGET_DIR="$REPO/$CARGO_TARGET_DIR" ;; esac
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

# `cargo new`, then what the README says to add.
PROJECT="$WORK/walk-server"
(cd "$WORK" && cargo new --quiet --vcs none walk-server) || interop_die "cargo new failed"
cp "$REPO/Cargo.lock" "$PROJECT/Cargo.lock"
cat >> "$PROJECT/Cargo.toml" << EOF
switchboard = { path = "$REPO/crates/switchboard", default-features = false, features = ["server", "stdio", "macros"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

EOF
# The workspace's dev profile, so that the dependencies it built are this build's too.
python3 - "$REPO/Cargo.toml" >> "$PROJECT/Cargo.toml" << 'EOF'
import sys, tomllib
dev = tomllib.load(open(sys.argv[1], "rb")).get("profile", {}).get("dev", {})
def value(v):
    return f'"{v}"' if isinstance(v, str) else str(v).lower()
print("[profile.dev]")
for k, v in dev.items():
    if k != "package":
        print(f"{k} = {value(v)}")
for pkg, table in dev.get("package", {}).items():
    print(f'\n[profile.dev.package."{pkg}"]')
    for k, v in table.items():
        print(f"{k} = {value(v)}")
EOF
# The first build (the README's one-tool server, written by the client script's template).
"$VENV_PY" - "$PROJECT/src/main.rs" << 'EOF'
import sys
sys.path.insert(0, "interop")
import dev_walk_client as w
open(sys.argv[1], "w").write(w.source(with_mul=False))
EOF
start=$(date +%s)
if timeout 900 cargo build --offline --quiet --manifest-path "$PROJECT/Cargo.toml" 2> "$WORK/build.err"; then
  pass "the new project builds against the workspace's lock file and target directory ($(($(date +%s) - start)) s)"
else
  cat "$WORK/build.err" >&2
  interop_die "the new project does not build"
fi

# The development loop, one host connection throughout.
if timeout 1500 "$VENV_PY" interop/dev_walk_client.py "$BIN" "$PROJECT" > "$WORK/walk.out"; then
  cat "$WORK/walk.out"
  pass "the dev loop: $(tail -1 "$WORK/walk.out")"
else
  cat "$WORK/walk.out"
  fail "the dev loop" "$(tail -1 "$WORK/walk.out")"
fi

# The last good build (add and mul), packed.
SERVER="$CARGO_TARGET_DIR/debug/walk-server"
[ -x "$SERVER" ] || interop_die "no built server at $SERVER"
BUNDLE="$WORK/walk-server.mcpb"
if timeout 60 "$BIN" pack --stdio "$SERVER" --author "The dev walk" -o "$BUNDLE" 2> "$WORK/pack.err"; then
  pass "switchboard pack wrote the bundle: $(tail -1 "$WORK/pack.err")"
else
  cat "$WORK/pack.err" >&2
  interop_die "switchboard pack failed"
fi
interop_mcpb_check "$BUNDLE" "$WORK/manifest"
if python3 - "$WORK/manifest/manifest.json" << 'EOF'; then
import json, sys
m = json.load(open(sys.argv[1]))
assert m["name"] == "walk-server" and m["version"] == "0.1.0", m
assert sorted(t["name"] for t in m["tools"]) == ["add", "mul"], m["tools"]
assert m["server"]["type"] == "binary", m["server"]
EOF
  pass "the manifest names walk-server 0.1.0 and its tools add and mul"
else
  fail "the manifest names walk-server 0.1.0 and its tools add and mul" "see above"
fi

# One bundle for three platforms: this machine's build and, as stand-ins for the darwin and
# win32 builds (mcpb validates the manifest; nothing here runs them), copies of it under their
# names. The manifest names the three platforms and starts each one's binary; unpacked by mcpb,
# this platform's binary, started as the manifest's override for linux says, answers.
mkdir -p "$WORK/darwin" "$WORK/win32" "$WORK/multi" "$WORK/multi-unpacked"
cp "$SERVER" "$WORK/darwin/walk-server"
cp "$SERVER" "$WORK/win32/walk-server.exe"
MULTI="$WORK/walk-server-multi.mcpb"
if timeout 60 "$BIN" pack --stdio "$SERVER" --author "The dev walk" --platform "darwin=$WORK/darwin/walk-server" \
  --platform "win32=$WORK/win32/walk-server.exe" -o "$MULTI" 2> "$WORK/pack.err"; then
  pass "switchboard pack --platform wrote a bundle for three platforms: $(tail -1 "$WORK/pack.err")"
else
  fail "switchboard pack --platform" "$(cat "$WORK/pack.err")"
fi
python3 - "$MULTI" "$WORK/multi" << 'EOF'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract("manifest.json", sys.argv[2])
EOF
if out="$(mcpb validate "$WORK/multi/manifest.json" 2>&1)"; then
  pass "mcpb validate accepts the three-platform manifest ($(echo "$out" | tail -1))"
else
  fail "mcpb validate accepts the three-platform manifest" "$out"
fi
if ! out="$(mcpb unpack "$MULTI" "$WORK/multi-unpacked" 2>&1)"; then
  fail "mcpb unpack unpacks the three-platform bundle" "$out"
elif cmd="$(python3 - "$WORK/multi-unpacked" 2>&1 << 'EOF'
import json, os, sys
root = sys.argv[1]
m = json.load(open(root + "/manifest.json"))
assert sorted(m["compatibility"]["platforms"]) == ["darwin", "linux", "win32"], m["compatibility"]
over = m["server"]["mcp_config"]["platform_overrides"]
want = {"linux": "server/linux/walk-server", "darwin": "server/darwin/walk-server",
        "win32": "server/win32/walk-server.exe"}
for p, path in want.items():
    assert over[p]["command"] == "${__dirname}/" + path, over
    assert os.path.isfile(os.path.join(root, path)), path
print(over["linux"]["command"].replace("${__dirname}", root))
EOF
)" && out="$(timeout 60 "$BIN" call --stdio "$cmd" tools/list 2>&1)" && echo "$out" | grep -q '"mul"'; then
  pass "the three-platform bundle names each platform's binary, and linux's, unpacked by mcpb, answers tools/list"
else
  fail "the three-platform bundle names each platform's binary and linux's answers" "${out:-$cmd}"
fi

# The registry's server.json for that bundle, checked against the registry's schema.
if timeout 60 "$BIN" pack --stdio "$SERVER" --server-json --registry-name io.github.example/walk-server \
  --bundle "$BUNDLE" --bundle-url https://example.com/releases/v0.1.0/walk-server.mcpb \
  -o "$WORK/server.json" 2> "$WORK/pack.err"; then
  pass "switchboard pack --server-json wrote server.json: $(tail -1 "$WORK/pack.err")"
else
  fail "switchboard pack --server-json" "$(cat "$WORK/pack.err")"
fi
if out="$("$VENV_PY" - "$SCHEMA" "$WORK/server.json" "$BUNDLE" << 'EOF' 2>&1
import hashlib, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
cls = jsonschema.validators.validator_for(schema)
v = cls(schema, format_checker=cls.FORMAT_CHECKER)
errors = [f"{e.message} at {list(e.absolute_path)}" for e in v.iter_errors(doc)]
assert not errors, errors
assert doc["$schema"] == schema["$id"], (doc["$schema"], schema["$id"])
pkg = doc["packages"][0]
assert pkg["registryType"] == "mcpb", pkg
assert pkg["fileSha256"] == hashlib.sha256(open(sys.argv[3], "rb").read()).hexdigest(), pkg
bad = dict(doc)
del bad["name"]
assert list(v.iter_errors(bad)), "the schema accepted a document without its name"
print(f"valid against {schema['$id']}")
EOF
)"; then
  pass "server.json is $out, and names the bundle's SHA-256"
else
  fail "server.json is valid against the registry schema" "$out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

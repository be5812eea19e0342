#!/usr/bin/env bash
# MCP Apps across implementations (docs/APPS.md): official clients read the notes example's app,
# `ui://notes/list`, over stdio and over Streamable HTTP (`notes DIR --http 127.0.0.1:0`, started
# once in the background and killed on exit):
#   1. the official Python SDK client (mcp 2.3.0, interop/py_apps_client.py), declaring
#      io.modelcontextprotocol/ui with `mcp.client.advertise`, in the legacy era and in 2026-07-28:
#      the extension, the tool's link, the view's MIME type, HTML and _meta.ui (read with the SDK's
#      own Apps CSP model), and a plain tool for a client without the extension;
#   2. the MCP Inspector CLI's app probe (@modelcontextprotocol/inspector 2.12.0, `--app-info`,
#      offline): with `--advertise-apps` it must report the app (resourceUri, the MIME type, the
#      CSP, the border, no resource error); without, no app (exit 2: the server degrades);
#   3. a real browser: interop/browser/host.mjs, a minimal MCP Apps host page on 127.0.0.1 (the
#      view on another origin under the CSP built from its _meta.ui), driven by playwright-core in
#      Debian's headless chromium: the view calls search_notes through the host and shows the notes,
#      then searches from its form, with no CSP violation (stdio only: the host is the client).
# Ends with `N passed, M failed`; exit 0 only if nothing failed and every server started.
# Install first: scripts/install-peers.sh.
#
#   interop/apps-peers.sh path/to/notes
set -euo pipefail
cd "$(dirname "$0")/.."
NOTES_ARG="${1:?usage: interop/apps-peers.sh path/to/notes}"
. interop/lib.sh
[ -x "$NOTES_ARG" ] || interop_die "no notes binary at $NOTES_ARG (cargo build -p switchboard-examples --bin notes)"
NOTES="$(cd "$(dirname "$NOTES_ARG")" && pwd)/$(basename "$NOTES_ARG")"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
[ -x "$CHROMIUM_BIN" ] || interop_die "chromium is not installed at $CHROMIUM_BIN; run scripts/install-peers.sh"
[ -d interop/browser/node_modules/playwright-core ] || interop_die "playwright-core is not installed in interop/browser; run scripts/install-peers.sh"
[ -f "$INSPECTOR_CLI_JS" ] || interop_die "the MCP Inspector is not installed at $INSPECTOR_CLI_JS; run scripts/install-peers.sh"
interop_use_node22
WORK="$(mktemp -d)"
HTTP_PID=""
cleanup() {
  if [ -n "$HTTP_PID" ]; then
    kill "$HTTP_PID" 2> /dev/null || true
    wait "$HTTP_PID" 2> /dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/notes" "$WORK/home"
printf '# Hello\n\nThe first note.\n' > "$WORK/notes/hello.md"
printf 'milk, eggs\n' > "$WORK/notes/groceries.md"

# python_client LABEL ARGS...: the Python SDK client's checks, each line counted.
python_client() {
  local label="$1" line
  shift
  local out rc=0
  out="$(timeout 300 "$VENV_PY" interop/py_apps_client.py --note hello "$@" 2> "$WORK/py.err")" || rc=$?
  while IFS= read -r line; do
    case "$line" in
      "PASS "*) pass "$label: ${line#PASS }" ;;
      "FAIL "*) fail "$label: ${line#FAIL }" "" ;;
    esac
  done <<< "$out"
  if ! grep -q '^[0-9]* passed, 0 failed$' <<< "$out"; then
    fail "$label: the Python SDK client ran to its end" "exit $rc; $(tail -c 600 "$WORK/py.err" | tr '\n' ' ')"
  fi
}

# inspector LABEL TARGET...: the Inspector CLI's --app-info probe of search_notes, with and
# without advertising the extension.
inspector() {
  local label="$1" rc=0
  shift
  # HOME: the CLI keeps a catalog file there; a fresh one keeps the run hermetic.
  HOME="$WORK/home" timeout 120 node "$INSPECTOR_CLI_JS" --method tools/call --tool-name search_notes \
    --app-info --advertise-apps "$@" > "$WORK/probe.json" 2> "$WORK/probe.err" || rc=$?
  if [ "$rc" != 0 ]; then
    fail "$label: the Inspector's --app-info --advertise-apps probe reports the app" \
      "exit $rc: $(head -c 300 "$WORK/probe.json") $(tail -c 300 "$WORK/probe.err" | tr '\n' ' ')"
  elif python3 - "$WORK/probe.json" << 'EOF'
import json, sys
info = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
want = {
    "hasApp": True,
    "toolName": "search_notes",
    "resourceUri": "ui://notes/list",
    "resourceMimeType": "text/html;profile=mcp-app",
    "csp": {"connectDomains": [], "resourceDomains": []},
    "prefersBorder": True,
}
bad = {k: info.get(k) for k, v in want.items() if info.get(k) != v}
if "resourceError" in info:
    bad["resourceError"] = info["resourceError"]
print(json.dumps(bad) if bad else "", end="")
sys.exit(1 if bad else 0)
EOF
  then
    pass "$label: the Inspector's --app-info --advertise-apps probe reports the app (ui://notes/list, text/html;profile=mcp-app, CSP with no external origin, a border)"
  else
    fail "$label: the Inspector's --app-info --advertise-apps probe reports the app" "$(head -c 400 "$WORK/probe.json")"
  fi
  rc=0
  HOME="$WORK/home" timeout 120 node "$INSPECTOR_CLI_JS" --method tools/call --tool-name search_notes \
    --app-info "$@" > "$WORK/plain.json" 2> "$WORK/plain.err" || rc=$?
  if [ "$rc" = 2 ] && grep -q '"hasApp":false' "$WORK/plain.json"; then
    pass "$label: without --advertise-apps the Inspector sees no app (the server degrades to a plain tool)"
  else
    fail "$label: without --advertise-apps the Inspector sees no app" \
      "exit $rc: $(head -c 300 "$WORK/plain.json") $(tail -c 300 "$WORK/plain.err" | tr '\n' ' ')"
  fi
}

echo "-- stdio: $NOTES $WORK/notes"
python_client "stdio" -- "$NOTES" "$WORK/notes"
inspector "stdio" "$NOTES" "$WORK/notes"

echo "-- a browser: interop/browser/host.mjs (playwright-core, $CHROMIUM_BIN headless)"
rc=0
CHROMIUM="$CHROMIUM_BIN" timeout 300 node interop/browser/host.mjs "$NOTES" "$WORK/notes" > "$WORK/browser.out" 2> "$WORK/browser.err" || rc=$?
while IFS= read -r line; do
  case "$line" in
    "PASS "*) pass "browser: ${line#PASS }" ;;
    "FAIL "*) fail "browser: ${line#FAIL }" "" ;;
  esac
done < "$WORK/browser.out"
if [ "$rc" != 0 ] || ! grep -q '^[0-9]* passed, 0 failed$' "$WORK/browser.out"; then
  fail "browser: the host ran to its end" "exit $rc; $(tail -c 600 "$WORK/browser.err" | tr '\n' ' ')"
fi

echo "-- Streamable HTTP: $NOTES $WORK/notes --http 127.0.0.1:0"
"$NOTES" "$WORK/notes" --http 127.0.0.1:0 2> "$WORK/http.log" &
HTTP_PID=$!
URL=""
for _ in $(seq 100); do
  URL="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*/mcp' "$WORK/http.log" | head -n 1 | sed 's/^listening on //' || true)"
  [ -n "$URL" ] && break
  kill -0 "$HTTP_PID" 2> /dev/null || break
  sleep 0.1
done
[ -n "$URL" ] || interop_die "'notes --http 127.0.0.1:0' printed no 'listening on' line: $(cat "$WORK/http.log")"
python_client "http" --http "$URL"
inspector "http" "$URL"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]

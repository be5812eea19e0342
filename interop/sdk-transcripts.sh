#!/usr/bin/env bash
# Our recorder and tracer on sessions between the two official SDKs, neither of them ours:
#   1. the TypeScript SDK client (interop/ts-client.mjs, the whole EVERYTHING-SERVER contract)
#      against the Python SDK server (interop/py_everything_server.py), the client spawning
#      `switchboard record -o FILE --stdio "<python server>"` as its stdio server;
#   2. the Python SDK client (mcp 2.3.0, mode="legacy"; a small driver below) against the
#      TypeScript SDK's @modelcontextprotocol/server-everything, through `switchboard record` too.
# Each session's client must succeed through the proxy; then `switchboard trace --json FILE` must
# exit 0 and (checked in python) the recording is non-empty, every frame has kind, primitive and
# phase, every response has refers_to, the summary line is there and it counts 0 violations.
# Ends with `N passed, M failed`; exit 0 only if nothing failed. Install first: scripts/install-peers.sh.
#
#   interop/sdk-transcripts.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_ARG="${1:?usage: interop/sdk-transcripts.sh path/to/switchboard}"
. interop/lib.sh
[ -x "$BIN_ARG" ] || interop_die "no switchboard binary at $BIN_ARG (cargo build --bin switchboard)"
BIN="$(cd "$(dirname "$BIN_ARG")" && pwd)/$(basename "$BIN_ARG")"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
interop_use_node22
SERVER_EVERYTHING="$(interop/run-server-everything.sh)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT


# trace_checks LABEL RECORDING: `switchboard trace --json` over the recording, then the assertions.
trace_checks() {
  local label="$1" rec="$2" rc=0
  if [ ! -s "$rec" ]; then
    fail "$label: recording" "$rec is missing or empty"
    return
  fi
  pass "$label: recording has $(wc -l < "$rec") frames"
  "$BIN" trace --json "$rec" > "$WORK/trace.json" 2> "$WORK/trace.err" || rc=$?
  if [ "$rc" = 0 ]; then
    pass "$label: switchboard trace --json exits 0"
  else
    fail "$label: switchboard trace --json exits 0" "exit $rc $(head -c 300 "$WORK/trace.err")"
  fi
  local verdicts
  verdicts="$(python3 - "$rec" "$WORK/trace.json" << 'EOF'
import json, sys

rec_path, trace_path = sys.argv[1], sys.argv[2]
recorded = [json.loads(l) for l in open(rec_path) if l.strip()]
lines = [json.loads(l) for l in open(trace_path) if l.strip()]
frames = [l for l in lines if "summary" not in l]
summary = lines[-1].get("summary") if lines else None

def verdict(name, ok, why=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + why))

verdict("one trace line per recorded frame, then the summary line",
        summary is not None and len(frames) == len(recorded) == summary.get("frames"),
        f"{len(recorded)} recorded, {len(frames)} traced, summary {json.dumps(summary)[:200]}")
# ts-client.mjs deliberately calls `switchboard/no_such_method` (it must get -32601): not an MCP
# method, so it has no primitive; every other frame must have all three.
bad = [f for f in frames if not (f.get("kind") and f.get("phase")
       and (f.get("primitive") or str(f.get("method")).startswith("switchboard/")))]
verdict("every frame has kind, primitive and phase", not bad, json.dumps(bad[:3]))
responses = [f for f in frames if f.get("kind") in ("response", "error")]
bad = [f for f in responses if f.get("refers_to") is None]
verdict(f"all {len(responses)} responses have refers_to", responses and not bad, json.dumps(bad[:3]))
violations = [f for f in frames if f.get("violations")]
count = (summary or {}).get("violations")
verdict("0 violations", count == 0 and not violations,
        f"summary says {count}; first: " + json.dumps(violations[:3]))
verdict("no request left unanswered", summary is not None and not summary.get("unanswered"),
        f"unanswered indexes {(summary or {}).get('unanswered')}")
methods = {f.get("method") for f in frames}
want = {"initialize", "notifications/initialized", "tools/list", "tools/call", "sampling/createMessage"}
verdict("the session covers " + ", ".join(sorted(want)), want <= methods, f"missing {sorted(want - methods)}")
EOF
  )" || true
  if [ -z "$verdicts" ]; then
    fail "$label: trace assertions" "the checker printed nothing"
    return
  fi
  while IFS= read -r line; do
    case "$line" in
      "PASS "*) pass "$label: ${line#PASS }" ;;
      "FAIL "*) rest="${line#FAIL }" && fail "$label: ${rest%%: *}" "${rest#*: }" ;;
      *) fail "$label: trace assertions" "$line" ;;
    esac
  done <<< "$verdicts"
}

# 1. TypeScript SDK client -> switchboard record -> Python SDK server.
REC1="$WORK/ts-client-py-server.jsonl"
PY_SERVER="$(printf '%q %q --stdio' "$VENV_PY" "$INTEROP_DIR/py_everything_server.py")"
echo "-- TypeScript SDK $SDK_VERSION client -> switchboard record -> Python SDK $PY_MCP_VERSION server (stdio)"
rc=0
timeout 60 node "$INTEROP_DIR/ts-client.mjs" -- "$BIN" record -o "$REC1" --stdio "$PY_SERVER" > "$WORK/client1.log" 2>&1 || rc=$?
summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$WORK/client1.log" | tail -n 1 || true)"
if [ "$rc" = 0 ] && [ -n "$summary" ]; then
  pass "ts-client.mjs through the recorder: $summary"
else
  grep -E '^FAIL' "$WORK/client1.log" | head -n 20 || true
  fail "ts-client.mjs through the recorder" "exit $rc, ${summary:-no summary}: $(tail -n 3 "$WORK/client1.log" | tr '\n' ' ')"
fi
trace_checks "ts->py" "$REC1"

# 2. Python SDK client -> switchboard record -> TypeScript SDK server (server-everything).
REC2="$WORK/py-client-ts-server.jsonl"
echo "-- Python SDK $PY_MCP_VERSION client -> switchboard record -> TypeScript SDK server-everything $SERVER_EVERYTHING_VERSION (stdio)"
rc=0
timeout 60 "$VENV_PY" - "$BIN" "$REC2" "$SERVER_EVERYTHING" > "$WORK/client2.log" 2>&1 << 'EOF' || rc=$?
"""A short session of the official Python SDK Client against server-everything."""
import sys
import warnings

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

warnings.simplefilter("ignore")
BIN, REC, SERVER = sys.argv[1], sys.argv[2], sys.argv[3]
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)[:300]), flush=True)
    failures += 0 if ok else 1


async def on_sampling(context, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="canned reply"), model="m", stop_reason="endTurn"
    )


async def main():
    params = StdioServerParameters(command=BIN, args=["record", "-o", REC, "--stdio", SERVER])
    # mode="legacy": the initialize handshake only. The default mode="auto" first sends the
    # 2026-07-28 `server/discover` probe, which the 2025-11-25 lifecycle forbids before
    # initialize, and trace rightly reports it (LC-1).
    client = Client(
        stdio_client(params), sampling_callback=on_sampling, read_timeout_seconds=15.0, cache=None, mode="legacy"
    )
    async with client as c:
        await c.send_ping()
        check("ping", True)
        tools = {t.name for t in (await c.list_tools(cache_mode="bypass")).tools}
        check("tools/list has echo, get-sum, trigger-sampling-request",
              {"echo", "get-sum", "trigger-sampling-request"} <= tools, sorted(tools))
        r = await c.call_tool("echo", {"message": "hi"})
        check("tools/call echo", [b.text for b in r.content] == ["Echo: hi"], r)
        r = await c.call_tool("get-sum", {"a": 2, "b": 3})
        check("tools/call get-sum", "5" in r.content[0].text, r)
        r = await c.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
        check("tools/call trigger-sampling-request answered by the sampling callback",
              "canned reply" in r.model_dump_json(), r)
        res = await c.list_resources(cache_mode="bypass")
        check("resources/list", len(res.resources) > 0, res)
        r = await c.read_resource(res.resources[0].uri, cache_mode="bypass")
        check("resources/read of the first resource", len(r.contents) == 1, r)
        await c.list_resource_templates(cache_mode="bypass")
        prompts = await c.list_prompts(cache_mode="bypass")
        check("prompts/list has simple-prompt", "simple-prompt" in {p.name for p in prompts.prompts}, prompts)
        r = await c.get_prompt("simple-prompt")
        check("prompts/get simple-prompt", len(r.messages) > 0, r)
        await c.set_logging_level("debug")
        check("logging/setLevel", True)


anyio.run(main)
print(f"{failures} failed")
sys.exit(1 if failures else 0)
EOF
if [ "$rc" = 0 ]; then
  pass "the Python SDK client's session through the recorder ($(grep -c '^PASS' "$WORK/client2.log") checks)"
else
  fail "the Python SDK client's session through the recorder" "exit $rc: $(grep -E '^FAIL|Error|error' "$WORK/client2.log" | head -n 5 | tr '\n' ' ' | cut -c1-500)"
fi
trace_checks "py->ts" "$REC2"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

#!/usr/bin/env bash
# `switchboard pack` against the official MCP Bundle CLI (@anthropic-ai/mcpb, pinned in
# interop/lib.sh): the notes example is packed as a bundle (tools and prompts read from the
# running server, its directory a user_config argument); then
#   * `mcpb validate` accepts the bundle's manifest.json, and refuses it once `author` is removed
#     (so the validation is not a no-op);
#   * `mcpb info` reads the bundle back;
#   * `mcpb unpack` unpacks it, the manifest names the tools and prompts the server lists, and
#     the unpacked binary, started the way the manifest says (user_config filled in), answers
#     tools/list through `switchboard call`.
# Ends with `N passed, M failed`; exit 0 only if nothing failed.
#
#   interop/pack-peers.sh path/to/switchboard path/to/notes
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/pack-peers.sh path/to/switchboard path/to/notes}"
NOTES="${2:?usage: interop/pack-peers.sh path/to/switchboard path/to/notes}"
. interop/lib.sh
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
[ -x "$NOTES" ] || interop_die "no notes binary at $NOTES (cargo build -p switchboard-examples --bin notes)"
interop_use_node22
[ -f "$MCPB_JS" ] || interop_die "the MCPB CLI is not installed at $MCPB_JS; run scripts/install-peers.sh"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/notes-dir" "$WORK/unpacked" "$WORK/run-dir" "$WORK/manifest"

BUNDLE="$WORK/notes.mcpb"
if ! timeout 60 "$BIN" pack --stdio "$NOTES $WORK/notes-dir" --user-arg notes_dir:directory \
  --author "Switchboard examples" -o "$BUNDLE" 2> "$WORK/pack.err"; then
  cat "$WORK/pack.err" >&2
  interop_die "switchboard pack failed"
fi
pass "switchboard pack wrote the notes bundle: $(tail -1 "$WORK/pack.err")"

interop_mcpb_check "$BUNDLE" "$WORK/manifest"
python3 - "$WORK/manifest/manifest.json" "$WORK/no-author.json" << 'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
del m["author"]
json.dump(m, open(sys.argv[2], "w"))
EOF
if mcpb validate "$WORK/no-author.json" > "$WORK/neg.out" 2>&1; then
  fail "mcpb validate refuses a manifest without author" "it passed: $(cat "$WORK/neg.out")"
else
  pass "mcpb validate refuses a manifest without author"
fi


if ! out="$(mcpb unpack "$BUNDLE" "$WORK/unpacked" 2>&1)"; then
  fail "mcpb unpack unpacks the bundle" "$out"
else
  pass "mcpb unpack unpacks the bundle"
  # The manifest's tools and prompts are those the server lists; the command it names, with
  # user_config filled in, starts the unpacked binary, which answers.
  listed="$(timeout 60 "$BIN" call --stdio "$NOTES $WORK/notes-dir" tools/list)"
  prompts="$(timeout 60 "$BIN" call --stdio "$NOTES $WORK/notes-dir" prompts/list)"
  if python3 - "$WORK/unpacked/manifest.json" "$listed" "$prompts" << 'EOF'; then
import json, sys
m = json.load(open(sys.argv[1]))
tools = sorted(t["name"] for t in json.loads(sys.argv[2])["tools"])
prompts = sorted(p["name"] for p in json.loads(sys.argv[3])["prompts"])
assert sorted(t["name"] for t in m["tools"]) == tools, (m["tools"], tools)
assert sorted(p["name"] for p in m["prompts"]) == prompts, (m["prompts"], prompts)
assert tools == ["add_note", "search_notes"] and prompts == ["summarize_notes"], (tools, prompts)
assert m["server"]["type"] == "binary" and m["user_config"]["notes_dir"]["type"] == "directory"
EOF
    pass "the manifest lists the server's tools (add_note, search_notes) and prompt (summarize_notes)"
  else
    fail "the manifest lists the server's tools and prompts" "see above"
  fi
  cmd="$(python3 - "$WORK/unpacked" "$WORK/run-dir" << 'EOF'
import json, shlex, sys
root, run_dir = sys.argv[1], sys.argv[2]
c = json.load(open(root + "/manifest.json"))["server"]["mcp_config"]
def fill(s):
    return s.replace("${__dirname}", root).replace("${user_config.notes_dir}", run_dir)
print(" ".join(shlex.quote(fill(w)) for w in [c["command"], *c["args"]]))
EOF
)"
  if out="$(timeout 60 "$BIN" call --stdio "$cmd" tools/list 2>&1)" && echo "$out" | grep -q '"add_note"'; then
    pass "the unpacked binary, started as the manifest says, answers tools/list"
  else
    fail "the unpacked binary, started as the manifest says, answers tools/list" "$out"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

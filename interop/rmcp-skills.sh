#!/usr/bin/env bash
# Skills (SEP-2640) across implementations: the official Rust SDK (rmcp 3.11, feature
# `skills-fs`; interop/rmcp-skills/, its own Cargo project with its own lockfile, outside the
# workspace) against ours, over stdio.
#
#   interop/rmcp-skills.sh SWITCHBOARD_BIN
#
# 1. rmcp's SkillCatalog serves a folder of skills; `switchboard call skills/list` lists it and
#    `switchboard skills pull` (legacy era, then auto) writes each skill verified, and the
#    written tree is byte for byte the folder's.
#    `switchboard check` against rmcp's server: every skills rule (SK-*) passes.
# 2. rmcp's client against `switchboard serve --skills` (the example skills): lists our skills, checks every entry with rmcp's
#    `Skill::validate`, gets each with skills/get, reads every file and verifies it with rmcp's
#    `SkillResource::verify`, reads each skill's directory.
# Exit 0 only if every step passed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
BIN="${1:?usage: interop/rmcp-skills.sh SWITCHBOARD_BIN}"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN"

PEER_TARGET="$INTEROP_REPO/target/rmcp-skills"
CARGO_TARGET_DIR="$PEER_TARGET" cargo build --locked --quiet --manifest-path "$INTEROP_DIR/rmcp-skills/Cargo.toml" ||
  interop_die "cannot build the rmcp skills peer (interop/rmcp-skills)"
PEER="$PEER_TARGET/debug/rmcp-skills-peer"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/skills/pdf-processing/references/forms" "$work/skills/acme/billing/refunds/templates"
printf -- '---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  version: "2.1"\n---\n\n# PDF processing\n\nSee references/GUIDE.md.\n' > "$work/skills/pdf-processing/SKILL.md"
printf '# Guide\n' > "$work/skills/pdf-processing/references/GUIDE.md"
printf 'Name: ____\n' > "$work/skills/pdf-processing/references/forms/w9.md"
printf '\x00\x9f\x92\x96' > "$work/skills/pdf-processing/logo.bin"
printf -- '---\nname: refunds\ndescription: Process refunds per policy\n---\nUse templates/.\n' > "$work/skills/acme/billing/refunds/SKILL.md"
printf 'Approved.\n' > "$work/skills/acme/billing/refunds/templates/approved.md"

failed=0
step() { echo "$1"; }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

listed="$("$BIN" call --stdio "$PEER serve $work/skills" skills/list)" || bad "switchboard call skills/list against rmcp"
echo "$listed" | grep -q '"uri": "skill://acme/billing/refunds/SKILL.md"' &&
  echo "$listed" | grep -q '"uri": "skill://pdf-processing/SKILL.md"' &&
  step "PASS switchboard call skills/list against rmcp: both skills listed" || bad "skills/list against rmcp: $listed"

for era in legacy auto; do
  for skill in pdf-processing:pdf-processing refunds:acme/billing/refunds; do
    name="${skill%%:*}" path="${skill#*:}"
    out="$work/out-$era/$name"
    mkdir -p "$work/out-$era"
    if "$BIN" skills pull --era "$era" --stdio "$PEER serve $work/skills" "$name" "$out" > /dev/null 2> "$work/pull.log" &&
      diff -r "$work/skills/$path" "$out" > /dev/null 2>&1; then
      step "PASS switchboard skills pull ($era) $name from rmcp: verified, identical to the folder"
    else
      bad "switchboard skills pull ($era) $name from rmcp: $(cat "$work/pull.log")"
    fi
  done
done

"$BIN" check --stdio "$PEER serve $work/skills" > "$work/check.txt" 2> /dev/null || true
sk_pass="$(grep -c '^pass \[SK-' "$work/check.txt" || true)"
sk_other="$(grep '\[SK-' "$work/check.txt" | grep -vc '^pass ' || true)"
if [ "$sk_pass" -ge 7 ] && [ "$sk_other" = 0 ]; then
  step "PASS switchboard check against rmcp's server: $sk_pass skills rules (SK-*) pass, none fails or skips"
else
  bad "switchboard check against rmcp's server: $(grep '\[SK-' "$work/check.txt")"
fi

if report="$("$PEER" client "$BIN" serve --skills 2> "$work/client.log")" && echo "$report" | grep -q '"filesVerified":[1-9]'; then
  step "PASS rmcp's client against switchboard serve --skills: $report"
else
  bad "rmcp's client against switchboard serve --skills: $report $(tail -n 5 "$work/client.log")"
fi

[ "$failed" = 0 ] || { echo "rmcp skills interop: $failed failed"; exit 1; }
echo "rmcp skills interop: all passed"

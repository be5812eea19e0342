#!/usr/bin/env python3
"""Every security MUST has a test named after its tag, or a reason it does not apply.

The rules: each `[SEC-*]` line of SECURITY-NOTES.md that says MUST (or MUST NOT), and each
`[EL-n]` / `[SF-n]` rule of SPEC-NOTES.md (elicitation, server features) whose sentence says
MUST. A rule is covered when a test function's name carries its tag in snake case
(`sec_tp_1`, `el_2`, `sf_6`, between underscores or at an end), in any Rust file of the
repository (tests are found by their `#[test]` / `#[tokio::test]` attribute), or when
docs/SECURITY.md gives it a row in its table of rules that do not apply to us or are covered
otherwise: `| SEC-CD-1 | reason |` (the reason not empty).

Usage: scripts/security-rules.py [--shared DIR] [--list]
Exits 1 and names every rule with neither, or a docs row naming a tag that is no rule.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shared_dir(arg):
    for d in [arg, os.environ.get("SWITCHBOARD_SHARED_DIR"), os.path.join(ROOT, "..", "shared")]:
        if d and os.path.isfile(os.path.join(d, "spec", "SECURITY-NOTES.md")):
            return d
    sys.exit("security-rules: the spec notes are not found (give --shared DIR or set "
             "SWITCHBOARD_SHARED_DIR)")


def must_rules(shared):
    """(tag, text) for every MUST rule, in the order of the notes."""
    rules = []
    seen = set()
    text = open(os.path.join(shared, "spec", "SECURITY-NOTES.md"), encoding="utf-8").read()
    for line in text.splitlines():
        m = re.match(r"^- \[(SEC-[A-Z]+-\d+)\]\s*(.*)", line)
        if m and "MUST" in m.group(2) and m.group(1) not in seen:
            seen.add(m.group(1))
            rules.append((m.group(1), m.group(2)))
    text = open(os.path.join(shared, "spec", "SPEC-NOTES.md"), encoding="utf-8").read()
    # A tag's sentence: the text from the previous sentence end (or tag) up to the tag.
    for m in re.finditer(r"`\[((?:EL|SF)-\d+)\]`", text):
        tag = m.group(1)
        start = max(text.rfind(". ", 0, m.start()), text.rfind("\n\n", 0, m.start()),
                    text.rfind("]`", 0, m.start()), text.rfind("\n|", 0, m.start()))
        sentence = text[start:m.start()]
        row = text[m.start():text.find("\n", m.start())]
        if tag not in seen and ("MUST" in sentence or "MUST" in row):
            seen.add(tag)
            rules.append((tag, re.sub(r"\s+", " ", (sentence + row)).strip(" .|`")[:160]))
    return rules


TEST_FN = re.compile(r"#\[(?:tokio::)?test[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:async\s+)?fn\s+([a-z0-9_]+)")


def test_names():
    names = {}
    for base in ["crates", "tests", "examples", "conformance", "fuzz"]:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, base)):
            dirnames[:] = [d for d in dirnames if d not in ("target", "node_modules")]
            for f in files:
                if f.endswith(".rs"):
                    p = os.path.join(dirpath, f)
                    for n in TEST_FN.findall(open(p, encoding="utf-8", errors="replace").read()):
                        names.setdefault(n, os.path.relpath(p, ROOT))
    return names


def justified():
    path = os.path.join(ROOT, "docs", "SECURITY.md")
    rows = {}
    if os.path.isfile(path):
        for line in open(path, encoding="utf-8"):
            m = re.match(r"^\|\s*`?\[?((?:SEC-[A-Z]+|EL|SF)-\d+)\]?`?\s*\|\s*(.*?)\s*\|\s*$", line)
            if m and m.group(2):
                rows[m.group(1)] = m.group(2)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    rules = must_rules(shared_dir(args.shared))
    names = test_names()
    rows = justified()
    missing = []
    tested = 0
    for tag, text in rules:
        snake = tag.lower().replace("-", "_")
        pat = re.compile(r"(^|_)%s(_|$)" % re.escape(snake))
        hits = sorted(n for n in names if pat.search(n))
        if hits:
            tested += 1
            where = f"tested: {hits[0]} ({names[hits[0]]})" + (f" +{len(hits) - 1}" if len(hits) > 1 else "")
        elif tag in rows:
            where = "justified: " + rows[tag][:90]
        else:
            where = "MISSING"
            missing.append((tag, text))
        if args.list:
            print(f"{tag:12} {where}")
    tags = {t for t, _ in rules}
    stray = sorted(t for t in rows if t not in tags)
    print(f"security rules: {len(rules)} MUST rules, {tested} with a test named after the tag, "
          f"{len(rules) - tested - len(missing)} justified in docs/SECURITY.md, {len(missing)} with neither")
    for tag, text in missing:
        print(f"  missing {tag}: {text}")
    for t in stray:
        print(f"  docs/SECURITY.md names {t}, which is no MUST rule of the notes")
    if missing or stray:
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Counts the public surface of the `switchboard` facade, from rustdoc's HTML.

The facade re-exports library crates (`pub use switchboard_x as x;`, each behind its feature).
Their public items are what a user of `switchboard` can name: every item rustdoc lists in the
`all.html` of those crates and of the facade (structs, enums, traits, functions, type aliases,
constants, statics, macros, unions; pages an older build left behind are not listed, redirect
pages not counted). An item that another crate re-exports, and rustdoc inlines there, is
counted once: same kind, name and declaration. Public methods are the inherent methods and
associated functions on those pages (trait implementations and trait methods are not counted:
they are the traits' surface). Items marked `#[doc(hidden)]`, which rustdoc does not list but a
user can still name, are counted from the sources of every crate but the wire types.

The figure is what a user of the facade with every one of its features can name. A workspace
doc build unifies features the facade does not offer (the server's `fuzzing`, which only the
fuzz targets turn on), so `--build` first documents the facade and the crates it re-exports on
their own, with every facade feature (`cargo doc --no-deps -p switchboard -p ... --features
switchboard/...`), into the same folder; scripts/test-all.sh counts that way.

Usage: scripts/public-surface.py [--build] [--doc DIR] [--max-items N] [--max-methods N]
                                 [--by-crate] [--list]
Without `--build`, reads the HTML the last `cargo doc` wrote under DIR (default: the target
folder's `doc`, `$CARGO_TARGET_DIR/doc` when set).
Exits 1 when a maximum is given and exceeded, so that the surface only grows on purpose.

The semver baseline (issue 31: a checked public API, the cheap equivalent of
cargo-semver-checks): `--write-baseline FILE` records every counted item's declaration and every
counted method's signature, with the workspace version; `--baseline FILE` exits 1 when an item
or method of the baseline was removed or changed while the version in the workspace Cargo.toml
is still the baseline's. Additions are free; so are lines added to the declaration of a
`#[non_exhaustive]` item (a field, a variant), and provided methods added to a trait. After a version bump, write the baseline again.
"""

import argparse
import html as htmllib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("struct", "enum", "trait", "fn", "type", "constant", "static", "macro", "union",
         "derive", "attr", "traitalias")
PAGE = re.compile(r"^(%s)\.[A-Za-z0-9_]+\.html$" % "|".join(KINDS))


def reexported_crates():
    """The crates the facade re-exports, read from its lib.rs, and the facade itself."""
    text = open(os.path.join(ROOT, "crates/switchboard/src/lib.rs"), encoding="utf-8").read()
    names = set(re.findall(r"^\s*pub use (switchboard_[a-z_]+)(?: as [a-z_]+|::)", text, re.M))
    return ["switchboard"] + sorted(names)


def facade_features():
    """Every feature of the facade but `default`, read from its Cargo.toml."""
    text = open(os.path.join(ROOT, "crates/switchboard/Cargo.toml"), encoding="utf-8").read()
    section = re.search(r"^\[features\]\n(.*?)(?=^\[)", text, re.M | re.S).group(1)
    return [f for f in re.findall(r"^([a-z0-9_-]+)\s*=", section, re.M) if f != "default"]


def build_docs():
    """Documents the facade and the crates it re-exports with every facade feature, and only
    those (no feature another workspace member turns on)."""
    cmd = ["cargo", "doc", "--no-deps", "--features",
           ",".join("switchboard/" + f for f in facade_features())]
    for krate in reexported_crates():
        cmd += ["-p", krate.replace("_", "-")]
    subprocess.run(cmd, cwd=ROOT, check=True)


DECL = re.compile(r'<pre class="rust item-decl">(.*?)</pre>', re.S)
METHOD = re.compile(r'<section id="method\.([^"]+)" class="method">.*?<h4 class="code-header">(.*?)</h4>', re.S)


def text_of(fragment):
    """HTML to its text, whitespace collapsed per line (a declaration's lines kept apart)."""
    # rustdoc's toggle on a long declaration ("Show 16 fields") is no part of it.
    fragment = re.sub(r"<summary[^>]*>.*?</summary>", "", fragment, flags=re.S)
    text = htmllib.unescape(re.sub(r"<[^>]+>", "", fragment))
    lines = [" ".join(l.split()) for l in text.splitlines()]
    return [l for l in lines if l]


def count_crate(doc, krate, seen, listed=None, api=None):
    """Counts one crate's item pages and their inherent methods; an item already counted (a
    re-export another crate's docs inline, found by its kind, name and declaration) is not
    counted again."""
    items = 0
    methods = 0
    base = os.path.join(doc, krate)
    listing = os.path.join(base, "all.html")
    if not os.path.isfile(listing):
        sys.exit(f"public-surface: no rustdoc output for {krate} under {doc}; run "
                 "`cargo doc --workspace --no-deps` first")
    # rustdoc's list of every item of the crate, written anew by each build (pages of items
    # that no longer exist may stay behind in the folder; they are not in the list).
    pages = sorted(set(re.findall(r'<a href="([^"#]+\.html)"',
                                  open(listing, encoding="utf-8").read())))
    for rel in pages:
        name = os.path.basename(rel)
        if not PAGE.match(name):
            continue
        path = os.path.normpath(os.path.join(base, rel))
        if not os.path.isfile(path):
            continue
        html = open(path, encoding="utf-8", errors="replace").read()
        if "<title>Redirection</title>" in html or 'http-equiv="refresh"' in html:
            continue
        # The same item inlined in another crate's docs has the same kind, name and
        # declaration (its source link is not always written, so it is no key).
        decl = DECL.search(html)
        key = (name, re.sub(r"<[^>]+>", "", decl.group(1)) if decl else path)
        if key in seen:
            continue
        seen.add(key)
        items += 1
        if listed is not None:
            kind, item = name[:-len(".html")].split(".", 1)
            module = os.path.dirname(rel).replace("/", "::")
            listed.append((krate, kind, f"{module}::{item}" if module else item))
        inherent = html
        cut = html.find('id="trait-implementations"')
        if cut >= 0:
            inherent = html[:cut]
        kind, item = name[:-len(".html")].split(".", 1)
        module = os.path.dirname(rel).replace("/", "::")
        path_key = f"{krate}::{module + '::' if module else ''}{item} ({kind})"
        if api is not None:
            api["items"][path_key] = text_of(decl.group(1)) if decl else []
        if name.startswith("trait."):
            # A trait's required and provided methods are the trait's, counted as one item.
            continue
        methods += len(re.findall(r'<section id="method\.[^"]+" class="method"', inherent))
        if api is not None:
            for mname, sig in METHOD.findall(inherent):
                api["methods"].setdefault(f"{path_key}::{mname}", []).append(" ".join(text_of(sig)))
    return items, methods


HIDDEN = re.compile(r"#\[doc\(hidden\)\]\s*(?:#\[[^\]]*\]\s*)*pub (mod|fn|struct|enum|trait|type|const|static|use|async fn)\s+([A-Za-z0-9_]+)")


def hidden_items(krate, listed=None):
    """rustdoc lists no `#[doc(hidden)]` item, yet users can name them: counted from the sources
    (a hidden `pub mod` counts each `pub` item declared directly in it)."""
    src = os.path.join(ROOT, "crates", krate.replace("_", "-"), "src")
    count = 0
    for folder, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(folder, f)
            text = open(path, encoding="utf-8").read()
            for m in HIDDEN.finditer(text):
                kind, name = m.groups()
                if kind == "mod":
                    body = text[m.end():]
                    end = body.find("\n}")
                    inner = re.findall(r"^    pub (?:async )?(fn|struct|enum|trait|type|const|static|use)\s+([A-Za-z0-9_]+)",
                                       body[:end], re.M)
                    names = [(k, f"{name}::{n}") for k, n in inner]
                else:
                    names = [(kind, name)]
                for k, n in names:
                    count += 1
                    if listed is not None:
                        listed.append((krate, "hidden-" + k, n))
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    ap.add_argument("--doc", default=os.path.join(target, "doc"))
    ap.add_argument("--build", action="store_true",
                    help="document the facade and its crates with the facade's features first")
    ap.add_argument("--max-items", type=int)
    ap.add_argument("--max-methods", type=int)
    ap.add_argument("--by-crate", action="store_true")
    ap.add_argument("--write-baseline", metavar="FILE",
                    help="record every counted item's declaration and method's signature")
    ap.add_argument("--baseline", metavar="FILE",
                    help="fail when an item of FILE was removed or changed without a version bump")
    ap.add_argument("--list", action="store_true",
                    help="print each counted item: crate, kind, path inside the crate")
    args = ap.parse_args()
    if args.build:
        build_docs()
    total_items = total_methods = 0
    seen = set()
    api = {"items": {}, "methods": {}} if (args.baseline or args.write_baseline) else None
    # The defining crates first, so that an item is counted where it is defined.
    crates = reexported_crates()
    crates = [c for c in crates if c != "switchboard"] + ["switchboard"]
    base = ["switchboard_types", "switchboard_jsonrpc", "switchboard_tasks", "switchboard_auth",
            "switchboard_transport"]
    order = sorted(crates[:-1], key=lambda c: (base.index(c) if c in base else len(base), c))
    for krate in order + crates[-1:]:
        listed = [] if args.list else None
        items, methods = count_crate(args.doc, krate, seen, listed, api)
        if krate != "switchboard_types":
            items += hidden_items(krate, listed)
        for row in listed or ():
            print("%-28s %-9s %s" % row)
        total_items += items
        total_methods += methods
        if args.by_crate:
            print(f"{krate:32} {items:5} items {methods:5} methods")
    print(f"facade surface: {total_items} public items, {total_methods} public methods")
    if args.write_baseline:
        with open(args.write_baseline, "w", encoding="utf-8") as f:
            json.dump({"version": workspace_version(), "items": api["items"],
                       "methods": api["methods"]}, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"public-surface: baseline written to {args.write_baseline}")
    if args.baseline:
        broken = semver_breaks(json.load(open(args.baseline, encoding="utf-8")), api)
        if broken:
            for b in broken[:50]:
                print(f"  {b}", file=sys.stderr)
            sys.exit(f"public-surface: {len(broken)} item(s) of the baseline removed or changed, "
                     f"and the workspace version is still the baseline's; bump the version (and "
                     f"write the baseline again: --write-baseline {args.baseline}), or keep them")
        print("public-surface: nothing of the baseline removed or changed")
    over = []
    if args.max_items is not None and total_items > args.max_items:
        over.append(f"{total_items} items > {args.max_items}")
    if args.max_methods is not None and total_methods > args.max_methods:
        over.append(f"{total_methods} methods > {args.max_methods}")
    if over:
        sys.exit("public-surface: the facade's surface grew past its ceiling (" + "; ".join(over)
                 + "); seal what users need not name, or raise the ceiling on purpose")


def workspace_version():
    """`version` of `[workspace.package]` in the root Cargo.toml (every crate shares it)."""
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[)", text, re.M | re.S).group(1)
    return re.search(r'^version\s*=\s*"([^"]+)"', section, re.M).group(1)


def gained_provided(old, new):
    """Whether trait declaration `new` is `old` with provided methods added (each with a default
    body, under rustdoc's `// Provided methods`): a minor change in Cargo's SemVer reference
    ("adding a defaulted trait item"), since every implementor still builds."""
    def marker(lines):
        """Where rustdoc's `// Provided method(s)` line is, if anywhere."""
        return next((i for i, l in enumerate(lines) if l.startswith("// Provided method")), None)

    cut, ocut = marker(new), marker(old)
    if cut is None or not (old and old[0].startswith("pub trait")):
        return False
    if ocut is not None:
        rest = iter(new[cut + 1:])
        return new[:cut] == old[:ocut] and all(line in rest for line in old[ocut + 1:])
    return new[:cut] == old[:-1] and new[-1] == old[-1]


def semver_breaks(baseline, api):
    """What of `baseline` is gone or changed in `api`, when the version was not bumped."""
    if baseline.get("version") != workspace_version():
        return []
    broken = []
    for key, old in baseline["items"].items():
        new = api["items"].get(key)
        if new is None:
            broken.append(f"removed: {key}")
        elif new != old:
            # A #[non_exhaustive] item may gain lines (fields, variants): only lost ones count.
            grown = "#[non_exhaustive]" in " ".join(old) and set(old) <= set(new)
            if not grown and not gained_provided(old, new):
                broken.append(f"changed: {key}: {' '.join(old)[:200]}")
    for key, old in baseline["methods"].items():
        new = api["methods"].get(key)
        if new is None:
            broken.append(f"removed: {key}")
        elif sorted(new) != sorted(old):
            broken.append(f"changed: {key}: {' | '.join(old)[:200]}")
    return broken


def self_test():
    """The baseline check on made-up surfaces: what must fail fails, what may pass passes."""
    v = workspace_version()
    old = {"version": v,
           "items": {"k::A (struct)": ["#[non_exhaustive]pub struct A {", "pub a: u8,", "}"],
                     "k::T (trait)": ["pub trait T {", "// Required methods", "fn a(&self);", "}"],
                     "k::B (struct)": ["pub struct B {", "pub b: u8,", "}"],
                     "k::f (fn)": ["pub fn f()"]},
           "methods": {"k::A (struct)::new": ["pub fn new() -> A"]}}
    same = {"items": dict(old["items"]), "methods": dict(old["methods"])}
    cases = [
        ("unchanged", same, 0),
        ("an item added", {"items": {**same["items"], "k::g (fn)": ["pub fn g()"]},
                           "methods": same["methods"]}, 0),
        ("a field added to a non_exhaustive struct",
         {"items": {**same["items"], "k::A (struct)": ["#[non_exhaustive]pub struct A {",
                                                       "pub a: u8,", "pub c: u8,", "}"]},
          "methods": same["methods"]}, 0),
        ("a field added to an exhaustive struct",
         {"items": {**same["items"], "k::B (struct)": ["pub struct B {", "pub b: u8,",
                                                       "pub c: u8,", "}"]},
          "methods": same["methods"]}, 1),
        ("an item removed", {"items": {k: d for k, d in same["items"].items() if k != "k::f (fn)"},
                             "methods": same["methods"]}, 1),
        ("a method's signature changed",
         {"items": same["items"], "methods": {"k::A (struct)::new": ["pub fn new(x: u8) -> A"]}}, 1),
        ("a method removed", {"items": same["items"], "methods": {}}, 1),
        ("a provided method added to a trait",
         {"items": {**same["items"], "k::T (trait)": ["pub trait T {", "// Required methods",
                                                      "fn a(&self);", "// Provided method",
                                                      "fn b(&self) { ... }", "}"]},
          "methods": same["methods"]}, 0),
        ("a required method added to a trait",
         {"items": {**same["items"], "k::T (trait)": ["pub trait T {", "// Required methods",
                                                      "fn a(&self);", "fn c(&self);", "}"]},
          "methods": same["methods"]}, 1),
    ]
    failures = [f"{name}: {len(semver_breaks(old, api))} breaks, want {want}"
                for name, api, want in cases if len(semver_breaks(old, api)) != want]
    bumped = dict(old, version=v + "-older")
    if semver_breaks(bumped, {"items": {}, "methods": {}}):
        failures.append("after a version bump nothing counts")
    if failures:
        sys.exit("public-surface self-test: " + "; ".join(failures))
    print(f"public-surface self-test: {len(cases) + 1} cases passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        main()

#!/usr/bin/env python3
"""The public API of the `rntuple` crate (default features, without `unstable`), one item per line,
from rustdoc's JSON output (`rustdoc --output-format json`, unstable: through .ci/rustdoc-unstable): every item reachable from the crate
root through public modules and re-exports, each under every path it can be named by; inherent and
trait-impl methods, associated constants and types, struct fields and enum variants under their type.
Items hidden from the docs (`#[doc(hidden)]`: what the derive macro's expansions call) are not API.

    python3 .ci/public_api.py            # writes crates/rntuple/public-api.txt
    python3 .ci/public_api.py --check    # `make lint`: fails when the API differs from that file, or when
                                         # a module, type, trait or function has no example in its docs
    python3 .ci/public_api.py --json F   # lists the API of an existing rustdoc JSON file F

The check makes a change of the public surface a visible change of the file, reviewed with the code.
"""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIST = ROOT / "crates" / "rntuple" / "public-api.txt"
# The workspace's own target directory and toolchain: the dependencies' metadata is the one `make lint`'s clippy
# just checked (a nightly toolchain or a target directory of its own checked them all again: 160 s -> ~60 s).
TARGET = pathlib.Path(os.environ.get("RNTUPLE_API_TARGET", ROOT / "target"))


def rustdoc_json(root=ROOT, target=TARGET):
    env = dict(os.environ, RUSTDOC=str(ROOT / ".ci" / "rustdoc-unstable"), RUSTDOCFLAGS="-Z unstable-options --output-format json -D warnings")
    # --release: the dev profile's `package."*"` opt-level 2 also optimizes the proc macros and build scripts
    # (the release profile does not): 288 -> 160 s from scratch (bench/RESULTS.md). The JSON is the same.
    cmd = ["cargo", "doc", "--quiet", "--release", "--no-deps", "-p", "rntuple", "--lib", "--target-dir", str(target)]
    subprocess.run(cmd, cwd=root, env=env, check=True)
    return json.loads((target / "doc" / "rntuple.json").read_text())


KINDS = ["module", "struct", "enum", "trait", "function", "constant", "static", "type_alias", "macro", "union",
         "proc_macro", "trait_alias", "struct_field", "variant", "assoc_const", "assoc_type", "use", "impl", "primitive"]


def kind_of(item):
    inner = item.get("inner", {})
    for k in KINDS:
        if k in inner:
            return k, inner[k]
    return next(iter(inner.items()), ("?", None))


# The kinds of item that are documented with an example of their own (members are shown in their type's).
EXAMPLE_KINDS = ("module", "struct", "enum", "trait", "function", "type_alias", "constant", "macro")


def listing(doc, examples=None):
    """The public API, one line per item; with a dict `examples`, also fills it with `path: has an
    example` for every item of EXAMPLE_KINDS."""
    index = doc["index"]
    crate_id = doc.get("root")
    out = set()
    seen = set()

    def label(kind):
        return {"type_alias": "type", "struct_field": "field", "assoc_const": "const", "assoc_type": "type", "function": "fn"}.get(kind, kind)

    def walk(item_id, path):
        item = index.get(str(item_id)) if not isinstance(item_id, str) else index.get(item_id)
        if item is None:
            return
        if (str(item_id), path) in seen:
            return
        seen.add((str(item_id), path))
        kind, inner = kind_of(item)
        if kind == "use":
            target = inner.get("id")
            if target is None or str(target) not in index:
                out.add(f"pub use {path} (external: {inner.get('source')})")
                return
            if inner.get("is_glob"):
                t_item = index[str(target)]
                tk, ti = kind_of(t_item)
                for child in (ti or {}).get("items", []):
                    c = index.get(str(child))
                    if c is not None and c.get("visibility") == "public" and c.get("name"):
                        walk(child, f"{path}::{c['name']}")
                return
            walk(target, path)
            return
        out.add(f"{label(kind)} {path}")
        if examples is not None and kind in EXAMPLE_KINDS:
            examples[path] = "```" in (item.get("docs") or "")
        if kind == "module":
            for child in inner.get("items", []):
                c = index.get(str(child))
                if c is None or c.get("visibility") != "public":
                    continue
                ck, ci = kind_of(c)
                name = ci.get("name") if ck == "use" else c.get("name")
                if name:
                    walk(child, f"{path}::{name}")
        elif kind in ("struct", "enum", "union", "trait"):
            kind_inner = inner.get("kind", {})
            fields = []
            if isinstance(kind_inner, dict):
                plain = kind_inner.get("plain")
                if isinstance(plain, dict):
                    fields = plain.get("fields", [])
                tup = kind_inner.get("tuple")
                if isinstance(tup, list):
                    fields = [f for f in tup if f is not None]
            for f in fields:
                fi = index.get(str(f))
                if fi is not None and fi.get("visibility") == "public":
                    out.add(f"field {path}::{fi.get('name')}")
            for v in inner.get("variants", []):
                vi = index.get(str(v))
                if vi is not None:
                    out.add(f"variant {path}::{vi.get('name')}")
            if kind == "trait":
                for m in inner.get("items", []):
                    mi = index.get(str(m))
                    if mi is not None:
                        mk, _ = kind_of(mi)
                        out.add(f"{label(mk)} {path}::{mi.get('name')}")
            for impl_id in inner.get("impls", []):
                impl = index.get(str(impl_id))
                if impl is None:
                    continue
                _, ii = kind_of(impl)
                if ii is None or ii.get("is_synthetic") or ii.get("blanket_impl") is not None:
                    continue
                trait = ii.get("trait")
                if trait is not None:
                    out.add(f"impl {trait.get('path')} for {path}")
                    continue
                for m in ii.get("items", []):
                    mi = index.get(str(m))
                    if mi is None or mi.get("visibility") != "public":
                        continue
                    mk, _ = kind_of(mi)
                    out.add(f"{label(mk)} {path}::{mi.get('name')}")

    walk(crate_id, "rntuple")
    return sorted(out)


def summary(lines):
    """'N lines: I items (modules, types, functions, constants), M members (methods, fields, variants),
    T trait impls'."""
    entries = [line.split(" ", 1) for line in lines]
    types = {p for k, p in entries if k in ("struct", "enum", "trait", "union", "type")}
    impls = sum(1 for k, _ in entries if k == "impl")
    members = sum(1 for k, p in entries if k != "impl" and (k in ("field", "variant") or p.rsplit("::", 1)[0] in types))
    items = len(entries) - impls - members
    return f"{len(entries)} lines: {items} items (modules, types, functions, constants), {members} members (methods, fields, variants), {impls} trait impls"


def main(argv):
    if "--json" in argv:
        doc = json.loads(pathlib.Path(argv[argv.index("--json") + 1]).read_text())
        lines = listing(doc)
        print("\n".join(lines))
        print(f"public API: {summary(lines)}", file=sys.stderr)
        return 0
    examples = {}
    lines = listing(rustdoc_json(), examples)
    text = "".join(line + "\n" for line in lines)
    without = sorted(path for path, has in examples.items() if not has)
    if without:
        print("public API: items documented without an example (a ``` block in their doc comment):\n  "
              + "\n  ".join(without), file=sys.stderr)
    if "--check" in argv:
        old = LIST.read_text() if LIST.exists() else ""
        if old != text:
            import difflib

            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(LIST), "the code's public API"))
            print(f"\npublic API: {LIST.relative_to(ROOT)} differs from the code: review the change, then run "
                  "`python3 .ci/public_api.py` to update the list", file=sys.stderr)
            return 1
        if without:
            return 1
        print(f"public API: {summary(lines)}, each item with an example, as listed in {LIST.relative_to(ROOT)}")
        return 0
    LIST.write_text(text)
    print(f"public API: {summary(lines)}; written to {LIST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

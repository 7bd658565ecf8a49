#!/usr/bin/env python3
"""Layout rules of the code base, checked by `make lint`:

1. no source file under crates/*/src or python/src is longer than 800 lines;
2. the module import graph of crates/rntuple/src (file level, test modules and comments left
   out, `pub use` re-exports counted) has no cycle;
3. nothing under crates/rntuple/src/write imports crate::read or crate::ops (the writer does not
   know the reader; merge and skim sit above both).

Exits non-zero naming every violation.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "crates" / "rntuple" / "src"
MAX_LINES = 800


def code_of(path):
    """The file's text without its test module, comments and string literals."""
    text = path.read_text()
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod \w+", text, re.M)
    if m:
        text = text[: m.start()]
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def module_of(path):
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def file_of(parts):
    """The file defining module `parts` (or the longest prefix of it that is a module)."""
    for k in range(len(parts), -1, -1):
        p = parts[:k]
        for cand in ([SRC.joinpath(*p).with_suffix(".rs")] if p else []) + [SRC.joinpath(*p, "mod.rs")] + ([] if p else [SRC / "lib.rs"]):
            if cand.is_file():
                return cand
    return None


def expand(prefix, body):
    """`a::{b, c::{d, e}}` -> paths."""
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    paths = []
    for item in filter(None, out):
        m = re.match(r"([\w:]*?)::\{(.*)\}$", item, re.S)
        if m:
            paths += expand(prefix + m.group(1).split("::"), m.group(2))
        else:
            paths.append(prefix + [x for x in item.split(" as ")[0].split("::") if x])
    return paths


def imports(path):
    code = code_of(path)
    here = module_of(path)
    is_mod = path.name in ("mod.rs", "lib.rs")
    found = []
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)(?:::\{([^;]*?)\})?", code, re.S):
        head, rest, braces = m.group(1), [x for x in m.group(2).split("::") if x], m.group(3)
        if head == "crate":
            base = []
        elif head == "self":
            base = here if is_mod else here[:-1]
        else:
            base = (here if is_mod else here[:-1])[:-1]
        paths = expand(base + rest, braces) if braces is not None else [base + rest]
        found += paths
    targets = set()
    for p in found:
        f = file_of(p)
        if f and f != path:
            targets.add(f)
    return targets


def main():
    problems = []
    for d in list((ROOT / "crates").glob("*/src")) + [ROOT / "python" / "src"]:
        for f in sorted(d.rglob("*.rs")):
            n = len(f.read_text().splitlines())
            if n > MAX_LINES:
                problems.append(f"{f.relative_to(ROOT)}: {n} lines (at most {MAX_LINES})")
    files = sorted(SRC.rglob("*.rs"))
    graph = {f: imports(f) for f in files}
    for f in files:
        if f.is_relative_to(SRC / "write"):
            for t in graph[f]:
                if t.is_relative_to(SRC / "read") or t.is_relative_to(SRC / "ops"):
                    problems.append(f"{f.relative_to(ROOT)} imports {t.relative_to(ROOT)} (write must not import read or ops)")
    # Cycles: Tarjan's strongly connected components.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for f in files:
        if f not in index:
            visit(f)
    for comp in sccs:
        names = sorted(str(c.relative_to(SRC)) for c in comp)
        edges = [f"{a.relative_to(SRC)} -> {b.relative_to(SRC)}" for a in comp for b in graph[a] if b in comp]
        problems.append("import cycle among " + ", ".join(names) + " (" + "; ".join(sorted(edges)) + ")")
    for p in problems:
        print(p)
    print(f"layout: {len(files)} modules checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Layout rules of the code base, checked by `make lint` (`python3 .ci/check_layout.py [ROOT]`):

1. no Rust or Python source file (crates/*/src, python/src, python/rntuple, bench, tests, .ci) is
   longer than 800 lines;
2. the module import graph of every crate under crates/ (one node per file; `crate::`, `super::`,
   `self::` and `pub use` re-exports resolved from the importing file's own module, test modules,
   comments and string literals left out) has no cycle;
3. the module graph of the Python package (python/rntuple, imports inside functions included) has no
   cycle;
4. in crates/rntuple, no module imports a module of a higher layer (LAYERS below, the order of
   DESIGN.md's "Layers" as the code has it); modules of one layer may import each other (cycles
   aside), and `read` and `write` do not import each other (they are two sides of one layer).

Exits non-zero naming every violation; `--graph` prints the layer-level import graph.
"""
import pathlib
import re
import sys

MAX_LINES = 800

# crates/rntuple's layers, lowest first (README "Layers"): the pure format codecs; storage (I/O, the
# ROOT file container, which reads anchors and compresses its records with the format's codecs);
# column encodings; fields and types; then reading and writing (apart), and what sits on both. A
# module's layer is that of the longest entry prefixing its path; `lib.rs` (the crate root:
# re-exports only) is above every layer.
LAYERS = [
    ["error"],
    ["format"],
    ["storage"],
    ["primitives"],
    ["logical"],
    ["value", "read", "write", "expr"],
    ["ops", "convert", "dataset"],
    ["forge"],
]
# Pairs of one layer that must not import each other in either direction.
APART = [("read", "write")]
# Modules that pass no judgement on layering: the crate root.
ROOT_MODULES = {()}


def strip(text):
    """The text without comments, string and char literals and `#[cfg(test)]` items."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            out.append('""')
            i = n if end < 0 else end + 1 + len(hashes)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", text[i:])
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    # `#[cfg(test)]` items (a test module, a test-only function or import) are left out.
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*", code)
        if not m:
            break
        j, depth = m.end(), 0
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            elif code[j] == ";" and depth == 0:
                j += 1
                break
            j += 1
        code = code[: m.start()] + code[j:]
    return code


class Crate:
    """The files of one crate and the module path of each."""

    def __init__(self, src):
        self.src = src
        self.files = sorted(src.rglob("*.rs"))
        self.module = {f: self.module_of(f) for f in self.files}
        self.by_module = {m: f for f, m in self.module.items()}

    def module_of(self, path):
        parts = list(path.relative_to(self.src).with_suffix("").parts)
        if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
            parts = parts[:-1]
        return tuple(parts)

    def file_of(self, parts):
        """The file defining the longest prefix of module path `parts`."""
        for k in range(len(parts), -1, -1):
            f = self.by_module.get(tuple(parts[:k]))
            if f:
                return f
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
            paths += expand(prefix + [x for x in m.group(1).split("::") if x], m.group(2))
        elif item.startswith("{"):
            paths += expand(prefix, item[1:-1])
        else:
            paths.append(prefix + [x for x in item.split(" as ")[0].split("::") if x and x != "self"])
    return paths


def inline_modules(code):
    """[(start, end, name)] of the inline `mod name { ... }` blocks of a file."""
    found = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        found.append((m.start(), j, m.group(1)))
    return found


def rust_imports(crate, path):
    """The files of `crate` that file `path` refers to by a `crate::`, `super::` or `self::` path."""
    code = strip(path.read_text())
    here = list(crate.module[path])
    blocks = inline_modules(code)
    targets = set()
    for m in re.finditer(r"(?<![\w:])((?:(?:crate|super|self)::)+)((?:\w+::)*)(?:\{([^;]*?)\}|(\w+))", code, re.S):
        module = here + [name for (s, e, name) in blocks if s < m.start() < e]
        heads = [x for x in m.group(1).split("::") if x]
        base = list(module)
        for h in heads:
            if h == "crate":
                base = []
            elif h == "super":
                base = base[:-1]
        rest = [x for x in m.group(2).split("::") if x]
        paths = expand(base + rest, m.group(3)) if m.group(3) is not None else [base + rest + [m.group(4)]]
        for p in paths:
            f = crate.file_of(p)
            if f and f != path:
                targets.add(f)
    return targets


def layer_of(module):
    best, rank = None, None
    for r, layer in enumerate(LAYERS):
        for name in layer:
            key = tuple(name.split("/"))
            if module[: len(key)] == key and (best is None or len(key) > len(best)):
                best, rank = key, r
    return rank, best


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return sccs


def cycle_problems(graph, name):
    problems = []
    for comp in cycles(graph):
        nodes = sorted(name(c) for c in comp)
        edges = sorted(f"{name(a)} -> {name(b)}" for a in comp for b in graph[a] if b in comp)
        problems.append("import cycle among " + ", ".join(nodes) + " (" + "; ".join(edges) + ")")
    return problems


def python_imports(pkg, path, modules):
    """The modules of package `pkg` that `path` imports (anywhere in the file)."""
    text = path.read_text()
    targets = set()
    for m in re.finditer(r"^\s*from\s+(\.+)(\w*)\s+import\s+(\(?[\w\s,]+\)?)", text, re.M):
        if len(m.group(1)) != 1:
            continue
        if m.group(2):
            targets.add(m.group(2))
        else:
            targets.update(x.strip().split(" as ")[0] for x in m.group(3).strip("()").split(","))
    for m in re.finditer(rf"^\s*(?:from|import)\s+{pkg}\.(\w+)", text, re.M):
        targets.add(m.group(1))
    for m in re.finditer(rf"^\s*from\s+{pkg}\s+import\s+(\(?[\w\s,]+\)?)", text, re.M):
        targets.update(x.strip().split(" as ")[0] for x in m.group(1).strip("()").split(","))
    me = path.stem
    return {t for t in targets if t in modules and t != me}


def line_problems(root):
    problems = []
    files = []
    for d in list((root / "crates").glob("*/src")) + [root / "python" / "src"]:
        files += sorted(d.rglob("*.rs"))
    for d in ["python/rntuple", "bench", "tests", ".ci"]:
        if (root / d).is_dir():
            files += sorted(p for p in (root / d).rglob("*.py") if "generated" not in p.parts)
    for f in files:
        n = len(f.read_text().splitlines())
        if n > MAX_LINES:
            problems.append(f"{f.relative_to(root)}: {n} lines (at most {MAX_LINES})")
    return problems


def check(root, show_graph=False):
    problems = line_problems(root)
    n_modules = 0
    for src in sorted((root / "crates").glob("*/src")):
        crate = Crate(src)
        graph = {f: rust_imports(crate, f) for f in crate.files}
        n_modules += len(graph)
        problems += cycle_problems(graph, lambda f: str(f.relative_to(root)))
        if src.parent.name != "rntuple":
            continue
        layer_edges = set()
        for f, targets in graph.items():
            a = crate.module[f]
            if a in ROOT_MODULES:
                continue
            ra, ka = layer_of(a)
            if ra is None:
                problems.append(f"{f.relative_to(root)}: module {'::'.join(a)} is in no layer (add it to LAYERS)")
                continue
            for t in targets:
                b = crate.module[t]
                rb, kb = layer_of(b)
                if rb is None:
                    continue
                layer_edges.add(("/".join(ka), "/".join(kb)))
                if rb > ra:
                    problems.append(
                        f"{f.relative_to(root)} imports {t.relative_to(root)}: "
                        f"{'/'.join(ka)} (layer {ra}) must not import {'/'.join(kb)} (layer {rb})")
                for x, y in APART:
                    if {ka[0], kb[0]} == {x, y}:
                        problems.append(f"{f.relative_to(root)} imports {t.relative_to(root)}: {x} and {y} do not import each other")
        if show_graph:
            for a, b in sorted(layer_edges):
                if a != b:
                    print(f"  {a} -> {b}")
    pkg = root / "python" / "rntuple"
    if pkg.is_dir():
        modules = {p.stem: p for p in pkg.glob("*.py")}
        graph = {name: python_imports("rntuple", p, modules) for name, p in modules.items()}
        # `__init__` re-exports the package: it may import everything, and what imports the package
        # itself is not a module edge.
        graph = {k: v - {"__init__"} for k, v in graph.items()}
        n_modules += len(graph)
        problems += cycle_problems(graph, lambda m: f"python/rntuple/{m}.py")
    for p in problems:
        print(p)
    print(f"layout: {n_modules} modules checked, {len(problems)} problem(s)")
    return problems


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    root = pathlib.Path(args[0]).resolve() if args else pathlib.Path(__file__).resolve().parent.parent
    return 1 if check(root, show_graph="--graph" in argv) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

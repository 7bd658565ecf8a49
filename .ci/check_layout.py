#!/usr/bin/env python3
"""Layout rules of the code base, checked by `make lint` (`python3 .ci/check_layout.py [ROOT] [--graph]`):

1. no Rust or Python source file (crates/*/src, python/src, python/rntuple, bench, tests, .ci) is longer than
   800 lines;
2. the module graph of every Rust crate (crates/*/src, python/src, the PyO3 extension, and fuzz/src when there
   is one) has no cycle: one node per file; the edges are what a file names through `use` trees and paths in
   code (`crate::`, `super::`, `self::`, and paths starting at a child module's name; inline `mod name { }` blocks
   resolved), re-exports followed to the
   defining file, read by a tokenizer that knows comments and literals, with everything under `#[cfg(test)]`
   left out (layout_rust.py);
3. the import graph of every Python tree has no cycle: the package (python/rntuple, its subpackages included),
   bench/, each directory under tests/ (conftest.py included) and .ci/; imports are read with `ast`, in every
   form and wherever they stand (layout_python.py);
4. no module of the package imports the package root (`import rntuple`, `from rntuple import X`, `from .. import
   X` reaching rntuple/__init__.py for a name X that is no module); only rntuple/__init__.py itself re-exports.
   The compiled extension (PY_NATIVE) is a module, not the root;
5. in crates/rntuple, no module imports a module of a higher layer (LAYERS, the order of DESIGN.md's "Layers");
   modules of one layer may import each other (cycles aside), the pairs of APART do not import each other, and
   no module of the first room of a FORBIDDEN pair imports one of the second (the sub-rooms of a layer).

All the rules' data (layers, sub-rooms, the trees) is the block below. A rule naming a sub-room that has no
module is skipped with a note while its layer's directory has no sub-directories (the flat layout before a
split), and is a problem once it has some (a misspelt or moved room). Exits non-zero naming every problem;
`--graph` prints the room-level import graph of crates/rntuple.
"""
import pathlib
import sys

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from layout_python import package_tree, py_files, script_tree  # noqa: E402
from layout_rust import Crate, rust_import_lines, rust_imports  # noqa: E402, F401  (rust_imports: the tests use it)

# ----------------------------------------------------------------------------------------------
# The rules' data
# ----------------------------------------------------------------------------------------------

MAX_LINES = 800

# crates/rntuple's layers, lowest first (README "Layers"): the pure format codecs; `inspect` (the numbers a descriptor
# gives: sizes, compression, page sizes; and histogram binning: pure, over the format's descriptors only); storage (I/O,
# the ROOT file container, which reads anchors and compresses its records with the format's codecs); column encodings;
# fields and types; then reading and writing (apart), and what sits on both. A module's layer (its room) is that of the
# longest entry prefixing its path ("storage/remote" would be a room of its own); `lib.rs` (the crate root:
# re-exports only) is above every layer.
LAYERS = [
    ["error"],
    ["format"],
    ["inspect"],
    ["storage"],
    ["primitives"],
    ["logical"],
    ["value", "read", "write", "expr"],
    ["ops", "convert", "dataset"],
    ["forge"],
]
# Rooms that must not import each other in either direction.
APART = [("read", "write")]
# The sub-rooms of a layer's room, lowest first: a module of one may import the sub-rooms below it, never one
# above (rooms in one inner list are side by side: neither imports the other). The files directly in the room
# (the room's mod.rs and its top-level files) sit above its sub-rooms. Names are module paths with "/"
# ("storage/local" is crates/rntuple/src/storage/local/).
SUB_ROOMS = {
    "storage": [["storage/local"], ["storage/container"], ["storage/remote"]],
    "read": [["read/pool"], ["read/decode"], ["read/arrow"], ["read/streamer"]],
    "write": [["write/streamer"], ["write/cluster"], ["write/fill"], ["write/distributed"]],
}
# (a, b): no module under a imports a module under b (b may import a); made from SUB_ROOMS.
FORBIDDEN = [
    (a, b)
    for levels in SUB_ROOMS.values()
    for i, level in enumerate(levels)
    for a in level
    for b in [x for higher in levels[i + 1:] for x in higher] + [x for x in level if x != a]
]
# Modules that pass no judgement on layering: the crate root.
ROOT_MODULES = {()}
# The crate the layer rules apply to.
LAYERED_CRATE = "crates/rntuple/src"
# Rust source trees (globs from the repository root): each is one crate's modules.
RUST_TREES = ["crates/*/src", "python/src", "fuzz/src"]
# Whether a path starting at a child module's name (`pub use columns::ColumnIn;`, `parquet::write(..)` in a
# mod.rs) is an edge like `self::columns::ColumnIn`. On: such a path names the child as surely as `self::` does,
# and without it a parent and a child could use each other unseen (a mod.rs dispatching to its children, which
# use the mod.rs's helpers through `super::`). The three such circles it found on the tree of issue 52 were
# broken by moving the shared helpers into a child of their own (convert/output.rs, rntuple-c's entry/buffer.rs,
# the CLI's args.rs). (Re-exports are followed either way: `crate::write::Entry` is write/typed.rs.)
RUST_CHILD_PATHS = True
# The Python package (its root may not be imported from inside), and its compiled extension modules.
PY_PACKAGE = "python/rntuple"
PY_NATIVE = ["rntuple._rntuple"]
# Directories of Python scripts importing each other by top-level name (globs; each match is one tree).
PY_SCRIPT_TREES = ["bench", "tests/*", ".ci"]

# ----------------------------------------------------------------------------------------------


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


def cycle_problems(graph, name, lines=None):
    """One problem per cycle of `graph` ({node: {node: line} or set}); `name(node)` -> shown name."""
    problems = []
    for comp in cycles(graph):
        nodes = sorted(name(c) for c in comp)
        edges = sorted(f"{name(a)} -> {name(b)}" + (f" (line {graph[a][b]})" if isinstance(graph[a], dict) else "")
                       for a in comp for b in graph[a] if b in comp)
        problems.append("import cycle among " + ", ".join(nodes) + " (" + "; ".join(edges) + ")")
    return problems


def line_problems(root):
    problems = []
    files = []
    for d in list((root / "crates").glob("*/src")) + [root / "python" / "src"]:
        files += sorted(d.rglob("*.rs"))
    for d in ["python/rntuple", "bench", "tests", ".ci"]:
        if (root / d).is_dir():
            files += py_files(root / d)
    for f in files:
        n = len(f.read_text().splitlines())
        if n > MAX_LINES:
            problems.append(f"{f.relative_to(root)}: {n} lines (at most {MAX_LINES})")
    return problems


# ----------------------------------------------------------------------------------------------
# Rust
# ----------------------------------------------------------------------------------------------


def _key(name):
    return tuple(name.split("/"))


def _under(module, name):
    key = _key(name)
    return module[:len(key)] == key


def layer_of(module):
    best, rank = None, None
    for r, layer in enumerate(LAYERS):
        for name in layer:
            key = _key(name)
            if module[:len(key)] == key and (best is None or len(key) > len(best)):
                best, rank = key, r
    return rank, best


def room_of(module):
    """The longest room (a LAYERS entry or a sub-room named by APART or FORBIDDEN) holding `module`."""
    names = {n for layer in LAYERS for n in layer} | {n for pair in APART + FORBIDDEN for n in pair}
    best = max((n for n in names if _under(module, n)), key=lambda n: len(_key(n)), default=None)
    return best


def room_notes(crate, where):
    """(problems, notes) for the rooms the rules name that have no module in `crate`."""
    problems, notes = [], []
    names = sorted({n for pair in APART + FORBIDDEN for n in pair} | {n for layer in LAYERS for n in layer if "/" in n})
    for name in names:
        if any(_under(m, name) for m in crate.by_module):
            continue
        parent = crate.src.joinpath(*_key(name)[:-1])
        split = "/" in name and parent.is_dir() and any(d.is_dir() for d in parent.iterdir())
        if split:
            rooms = ", ".join(sorted(d.name for d in parent.iterdir() if d.is_dir()))
            problems.append(f"{where}: a layer rule names {name}, which has no module ({parent.name}/ has the "
                            f"sub-rooms {rooms}): adjust LAYERS/APART/FORBIDDEN in .ci/check_layout.py")
        else:
            notes.append(f"note: a layer rule names {name}, which has no module in {where} yet: skipped")
    return problems, notes


def layer_problems(crate, graph, root, show_graph=False):
    problems = []
    room_edges = set()
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
            room_edges.add((room_of(a), room_of(b)))
            what = f"{f.relative_to(root)} imports {t.relative_to(root)}"
            if rb > ra:
                problems.append(f"{what}: {'/'.join(ka)} (layer {ra}) must not import {'/'.join(kb)} (layer {rb})")
            for x, y in APART:
                if (_under(a, x) and _under(b, y)) or (_under(a, y) and _under(b, x)):
                    problems.append(f"{what}: {x} and {y} do not import each other")
            for x, y in FORBIDDEN:
                if _under(a, x) and _under(b, y):
                    problems.append(f"{what}: {x} must not import {y} (FORBIDDEN)")
    if show_graph:
        for a, b in sorted(room_edges):
            if a != b:
                print(f"  {a} -> {b}")
    return problems


def rust_trees(root):
    out = []
    for pattern in RUST_TREES:
        out += sorted(p for p in root.glob(pattern) if p.is_dir())
    return out


def check_rust(root, src, show_graph=False):
    """(problems, notes, number of modules) of one crate."""
    crate = Crate(src)
    graph = {f: rust_import_lines(crate, f, RUST_CHILD_PATHS) for f in crate.files}
    problems = cycle_problems(graph, lambda f: str(f.relative_to(root)))
    notes = []
    if src == root / LAYERED_CRATE:
        more, notes = room_notes(crate, LAYERED_CRATE)
        problems += more + layer_problems(crate, graph, root, show_graph)
    return problems, notes, len(graph)


# ----------------------------------------------------------------------------------------------
# Python
# ----------------------------------------------------------------------------------------------


def python_trees(root):
    """[(tree, is the package)] of every Python tree."""
    out = []
    if (root / PY_PACKAGE).is_dir():
        out.append((package_tree(root / PY_PACKAGE, PY_NATIVE), True))
    for pattern in PY_SCRIPT_TREES:
        for d in sorted(root.glob(pattern)):
            if d.is_dir() and py_files(d):
                out.append((script_tree(d), False))
    return out


def check_python(root, tree, is_package):
    """(problems, number of modules) of one Python tree."""
    problems, graph = [], {}
    for f in tree.files:
        try:
            graph[tree.module[f]] = tree.imports(f)
        except SyntaxError as exc:
            problems.append(f"{f.relative_to(root)}: cannot be parsed ({exc.msg}, line {exc.lineno}): its imports are unknown")
            graph[tree.module[f]] = {}

    def name(m):
        return str(tree.by_module[m].relative_to(root))

    problems += cycle_problems(graph, name)
    if is_package:
        top = pathlib.Path(PY_PACKAGE).name
        for m, targets in sorted(graph.items()):
            if m != top and top in targets:
                problems.append(f"{name(m)} imports the package root {name(top)} (line {targets[top]}): import the "
                                f"name from the module that defines it (only {name(top)} re-exports)")
    return problems, len(graph)


def check(root, show_graph=False):
    root = pathlib.Path(root)
    problems = line_problems(root)
    notes, n_modules = [], 0
    for src in rust_trees(root):
        more, more_notes, n = check_rust(root, src, show_graph)
        problems += more
        notes += more_notes
        n_modules += n
    for tree, is_package in python_trees(root):
        more, n = check_python(root, tree, is_package)
        problems += more
        n_modules += n
    for note in notes:
        print(note)
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

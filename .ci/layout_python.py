"""The Python side of the layout checker (`check_layout.py`): the modules of a tree of Python files and the
imports between them, read with the `ast` module (so an import in a string or a comment is none, and one inside a
function, under `if TYPE_CHECKING:` or in a `try:` counts like any other).

A tree is a directory on `sys.path` (`base`) and the files under it that belong to the tree: the module of a file
is its path from `base`, dotted (`rntuple/reading/a.py` -> `rntuple.reading.a`; a package's `__init__.py` is the
package's node: `rntuple.reading`). So a package (python/rntuple, from base python/) and a directory of scripts
that import each other as top-level names (bench/, tests/cross/, .ci/) are read alike.

Every form of import is an edge: `import a.b` and `import a.b as c` (to `a.b`), `from .x import y`,
`from ..x import y`, `from pkg.sub import y`, `from . import x` (to `pkg.x` when that is a module or a package,
else to `pkg`, its `__init__`: a name the package defines or re-exports). Relative imports resolve against the
importing module's package. A target with no file in the tree (another package, the standard library, a compiled
extension such as `rntuple._rntuple`) is a leaf and no edge.
"""
import ast
import pathlib

# Not the project's code: caches, environments, build output, and bench/data (what benchmarks generate, git-ignored:
# a copy of Spark's Python files lands there, for one).
SKIP_DIRS = {"__pycache__", "generated", ".venv", "target", "node_modules", "data"}


class Tree:
    """The modules of one Python tree: `base` the directory on sys.path, `files` the .py files of the tree."""

    def __init__(self, base, files, native=()):
        self.base = pathlib.Path(base)
        self.files = sorted(files)
        self.module = {f: self.module_of(f) for f in self.files}
        self.by_module = {m: f for f, m in self.module.items()}
        # Compiled extension modules (a .so, .pyd or a stub .pyi beside the files; and the names in `native`): modules,
        # but no nodes.
        self.native = set(native)
        for d in {f.parent for f in self.files}:
            for ext in (*d.glob("*.so"), *d.glob("*.pyd"), *d.glob("*.pyi")):
                stem = ext.name.split(".")[0]
                if stem != "__init__":
                    self.native.add(".".join(ext.relative_to(self.base).parts[:-1] + (stem,)))

    def module_of(self, path):
        parts = list(path.relative_to(self.base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)

    def is_package(self, path):
        return path.name == "__init__.py"

    def is_module(self, name):
        return name in self.by_module or name in self.native

    def imports(self, path):
        """{module name: first line} of the modules of this tree that file `path` imports, anywhere in it.
        Raises SyntaxError when the file does not parse."""
        tree = ast.parse(path.read_text(), filename=str(path))
        me = self.module[path]
        package = me if self.is_package(path) else me.rpartition(".")[0]
        out = {}

        def edge(name, node):
            if name in self.by_module and name != me:
                out.setdefault(name, node.lineno)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edge(self._deepest(alias.name), node)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".") if package else []
                    up = node.level - 1
                    if up > len(parts) or (up == len(parts) and not node.module):
                        continue  # beyond the top of the tree
                    parts = parts[:len(parts) - up]
                    base = ".".join(parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if not base or not self.is_module(base):
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if alias.name != "*" and self.is_module(sub):
                        edge(sub, node)
                    else:
                        edge(base, node)
        return out

    def _deepest(self, name):
        """`import a.b.c` names module a.b.c (when it has a file; a leaf otherwise)."""
        return name if self.is_module(name) else ""


def package_tree(pkg_dir, native=()):
    """The tree of a package directory (its parent is on sys.path)."""
    pkg_dir = pathlib.Path(pkg_dir)
    return Tree(pkg_dir.parent, py_files(pkg_dir), native)


def script_tree(directory):
    """The tree of a directory of scripts that import each other by name (the directory is on sys.path)."""
    return Tree(directory, py_files(directory))


def py_files(directory):
    return sorted(p for p in pathlib.Path(directory).rglob("*.py") if not SKIP_DIRS & set(p.relative_to(directory).parts))

"""Tests of the layout checker (`.ci/check_layout.py`), run by `make lint`: the tree as it is passes,
and each kind of violation planted in a copy of it is found and named."""

import importlib.util
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("check_layout", ROOT / ".ci" / "check_layout.py")
check_layout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layout)


@pytest.fixture
def tree(tmp_path):
    """A copy of the sources the checker reads (Rust crates, the Python package)."""
    for d in ["crates", "python/rntuple", "python/src"]:
        shutil.copytree(ROOT / d, tmp_path / d, ignore=shutil.ignore_patterns("target", "__pycache__", "*.so"))
    return tmp_path


def plant(path, line, after=None):
    text = path.read_text()
    if after is None:
        path.write_text(line + "\n" + text)
    else:
        assert after in text, f"{after!r} not in {path}"
        path.write_text(text.replace(after, after + "\n" + line, 1))


def test_the_tree_passes():
    assert check_layout.check(ROOT) == []


def test_leaf_files_resolve_super_and_self_from_their_own_module():
    crate = check_layout.Crate(ROOT / "crates" / "rntuple" / "src")
    src = crate.src
    # storage/location.rs names `super::remote::RemoteSource` and `super::source::FileSource`.
    targets = check_layout.rust_imports(crate, src / "storage" / "location.rs")
    assert src / "storage" / "remote.rs" in targets
    assert src / "storage" / "source.rs" in targets
    assert src / "lib.rs" not in targets


def test_a_planted_cycle_fails(tree):
    src = tree / "crates" / "rntuple" / "src"
    # tfile.rs imports source.rs; make source.rs import tfile.rs.
    plant(src / "storage" / "source.rs", "use super::tfile::read_blob;", after="use crate::error::{Error, Result};")
    problems = check_layout.check(tree)
    assert any("import cycle" in p and "storage/source.rs" in p and "storage/tfile.rs" in p for p in problems), problems


def test_a_planted_cycle_through_super_super_fails(tree):
    src = tree / "crates" / "rntuple" / "src"
    plant(src / "write" / "distributed" / "wire.rs", "use super::super::sealed::SealedCluster as _Planted;", after="use crate::error::{Error, Result};")
    plant(src / "write" / "sealed.rs", "use crate::write::distributed::wire as _planted;", after="use crate::error::{Error, Result};")
    problems = check_layout.check(tree)
    assert any("import cycle" in p and "write/sealed.rs" in p and "write/distributed/wire.rs" in p for p in problems), problems


def test_an_upward_import_fails(tree):
    src = tree / "crates" / "rntuple" / "src"
    plant(src / "format" / "anchor.rs", "use crate::write::Writer as _Planted;")
    problems = check_layout.check(tree)
    assert any("format/anchor.rs imports" in p and "must not import write" in p for p in problems), problems


def test_storage_importing_logical_fails(tree):
    src = tree / "crates" / "rntuple" / "src"
    plant(src / "storage" / "tfile.rs", "use crate::logical::typename::ClassDef as _Planted;", after="use crate::error::{Error, Result};")
    problems = check_layout.check(tree)
    assert any("storage/tfile.rs imports" in p and "must not import logical" in p for p in problems), problems


def test_read_and_write_stay_apart(tree):
    src = tree / "crates" / "rntuple" / "src"
    plant(src / "read" / "file.rs", "use crate::write::WriteOptions as _Planted;")
    problems = check_layout.check(tree)
    assert any("read/file.rs imports" in p and "read and write do not import each other" in p for p in problems), problems


def test_imports_in_comments_strings_and_tests_do_not_count(tree):
    src = tree / "crates" / "rntuple" / "src"
    f = src / "storage" / "source.rs"
    f.write_text(f.read_text() + '\n// use super::tfile::read_blob;\nconst _S: &str = "use super::tfile::read_blob;";\n'
                 "#[cfg(test)]\nmod planted {\n    use super::super::tfile::read_blob;\n}\n")
    assert check_layout.check(tree) == []


def test_a_python_cycle_through_a_function_level_import_fails(tree):
    pkg = tree / "python" / "rntuple"
    modules = sorted(p for p in pkg.glob("_*.py") if p.name != "__init__.py")
    a, b = modules[0], modules[1]
    plant(a, f"from . import {b.stem} as _planted_b")
    b.write_text(b.read_text() + f"\n\ndef _planted():\n    from .{a.stem} import __doc__ as d\n    return d\n")
    problems = check_layout.check(tree)
    assert any("import cycle" in p and a.name in p and b.name in p for p in problems), problems


def test_long_files_fail(tree):
    (tree / "python" / "rntuple" / "_planted.py").write_text("x = 1\n" * 801)
    (tree / "crates" / "rntuple" / "src" / "format" / "planted.rs").write_text("// line\n" * 801)
    problems = check_layout.check(tree)
    assert any("_planted.py: 801 lines" in p for p in problems), problems
    assert any("planted.rs: 801 lines" in p for p in problems), problems

"""The package's API surface: the exception classes by kind, the write options (one table in the library, the
same names in the keyword parser, the defaults and the type stub)."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

import rntuple
from rntuple import _rntuple

STUB = Path(rntuple.__file__).with_name("__init__.pyi")

ERRORS = {
    "NotFoundError": KeyError,
    "CorruptFileError": None,
    "UnsupportedError": None,
    "InvalidArgumentError": ValueError,
    "InternalError": None,
    "RNTupleIOError": OSError,
}


# ----- write options ---------------------------------------------------------------------------------------

def _stub_option_keyword_sets() -> dict[str, set[str]]:
    """The keyword-only parameters of every function in the stub that takes write options (those with a
    ``compression`` keyword), by qualified name."""
    tree = ast.parse(STUB.read_text())
    out = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef):
                kw = {a.arg for a in child.args.kwonlyargs}
                if "compression" in kw:
                    out[f"{prefix}{child.name}"] = kw
    visit(tree, "")
    return out


def test_stub_lists_every_write_option():
    sets = _stub_option_keyword_sets()
    assert {"Writer.__init__", "ParallelWriter.__init__"} <= set(sets), sorted(sets)
    names = set(_rntuple.WRITE_OPTION_NAMES)
    for where, kw in sets.items():
        assert kw == names, f"{where} in {STUB.name}: missing {sorted(names - kw)}, unknown {sorted(kw - names)}"


def test_option_names_defaults_and_parser_agree(tmp_path):
    names = list(_rntuple.WRITE_OPTION_NAMES)
    assert len(names) == len(set(names)) and "compression" in names
    defaults = rntuple.default_write_options()
    assert list(defaults) == names
    assert all(isinstance(v, bool) or (isinstance(v, int) and v >= 0) for v in defaults.values()), defaults
    # every option, given its default, is accepted by the keyword parser
    p = tmp_path / "defaults.root"
    rntuple.write(p, "T", {"x": np.arange(5, dtype=np.int32)}, **defaults)
    assert rntuple.open(p)["T"].arrays().x.tolist() == [0, 1, 2, 3, 4]


def test_bad_option_values(tmp_path):
    schema = {"x": "float"}
    with pytest.raises(TypeError, match="write option 'enable_page_checksums' must be a bool"):
        rntuple.Writer(tmp_path / "a.root", "T", schema, enable_page_checksums=1)
    with pytest.raises(TypeError, match="write option 'max_unzipped_page_size' must be a number of bytes"):
        rntuple.Writer(tmp_path / "a.root", "T", schema, max_unzipped_page_size=-1)
    with pytest.raises(TypeError, match=r"write option 'compression' must be a non-negative integer \(algorithm"):
        rntuple.Writer(tmp_path / "a.root", "T", schema, compression=1 << 40)
    with pytest.raises(TypeError, match="write option 'imt_threads' must be a non-negative integer"):
        rntuple.Writer(tmp_path / "a.root", "T", schema, imt_threads="two")
    with pytest.raises(TypeError, match="unknown write option.*compresion"):
        rntuple.Writer(tmp_path / "a.root", "T", schema, compresion=0)
    for bad in ({"max_unzipped_page_size": 0}, {"approx_zipped_cluster_size": 0}, {"max_unzipped_cluster_size": 0},
                {"initial_unzipped_page_size": 0}, {"max_key_size": 10}):
        with pytest.raises(ValueError, match=next(iter(bad))) as ei:
            rntuple.Writer(tmp_path / "a.root", "T", schema, **bad)
        assert isinstance(ei.value, rntuple.InvalidArgumentError), bad
    assert not (tmp_path / "a.root").exists()


# ----- errors ----------------------------------------------------------------------------------------------

def test_error_classes():
    for name, extra in ERRORS.items():
        cls = getattr(rntuple, name)
        assert cls is getattr(_rntuple, name) and name in rntuple.__all__
        assert issubclass(cls, rntuple.RNTupleError) and issubclass(cls, Exception)
        if extra is not None:
            assert issubclass(cls, extra), name
        e = cls("what is wrong")
        assert str(e) == "what is wrong", (name, str(e))
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is cls and str(back) == "what is wrong"
    assert rntuple.RNTupleError is _rntuple.RNTupleError


def _small(tmp_path, **options) -> Path:
    p = tmp_path / "small.root"
    # a distinctive value to find the page in the file
    rntuple.write(p, "T", {"x": np.full(64, 0x1122334455667788, dtype=np.int64)}, compression=0, **options)
    return p


def test_not_found_is_a_key_error(tmp_path):
    p = _small(tmp_path)
    with rntuple.open(p) as f:
        with pytest.raises(KeyError) as ei:
            f["NoSuchName"]
        assert isinstance(ei.value, rntuple.RNTupleError) and isinstance(ei.value, rntuple.NotFoundError)
        assert str(ei.value).startswith("no RNTuple 'NoSuchName' in"), str(ei.value)  # no KeyError quotes
        t = f["T"]
        for read in (lambda: t["nope"], lambda: t.arrays(["nope"]), lambda: t.storage_stats(["nope"])):
            with pytest.raises(rntuple.NotFoundError, match="'nope'") as ei:
                read()
            assert isinstance(ei.value, KeyError)
    with pytest.raises(rntuple.NotFoundError, match="no field 'nope'"):
        rntuple.concatenate(str(p), fields=["nope"], ntuple="T")


def test_corrupt_file(tmp_path):
    p = _small(tmp_path)
    data = bytearray(p.read_bytes())
    at = data.find(np.int64(0x1122334455667788).tobytes())
    assert at > 0
    data[at + 3] ^= 0xFF
    bad = tmp_path / "bad.root"
    bad.write_bytes(bytes(data))
    with rntuple.open(bad) as f:
        with pytest.raises(rntuple.CorruptFileError, match="(?i)checksum"):
            f["T"].arrays()
        report = f["T"].check()
        assert not report["ok"] and "checksum" in report["problems"][0]["error"]
    with pytest.raises(rntuple.CorruptFileError):
        rntuple.open(b"root" + b"\0" * 200)


def test_io_error_is_an_os_error(tmp_path):
    with pytest.raises(OSError) as ei:
        rntuple.Writer(tmp_path / "no" / "dir" / "d.root", "T", {"x": "float"})
    assert isinstance(ei.value, rntuple.RNTupleIOError)


def test_invalid_arguments_are_value_errors(tmp_path):
    p = _small(tmp_path)
    with pytest.raises(rntuple.InvalidArgumentError, match="'strict', 'filter' or 'union'"):
        rntuple.merge(tmp_path / "m.root", [p], "T", mode="append")
    w = rntuple.Writer(tmp_path / "w.root", "T", {"x": "std::int32_t"})
    with pytest.raises(rntuple.InvalidArgumentError, match="'x'"):
        w.extend([{"x": "not a number"}])
    w.commit()
    with pytest.raises(ValueError, match="committed"):
        w.extend({"x": np.arange(2, dtype=np.int32)})


def test_unsupported_type(tmp_path):
    with pytest.raises(rntuple.UnsupportedError, match="NoSuchClass"):
        rntuple.Writer(tmp_path / "u.root", "T", {"x": "NoSuchClass"})

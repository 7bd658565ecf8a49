"""Schema evolution on read without ROOT (``types=...`` in ``arrays``, ``iterate``, ``to_arrow`` and
``rntuple.concatenate``/``iterate``; ``chain(missing="none")``): numbers widened and narrowed as ROOT 6.40 allows,
refusals naming the field and both types, a class read at another version (members matched by name, defaults for
those missing on disk), ``std::vector`` as ``ROOT::RVec``, files whose types differ read as one, and a chain whose
inputs lack some fields; a skim of such inputs (``fill_missing=True``: defaults). ROOT's own reading of the same
cases: tests/cross/test_schema_evolution.py."""

from __future__ import annotations

import numpy as np
import pytest

import rntuple

V1 = rntuple.Class("Evo", {"a": "std::int32_t", "b": "float", "gone": "std::string"}, version=1)
V2 = rntuple.Class("Evo", {"a": "std::int64_t", "b": "double", "added": "std::vector<float>", "extra": "double"}, version=2)


@pytest.fixture
def v1_file(tmp_path):
    path = tmp_path / "v1.root"
    data = [{"obj": {"a": 10 * k - 5, "b": 0.5 + k, "gone": "x" * k}, "f": 1.25 + k, "i": -7 + 1000 * k, "u": 200 + k,
             "v": [0.5 * k] * k} for k in range(3)]
    schema = {"obj": V1, "f": "float", "i": "std::int32_t", "u": "std::uint8_t", "v": "std::vector<float>"}
    rntuple.write(path, "Events", data, schema=schema)
    return path


def test_numbers_widen_and_narrow(v1_file):
    t = rntuple.open(v1_file)["Events"]
    got = t.arrays(["f", "i", "u", "v"], types={"f": "double", "i": "std::int64_t", "u": "std::int16_t", "v": "ROOT::RVec<double>"})
    assert got.to_list() == [{"f": 1.25, "i": -7, "u": 200, "v": []}, {"f": 2.25, "i": 993, "u": 201, "v": [0.5]},
                             {"f": 3.25, "i": 1993, "u": 202, "v": [1.0, 1.0]}]
    np_ = t.arrays(["f", "i"], types={"f": "double", "i": "Long64_t"}, library="np")
    assert np_["f"].dtype == np.float64 and np_["i"].dtype == np.int64
    # integers as bool (non-zero is true), double narrowed to float
    assert t.arrays(["i"], types={"i": "bool"})["i"].to_list() == [True, True, True]
    pa_ = t.arrays(["f"], types={"f": "double"}, library="pa")
    assert str(pa_.schema.field("f").type) == "double"


def test_types_in_iterate_to_arrow_and_across_files(v1_file, tmp_path):
    """``types=`` beyond ``arrays``: ``iterate`` (chunks read ahead in windows, or batch by batch) and ``to_arrow``
    of one RNTuple, and ``rntuple.iterate``/``concatenate`` over files whose types differ where evolution allows."""
    t = rntuple.open(v1_file)["Events"]
    want = [1.25, 2.25, 3.25]
    types = {"f": "double", "v": "ROOT::RVec<double>"}
    for step in (1, 2, 10**9):  # small steps read ahead in windows; the last is one batch
        chunks = list(t.iterate(["f", "v"], step_size=step, types=types))
        assert [c.type.content.fields for c in chunks][0] == ["f", "v"]
        assert all(str(c.type.content) == "{f: float64, v: var * float64}" for c in chunks), [str(c.type) for c in chunks]
        assert sum((c.f.to_list() for c in chunks), []) == want
    table = t.to_arrow(["f", "i"], types={"f": "double", "i": "std::int64_t"})
    assert [str(x) for x in table.schema.types] == ["double", "int64"]
    assert table.column("f").to_pylist() == want and table.column("i").to_pylist() == [-7, 993, 1993]
    assert table.schema.metadata is None  # the reader's internal mark does not reach the caller
    # A second file whose f is double and i 64-bit: one type from every file with types=, refused without.
    v2 = tmp_path / "v2.root"
    rntuple.write(v2, "Events", {"f": np.array([4.5]), "i": np.array([2**40]), "v": [[2.5, 3.5]]},
                  schema={"f": "double", "i": "std::int64_t", "v": "std::vector<double>"})
    with pytest.raises(ValueError, match=r"field 'f' is float in .*v1.root but double in .*v2.root \(types=\{'f': \.\.\.\}"):
        rntuple.concatenate([v1_file, v2], ["f"])
    both = {"f": "double", "i": "std::int64_t", "v": "std::vector<double>"}
    got = rntuple.concatenate([v1_file, v2], ["f", "i", "v"], types=both)
    assert str(got.type.content) == "{f: float64, i: int64, v: var * float64}"
    assert got.to_list() == [{"f": 1.25, "i": -7, "v": []}, {"f": 2.25, "i": 993, "v": [0.5]},
                             {"f": 3.25, "i": 1993, "v": [1.0, 1.0]}, {"f": 4.5, "i": 2**40, "v": [2.5, 3.5]}]
    empty = rntuple.concatenate([v1_file, v2], ["f"], types=both, entry_start=2, entry_stop=2)
    assert len(empty) == 0 and str(empty.type.content) == "{f: float64}"
    pa_ = rntuple.concatenate([v1_file, v2], ["f", "i"], types=both, library="pa")
    assert pa_.column("i").to_pylist() == [-7, 993, 1993, 2**40] and pa_.schema.metadata is None
    chunks = list(rntuple.iterate([v1_file, v2], ["f"], step_size=2, types={"f": "double"}))
    assert [c.f.to_list() for c in chunks] == [[1.25, 2.25], [3.25], [4.5]]
    with pytest.raises(rntuple.NotFoundError, match="'nope'"):
        list(rntuple.iterate([v1_file, v2], ["f"], types={"nope": "double"}))


def test_refusals_name_the_field_and_types(v1_file):
    t = rntuple.open(v1_file)["Events"]
    with pytest.raises(Exception, match=r"field 'i'.*'std::int32_t'.*'double'"):
        t.arrays(["i"], types={"i": "double"})
    with pytest.raises(Exception, match=r"field 'f'.*'float'.*'std::int32_t'"):
        t.arrays(["f"], types={"f": "std::int32_t"})
    with pytest.raises(Exception, match="out of range"):
        t.arrays(["u"], types={"u": "std::int8_t"})  # 200 does not fit, as ROOT's range check
    with pytest.raises(rntuple.NotFoundError):
        t.arrays(["i"], types={"nope": "double"})


def test_class_read_at_another_version(v1_file, tmp_path):
    t = rntuple.open(v1_file)["Events"]
    got = t.arrays(["obj"], types={"obj": V2})["obj"].to_list()
    assert got == [{"a": -5, "b": 0.5, "added": [], "extra": 0.0}, {"a": 5, "b": 1.5, "added": [], "extra": 0.0},
                   {"a": 15, "b": 2.5, "added": [], "extra": 0.0}]
    # and back: version 2 read as version 1 (`gone` defaults to "", `added` and `extra` skipped)
    path = tmp_path / "v2.root"
    rntuple.write(path, "Events", [{"obj": {"a": -7, "b": 0.25, "added": [1.5], "extra": 2.0}}], schema={"obj": V2})
    back = rntuple.open(path)["Events"].arrays(types={"obj": V1})["obj"].to_list()
    assert back == [{"a": -7, "b": 0.25, "gone": ""}]
    other = rntuple.Class("Other", {"a": "std::int32_t"})
    with pytest.raises(Exception, match=r"field 'obj'.*'Evo'.*'Other'"):
        rntuple.open(path)["Events"].arrays(types={"obj": other})


def test_chain_with_missing_fields(tmp_path):
    a, b = tmp_path / "a.root", tmp_path / "b.root"
    rntuple.write(a, "Events", {"x": np.array([1.0, 2.0], dtype=np.float32)})
    rntuple.write(b, "Events", {"x": np.array([3.0], dtype=np.float32), "y": np.array([7], dtype=np.int32)})
    with pytest.raises(Exception, match="'y'"):
        rntuple.chain([a, b])  # the contract by default: the same fields
    c = rntuple.chain([a, b], missing="none")
    assert c.fields == ["x", "y"]
    assert c.arrays().to_list() == [{"x": 1.0, "y": None}, {"x": 2.0, "y": None}, {"x": 3.0, "y": 7}]
    assert c.arrays(["y"], entry_start=2).to_list() == [{"y": 7}]
    with pytest.raises(ValueError, match="missing"):
        rntuple.chain([a, b], missing="zero")


def test_skim_of_inputs_with_missing_fields(tmp_path):
    a, b, out = tmp_path / "a.root", tmp_path / "b.root", tmp_path / "out.root"
    rntuple.write(a, "Events", {"x": np.array([1.0, 2.0], dtype=np.float32), "n": np.array([4, 5], dtype=np.int32)})
    rntuple.write(b, "Events", {"x": np.array([3.0], dtype=np.float32), "y": np.array([7], dtype=np.int32)})
    with pytest.raises(Exception, match="no field 'n'"):
        rntuple.skim([a, b], out)  # the contract by default: every input has the kept fields
    rep = rntuple.skim([a, b], out, fill_missing=True)
    assert rep["entries"] == 3
    got = rntuple.open(out)["Events"].arrays().to_list()
    # Defaults where an input lacks a field, as ROOT's union merge writes them.
    assert got == [{"x": 1.0, "n": 4, "y": 0}, {"x": 2.0, "n": 5, "y": 0}, {"x": 3.0, "n": 0, "y": 7}]
    rntuple.skim([a, b], out, fields=["y", "x"], where="x > 1.5", fill_missing=True)
    assert rntuple.open(out)["Events"].arrays().to_list() == [{"y": 0, "x": 2.0}, {"y": 7, "x": 3.0}]
    with pytest.raises(ValueError, match="fill_missing"):
        rntuple.skim([a, b], out, where=lambda e: e.x > 0, fill_missing=True)

"""Streamer fields written (issue 31, point 2): we write one `RStreamerField` per class shape (fundamental types,
strings, vectors and nested vectors, a nested class by value, in a vector and a std::array member, a base class,
vectors of derived classes, a ClassDef class) from Python (`(rntuple.Class(...), {"streamer": True})`) and from the
CLI (`import-json` with a class in its JSON schema and `--streamer`); ROOT 6.40, with the classes compiled by ACLiC
(streamer_write_root.py), reads them back with `RNTupleReader` and prints each object with `TBufferJSON`, which must
equal what we wrote; our reader reads them back as the objects written. The field descriptors, columns and extra
type information are those of a file ROOT writes with `RStreamerField`s of the same classes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from nested_values import same
from test_streamer_objects import norm_ours, norm_root

import rntuple
from conftest import need_root

HERE = Path(__file__).resolve().parent
ENTRIES = 3

Class = rntuple.Class

INNER = Class("WInner", {"a": "std::int32_t", "b": "float"})
BASE = Class("WBase", {"d": "double"})
DERIVED = Class("WDerived", {"k": "std::int32_t", "name": "std::string"}, bases=[BASE])
CLASSES = {
    "scalars": Class("WScalars", {"fl": "bool", "c": "char", "uc": "std::uint8_t", "s": "std::int16_t", "us": "std::uint16_t",
                                  "i": "std::int32_t", "u": "std::uint32_t", "l": "std::int64_t", "ul": "std::uint64_t",
                                  "f": "float", "x": "double"}),
    "strings": Class("WStrings", {"str": "std::string", "vs": "std::vector<std::string>"}),
    "vectors": Class("WVectors", {"vf": "std::vector<float>", "vi": "std::vector<std::int32_t>",
                                  "vv": "std::vector<std::vector<double>>", "vb": "std::vector<bool>"}),
    "nested": Class("WNested", {"in": INNER, "items": [INNER], "arr": "std::array<std::int32_t,3>"}),
    "derived": DERIVED,
    "deep": Class("WDeep", {"all": [DERIVED], "one": DERIVED}),
    "versioned": Class("WVersioned", {"a": "std::int32_t", "v": "std::vector<float>"}, version=3),
}


def derived(k):
    return {":_0": {"d": 1.5 + k}, "k": -k, "name": "n" * k}


def value(field, k):
    return {
        "scalars": {"fl": k % 2 == 1, "c": 97 + k, "uc": 200 + k, "s": -3 - k, "us": 60000 + k, "i": 7 * k - 5, "u": 4000000000 + k,
                    "l": -9000000000 * (k + 1), "ul": 18000000000000000000 + k, "f": 2.5 * k, "x": 3.25 / (k + 1)},
        # A string of 300 bytes takes TBufferFile's long form.
        "strings": {"str": "x" * (300 if k == 2 else k), "vs": ["a" * (j + 1) for j in range(k)]},
        "vectors": {"vf": [1.25] * k, "vi": list(range(k)), "vv": [[float(j)] * j for j in range(k)], "vb": [True, k % 2 == 1, False]},
        "nested": {"in": {"a": k, "b": 0.5}, "items": [{"a": j, "b": 0.25 * j} for j in range(k)], "arr": [k, k + 1, k + 2]},
        "derived": derived(k),
        "deep": {"all": [derived(j) for j in range(k)], "one": derived(k)},
        "versioned": {"a": 7 + k, "v": [2.5] * k},
    }[field]


ROWS = [{f: value(f, k) for f in CLASSES} for k in range(ENTRIES)]


def root_script(*args, timeout=900):
    p = subprocess.run([sys.executable, str(HERE / "streamer_write_root.py"), *map(str, args)], capture_output=True, timeout=timeout)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p.stdout.decode().strip().splitlines()[-1]


@pytest.fixture(scope="module")
def root_build(tmp_path_factory):
    """Compiles the classes once (and writes ROOT's own reference file with them)."""
    need_root()
    out = tmp_path_factory.mktemp("streamer_write")
    ref = out / "root_ref.root"
    assert root_script(out / "build", "write", ref) == "written"
    return out / "build", ref


@pytest.fixture(scope="module")
def python_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("streamer_write_py") / "ours.root"
    schema = {f: (c, {"streamer": True}) for f, c in CLASSES.items()}
    rntuple.write(str(path), "T", ROWS, schema=schema)
    return path


def read_by_root(build, path, fields):
    return json.loads(root_script(build, "read", path, *fields))


def test_root_reads_what_python_wrote(root_build, python_file):
    build, _ = root_build
    got = read_by_root(build, python_file, list(CLASSES))
    assert len(got) == ENTRIES
    for k in range(ENTRIES):
        for f in CLASSES:
            same(norm_root(got[k][f], []), norm_ours(ROWS[k][f]), f"{f}[{k}]")


def test_our_reader_reads_the_objects(cli, python_file):
    ours = cli.dump(python_file, "T")
    for k in range(ENTRIES):
        for f in CLASSES:
            same(ours[k][f], json.loads(json.dumps(ROWS[k][f])), f"{f}[{k}]")
    arrays = rntuple.open(str(python_file))["T"].arrays(["derived"])["derived"].to_list()
    assert [a["k"] for a in arrays] == [0, -1, -2]


def test_layout_is_roots(root_build, python_file):
    """Field records (role, type version -1 without ClassDef, checksum flag), columns (SplitIndex64 + Byte) and the
    extra type information (content id 0, in the footer) as in ROOT's own file."""
    import uproot

    _, ref = root_build
    theirs = uproot.open(f"{ref}:T")
    mine = uproot.open(f"{python_file}:T")

    def fields(nt):
        return {f.field_name: (int(f.struct_role), f.type_version, int(f.flags), f.type_name, f.checksum) for f in nt.header.field_records}

    def columns(nt):
        return [(c.type, c.nbits) for c in nt.header.column_records]

    t, m = fields(theirs), fields(mine)
    for name in ("nested", "derived", "strings", "versioned"):
        assert m[name] == t[name], name
    assert set(columns(theirs)) == set(columns(mine)) == {(0x1B, 64), (0x01, 8)}
    ext_t = [(int(e.content_id), e.type_ver, e.type_name) for e in theirs.footer.extension_links.extra_type_info]
    ext_m = [(int(e.content_id), e.type_ver, e.type_name) for e in mine.footer.extension_links.extra_type_info]
    assert ext_m == ext_t == [(0, 0, "")]


def test_root_reads_what_the_cli_wrote(cli, root_build, tmp_path):
    build, _ = root_build
    schema = {
        "derived": {"class": "WDerived", "streamer": True, "bases": [{"class": "WBase", "members": {"d": "double"}}],
                    "members": {"k": "std::int32_t", "name": "std::string"}},
        "nested": {"class": "WNested", "members": {"in": {"class": "WInner", "members": {"a": "std::int32_t", "b": "float"}},
                                                   "items": {"vector": {"class": "WInner", "members": {"a": "std::int32_t", "b": "float"}}},
                                                   "arr": "std::array<std::int32_t,3>"}},
    }
    rows = [{"derived": value("derived", k), "nested": value("nested", k)} for k in range(ENTRIES)]
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(rows))
    out = tmp_path / "cli.root"
    p = cli.run("import-json", str(out), "--ntuple", "T", "--schema", json.dumps(schema), "--input", str(inp), "--streamer", "nested")
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    got = read_by_root(build, out, ["derived", "nested"])
    for k in range(ENTRIES):
        for f in ("derived", "nested"):
            same(norm_root(got[k][f], []), norm_ours(rows[k][f]), f"{f}[{k}]")


def test_refusals_name_field_and_member(tmp_path):
    bad = Class("WMap", {"m": "std::map<std::int32_t,float>"})
    with pytest.raises(Exception, match=r"streamer field 'x'.*member 'm'"):
        rntuple.write(str(tmp_path / "bad.root"), "T", [{"x": {"m": []}}], schema={"x": (bad, {"streamer": True})})
    with pytest.raises(Exception, match=r"field 'x' is marked streamer but is of type 'float'"):
        rntuple.write(str(tmp_path / "bad2.root"), "T", [{"x": 1.0}], schema={"x": ("float", {"streamer": True})})

"""Streamer fields read as objects (issue 31, point 1): ROOT 6.40 writes one `ROOT::RStreamerField` per class
shape (streamer_shapes_root.py: fundamental types and a base class, strings, fixed arrays, vectors and nested
vectors, nested classes by value and in vectors (member-wise), derived classes in vectors, Double32_t/Float16_t
with and without ranges, pointers (null, shared), a variable-length array, set/list/pair/maps, a ClassDef class,
a TObject-derived class, a TNamed member), reads the file back and prints each object with `TBufferJSON`; our
`rntuple dump` must give the same values, read through the file's StreamerInfo records, and `rntuple info` says
each field is read as objects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from nested_values import same

from conftest import need_root

HERE = Path(__file__).resolve().parent
ENTRIES = 4


@pytest.fixture(scope="module")
def root_file(tmp_path_factory):
    need_root()
    out = tmp_path_factory.mktemp("streamer")
    path = out / "shapes.root"
    p = subprocess.run([sys.executable, str(HERE / "streamer_shapes_root.py"), str(path), str(ENTRIES), str(out / "build")],
                       capture_output=True, timeout=900)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return path, json.loads(p.stdout.decode().strip().splitlines()[-1])


def norm_root(v, objects):
    """ROOT's TBufferJSON form -> ours: no _typename, pairs ($pair objects of maps, pair members) as [first, second],
    $ref resolved (objects are numbered in the order they appear), fBits dropped (ROOT's in-memory bits)."""
    if isinstance(v, list):
        return [norm_root(x, objects) for x in v]
    if isinstance(v, dict):
        if "$ref" in v:
            return objects[v["$ref"]]
        if "$pair" in v or str(v.get("_typename", "")).startswith("pair<"):
            return [norm_root(v["first"], objects), norm_root(v["second"], objects)]
        out = {}
        if "_typename" in v:
            objects.append(out)
        for k, x in v.items():
            if k not in ("_typename", "fBits"):
                out[k] = norm_root(x, objects)
        return out
    return v


def norm_ours(v):
    """Ours -> the flat form of TBufferJSON: base classes (`:_N`) merged into the object, fBits dropped."""
    if isinstance(v, list):
        return [norm_ours(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k.startswith(":_"):
                out.update(norm_ours(x))
            elif k != "fBits":
                out[k] = norm_ours(x)
        return out
    return v


SHAPES = ["SScalars", "SStrings", "SArrays", "SVectors", "SNested", "SDeep", "SReduced", "SPointers", "SVarArray",
          "SCollections", "SVersioned", "SObj", "SWithNamed"]


@pytest.mark.parametrize("shape", SHAPES)
def test_objects_equal_roots(cli, root_file, shape):
    path, expected = root_file
    ours = cli.dump(path, "T", fields=[shape])
    assert len(ours) == ENTRIES
    for k in range(ENTRIES):
        want = norm_root(expected[k][shape], [])
        got = ours[k][shape]
        assert isinstance(got, dict), f"entry {k}: {shape} read as {type(got).__name__} (raw bytes?), not an object"
        same(norm_ours(got), want, f"{shape}[{k}]")


def test_info_says_objects(cli, root_file):
    path, _ = root_file
    out = cli.info(path, "T")
    for shape in SHAPES:
        line = next(x for x in out.splitlines() if x.strip().startswith(f"{shape}:"))
        assert "streamer field: read as objects" in line, line


def norm_arrow(v):
    """Our Arrow objects (as awkward lists them) -> the form of norm_root: pairs and map entries ({first, second})
    as [first, second], fBits dropped. Base classes are already flattened in Arrow."""
    if isinstance(v, list):
        return [norm_arrow(x) for x in v]
    if isinstance(v, tuple):
        return [norm_arrow(x) for x in v]
    if isinstance(v, dict):
        if list(v) == ["first", "second"]:
            return [norm_arrow(v["first"]), norm_arrow(v["second"])]
        return {k: norm_arrow(x) for k, x in v.items() if k != "fBits"}
    return v


@pytest.fixture(scope="module")
def arrow_objects(root_file):
    import rntuple

    path, _ = root_file
    return rntuple.open(path)["T"].arrays(SHAPES)


@pytest.mark.parametrize("shape", SHAPES)
def test_arrow_objects_equal_roots(root_file, arrow_objects, shape):
    """The Python package's arrays (Arrow structs of the members, through awkward) equal ROOT's objects."""
    _, expected = root_file
    got = arrow_objects[shape].to_list()
    assert len(got) == ENTRIES
    for k in range(ENTRIES):
        assert isinstance(got[k], dict), f"entry {k}: {shape} read as {type(got[k]).__name__}, not a record"
        same(norm_arrow(got[k]), norm_root(expected[k][shape], []), f"{shape}[{k}]")


def test_arrow_types_are_the_members(root_file):
    """The Arrow schema: a struct per class (bases flattened), Double32_t as float64, maps as lists of pairs, strings as
    large strings; polars reads the stream (the Arrow C stream interface) with the same values."""
    import pyarrow as pa

    import rntuple

    path, _ = root_file
    nt = rntuple.open(path)["T"]
    table = pa.table(nt)
    t = table.schema
    assert [f.name for f in t.field("SScalars").type] == ["d", "fl", "c", "uc", "s", "us", "i", "u", "l", "ul", "f", "x"]
    assert t.field("SReduced").type.field("d32").type == pa.float64()
    assert t.field("SReduced").type.field("h").type == pa.float32()
    m = t.field("SCollections").type.field("m").type
    assert pa.types.is_large_list(m) and [f.name for f in m.value_type] == ["first", "second"]
    assert t.field("SStrings").type.field("ts").type == pa.large_string()
    assert [f.name for f in t.field("SObj").type] == ["fUniqueID", "fBits", "a", "t"]
    assert table.column("SScalars").combine_chunks().field("ul").to_pylist() == [18000000000000000000 + k for k in range(ENTRIES)]
    try:
        import polars as pl
    except ImportError:
        return
    df = pl.DataFrame(pl.from_arrow(nt.to_arrow(["SNested"])))
    assert df["SNested"].struct.field("in").struct.field("a").to_list() == list(range(ENTRIES))


def test_custom_streamer_stays_bytes(cli, root_file):
    """A class with a custom Streamer: ROOT records the class, but the entries are the Streamer's own bytes (one
    big-endian int here); `info` says raw bytes, `dump` and the arrays give each entry's bytes."""
    import rntuple

    path, _ = root_file
    line = next(x for x in cli.info(path, "T").splitlines() if x.strip().startswith("SCustom:"))
    assert "read as raw bytes" in line, line
    want = [bytes([1, 2, 3, 4 + k]) for k in range(ENTRIES)]
    assert [bytes(e["SCustom"]) for e in cli.dump(path, "T", fields=["SCustom"])] == want
    assert [bytes(b) for b in rntuple.open(path)["T"].arrays(["SCustom"])["SCustom"].to_list()] == want


def test_streamer_objects_off_gives_bytes(root_file, arrow_objects):
    """`rntuple.open(path, streamer_objects=False)`: each entry's raw bytes (what ROOT's TBufferFile wrote: byte
    count and version first)."""
    import rntuple

    path, _ = root_file
    raw = rntuple.open(path, streamer_objects=False)["T"].arrays(["SVersioned"])["SVersioned"].to_list()
    assert all(isinstance(b, bytes) for b in raw)
    assert raw[0][4:6] == b"\x00\x05", raw[0][:8]  # ClassDef(SVersioned, 5)
    assert arrow_objects["SVersioned"].to_list()[2]["a"] == 102

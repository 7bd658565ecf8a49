"""Streamer fields read as objects (issue 31, point 1): ROOT 6.40 writes one `ROOT::RStreamerField` per class
shape (streamer_shapes_root.py: fundamental types and a base class, strings, fixed arrays, vectors and nested
vectors, nested classes by value and in vectors (member-wise), derived classes in vectors, Double32_t/Float16_t
with and without ranges, pointers (null, shared), a variable-length array, set/list/pair/maps, a ClassDef class,
a TObject-derived class, a TNamed member), reads the file back and prints each object with `TBufferJSON`; our
`rntuple dump` must give the same values, read through the file's StreamerInfo records, and `rntuple info` says
each field is read as objects."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import skip_or_fail

HERE = Path(__file__).resolve().parent
ENTRIES = 4


@pytest.fixture(scope="module")
def root_file(tmp_path_factory):
    try:
        import ROOT  # noqa: F401
    except ImportError:
        skip_or_fail("ROOT (pip package `root`) is not installed")
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


def same(a, b, path="") -> None:
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), f"{path}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{path}: members {list(a)} != {list(b) if isinstance(b, dict) else b!r}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


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

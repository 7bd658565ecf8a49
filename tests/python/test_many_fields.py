"""Reading an RNTuple of more top-level fields than one read takes at once (``_query.FIELD_GROUP``): the fields
are read in groups, each group's values copied out of its Arrow batch when they are small. The result must equal
a read of the same fields at once, whatever the field types and the entry range."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import rntuple
from rntuple._reading import query as _query


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """A file of 4,100 fields, cycling through float, std::vector<std::int64_t>, std::string and an optional
    double, in 5 entries."""
    n, entries = 4100, 5
    cols = {}
    for i in range(n):
        k = i % 4
        if k == 0:
            cols[f"f{i}"] = np.arange(entries, dtype=np.float32) + i
        elif k == 1:
            cols[f"v{i}"] = ak.Array([list(range(e % 3)) for e in range(entries)])
        elif k == 2:
            cols[f"s{i}"] = ak.Array([f"{i}-{e}" for e in range(entries)])
        else:
            cols[f"o{i}"] = ak.Array([None if e % 2 else float(i + e) for e in range(entries)])
    path = tmp_path_factory.mktemp("wide") / "wide.root"
    rntuple.write(str(path), "Events", ak.zip(cols, depth_limit=1))
    return path, list(cols), entries


@pytest.mark.parametrize("start,stop", [(None, None), (1, 4), (3, 3)])
def test_grouped_read_equals_one_read(wide, monkeypatch, start, stop):
    path, names, entries = wide
    assert len(names) > _query.FIELD_GROUP
    grouped = rntuple.open(path)["Events"].arrays(entry_start=start, entry_stop=stop)
    monkeypatch.setattr(_query, "FIELD_GROUP", 1 << 30)
    whole = rntuple.open(path)["Events"].arrays(entry_start=start, entry_stop=stop)
    assert grouped.fields == whole.fields == names
    assert grouped.layout.form == whole.layout.form
    assert ak.to_list(grouped) == ak.to_list(whole)
    a, b = (start or 0), (entries if stop is None else stop)
    assert len(grouped) == b - a
    if b > a:
        assert grouped["f4096"].tolist() == [4096.0 + e for e in range(a, b)]
        assert grouped["s4098"].tolist() == [f"4098-{e}" for e in range(a, b)]
        assert grouped["v1"].tolist() == [list(range(e % 3)) for e in range(a, b)]
        assert grouped["o4099"].tolist() == [None if e % 2 else 4099.0 + e for e in range(a, b)]


def test_small_groups_are_copied_out_of_their_batch(wide):
    """A group of small values owns them (numpy arrays of their own, not views of the Arrow buffers)."""
    path, _, _ = wide
    arr = rntuple.open(path)["Events"].arrays()
    data = arr.layout.content("f4096").data
    assert data.base is None and data.flags.owndata
    assert arr["f4096"].tolist() == [4096.0 + e for e in range(5)]

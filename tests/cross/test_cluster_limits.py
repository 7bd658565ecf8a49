"""Cluster limits inside one batch: one `write`/`extend` of many wide entries with a small `max_unzipped_cluster_size`
gives many clusters (no more than the limit plus one entry each), through the sequential writer and a fill context
of the parallel writer; ROOT 6.40 and uproot read them equal to what was written. About 10 s (one ROOT process)."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest
import uproot
from root_subprocess import run_root

N = 6000
LIMIT = 128 * 1024
OPTIONS = {"compression": 0, "approx_zipped_cluster_size": LIMIT, "max_unzipped_cluster_size": LIMIT, "max_unzipped_page_size": 32 * 1024}

ROOT_SCRIPT = r"""
out, readers = {}, []
for path in sys.argv[1:]:
    r = ROOT.RNTupleReader.Open("Events", path)
    readers.append(r)  # a view must not outlive its reader
    ids = r.GetView["std::uint64_t"]("id")
    hits = r.GetView["std::vector<float>"]("hits")
    n = int(r.GetNEntries())
    out[path] = {"entries": n, "clusters": int(r.GetDescriptor().GetNClusters()),
                 "ids": [int(ids(i)) for i in range(n)], "sizes": [int(hits(i).size()) for i in range(n)],
                 "sums": [float(sum(hits(i))) for i in range(n)]}
done(out)
"""


def _data() -> ak.Array:
    sizes = 50 + (np.arange(N) * 37 % 101)
    values = np.concatenate([np.arange(k, dtype=np.float32) * 0.5 + i for i, k in enumerate(sizes)])
    return ak.zip({"id": np.arange(N, dtype=np.uint64), "hits": ak.unflatten(values, sizes)}, depth_limit=1)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    import rntuple
    d = tmp_path_factory.mktemp("limits")
    data = _data()
    sequential, parallel = d / "sequential.root", d / "parallel.root"
    rntuple.write(sequential, "Events", data, **OPTIONS)  # one batch
    with rntuple.ParallelWriter(parallel, "Events", rntuple.infer_schema(data), **OPTIONS) as w:
        with w.fill_context() as ctx:
            ctx.extend(data)  # one batch
    return data, [sequential, parallel]


def test_one_batch_is_cut_into_clusters_of_the_limit(written):
    import rntuple

    data, paths = written
    widest = 8 + 8 + 4 * int(ak.max(ak.num(data.hits)))
    for path in paths:
        t = rntuple.open(path)["Events"]
        bounds = t.cluster_boundaries
        assert len(bounds) - 1 >= 8, (path.name, bounds)  # ~3 MB of entries at 128 kB per cluster
        per_entry = 8 + 8 + 4 * ak.to_numpy(ak.num(data.hits))
        for a, b in zip(bounds, bounds[1:]):
            assert per_entry[a:b].sum() <= LIMIT + widest, (path.name, a, b)


def test_root_and_uproot_read_what_was_written(written):
    data, paths = written
    root = run_root(ROOT_SCRIPT, *paths)
    sizes = ak.to_list(ak.num(data.hits))
    sums = ak.to_list(ak.sum(data.hits, axis=1))
    for path in paths:
        got = root[str(path)]
        assert got["entries"] == N and got["clusters"] >= 8, path.name
        assert got["ids"] == list(range(N)) and got["sizes"] == sizes, path.name
        assert np.allclose(got["sums"], sums), path.name
        with uproot.open(path) as f:
            theirs = f["Events"].arrays()
        assert theirs.id.to_list() == list(range(N)) and ak.to_list(theirs.hits) == ak.to_list(data.hits), path.name

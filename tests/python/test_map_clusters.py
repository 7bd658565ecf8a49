"""Chain.map_clusters: a function over every cluster of many files on worker threads (issue 56), the clusters
of all inputs taken largest first: results in chain order equal to reading the chain whole, for 1 and 3 workers
and every library; the first exception stops the work and is raised; bad arguments are refused."""

from __future__ import annotations

import threading

import awkward as ak
import numpy as np
import pytest

import rntuple


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("map_clusters")
    paths = []
    rng = np.random.default_rng(56)
    for k, n in enumerate([5000, 300, 40, 1200]):  # one input holds most entries, in several clusters
        jets = ak.unflatten(rng.normal(30, 5, n * 2).astype(np.float32), np.full(n, 2))
        data = {"event": np.arange(n, dtype=np.int64) + 100_000 * k, "Jet_pt": jets}
        p = d / f"in{k}.root"
        rntuple.write(str(p), "Events", data, approx_zipped_cluster_size=4000)
        paths.append(str(p))
    return paths


def test_results_in_chain_order_equal_the_whole_read(inputs):
    c = rntuple.chain(inputs)
    parts = c.parts(0)
    assert len(parts) > len(inputs)  # several clusters in the large input
    whole = c.arrays(fields=["event", "Jet_pt"])
    for workers in (1, 3):
        seen: set[int] = set()
        chunks = c.map_clusters(lambda chunk, seen=seen: seen.add(threading.get_ident()) or chunk, fields=["event", "Jet_pt"], workers=workers)
        assert len(chunks) == len(parts)
        assert [len(x) for x in chunks] == [b - a for a, b in parts]
        assert ak.to_list(ak.concatenate(chunks)) == ak.to_list(whole)
        assert len(seen) <= workers
    sums = c.map_clusters(lambda t: float(np.sum(t["event"])), fields="event", library="np", workers=2)
    assert sum(sums) == float(np.sum(whole["event"]))
    tables = c.map_clusters(lambda t: t.num_rows, library="pa")
    assert tables == [b - a for a, b in parts]


def test_the_first_exception_is_raised_and_bad_arguments_refused(inputs):
    c = rntuple.chain(inputs)

    def boom(chunk):
        if int(chunk["event"][0]) >= 300_000:
            raise KeyError("a cluster of the last input")
        return 0

    with pytest.raises(KeyError, match="last input"):
        c.map_clusters(boom, fields=["event"], workers=2)
    with pytest.raises(ValueError, match="workers"):
        c.map_clusters(len, workers=0)
    with pytest.raises(Exception, match="nope"):
        c.map_clusters(len, fields=["nope"], workers=2)

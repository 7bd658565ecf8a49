"""What a notebook shows (``_repr_html_`` of files and RNTuples) and ``RNTuple.hist`` (a ``hist.Hist``)."""

from __future__ import annotations

import html.parser
import json
import re
import sys

import awkward as ak
import numpy as np
import pytest

import rntuple
from conftest import skip_or_fail
from conftest import testdata_dir as shared_testdata


class _Tags(html.parser.HTMLParser):
    """Checks that every tag is closed in order; collects the text and the summaries of <details>."""

    VOID = {"br", "hr", "img", "meta", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.text, self.summaries, self.details = [], [], [], 0
        self._summary = None

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)
        self.details += tag == "details"
        if tag == "summary":
            self._summary = []

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()
        if tag == "summary":
            self.summaries.append("".join(self._summary).strip())
            self._summary = None

    def handle_data(self, data):
        self.text.append(data)
        if self._summary is not None:
            self._summary.append(data)


def _parse(markup: str) -> _Tags:
    p = _Tags()
    p.feed(markup)
    p.close()
    assert p.stack == [], f"unclosed: {p.stack}"
    return p


def _si(n: int) -> str:
    from rntuple._reading.display import size

    return size(n)


def _events(path, n=2000):
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 5, n)
    data = {
        "nMuon": counts.astype(np.int32),
        "Muon_pt": ak.unflatten(rng.exponential(20, int(counts.sum())).astype(np.float32), counts),
        "MET": ak.zip({"pt": rng.exponential(30, n), "phi": rng.uniform(-3, 3, n)}),
        "tag": ["a", "b"] * (n // 2),
    }
    rntuple.write(path, "Events", data, approx_zipped_cluster_size=4000)
    return data


def test_ntuple_html_has_the_totals_and_each_fields_sizes(tmp_path):
    path = tmp_path / "events.root"
    _events(path)
    t = rntuple.open(path)["Events"]
    markup = t._repr_html_()
    p = _parse(markup)
    text = " ".join(p.text)
    total = t.storage_stats()
    assert f"{t.num_entries:,} entries" in text and f"{total['clusters']:,} clusters" in text
    assert f"{_si(total['stored_bytes'])} on disk" in text
    for name, typ in t.schema.items():
        s = t.storage_stats([name])
        row = re.search(rf"<tr><td>(?:<details><summary>)?{name}(?:</summary>.*?</details>)?</td><td class='t'>(.*?)</td>(.*?)</tr>", markup)
        assert row, name
        assert row.group(1) == typ.replace("<", "&lt;").replace(">", "&gt;")
        cells = re.findall(r"<td class='n'>(.*?)</td>", row.group(2))
        assert cells[:2] == [_si(s["stored_bytes"]), _si(s["uncompressed_bytes"])]
        assert float(cells[2]) == pytest.approx(s["uncompressed_bytes"] / s["stored_bytes"], abs=0.006)
    # the record's members are inside its collapsible node, each with its own sizes (as rntuple info counts them)
    assert "MET" in p.summaries
    sizes = t._native.field_sizes()
    ids = {(r["parent"], r["name"]): r["id"] for r in t.field_records}
    met = ids[(None, "MET")]
    assert sizes[met][0] == t.storage_stats(["MET"])["stored_bytes"] == sum(sizes[ids[(met, m)]][0] for m in ("pt", "phi"))
    member = "".join(
        f"<li>{m} <span class='t'>double</span> <span class='s'>{_si(sizes[ids[(met, m)]][0])} ({_si(sizes[ids[(met, m)]][1])} uncompressed, "
        f"{sizes[ids[(met, m)]][1] / sizes[ids[(met, m)]][0]:.2f}x)</span></li>"
        for m in ("pt", "phi")
    )
    assert f"<summary>MET</summary><ul style='margin:0;padding-left:1.2em'>{member}</ul>" in markup


def test_file_html_lists_every_ntuple(tmp_path):
    path = tmp_path / "two.root"
    with rntuple.FileWriter(path) as fw:
        fw.writer("A", {"x": "float"}).extend({"x": np.zeros(3, np.float32)})
        fw.writer("B<1>", {"y": "std::int32_t"}).extend({"y": np.zeros(2, np.int32)})
    markup = rntuple.open(path)._repr_html_()
    p = _parse(markup)
    text = " ".join(p.text)
    assert "2 RNTuples" in text and "RNTuple A" in text and "3 entries" in text
    assert "RNTuple B<1>" in p.summaries  # the second collapsed, its name escaped in the markup
    assert "B&lt;1&gt;" in markup


def test_shared_nanoaod_html_is_quick_and_bounded():
    path = shared_testdata() / "rntuple" / "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
    if not path.exists():
        skip_or_fail(f"shared test file missing: {path}")
    f = rntuple.open(path)
    t = f[f.ntuple_names()[0]]
    markup = f._repr_html_()
    _parse(markup)
    shown = re.findall(r"<tr><td>", markup)
    assert len(shown) == min(len(t.schema), 300)
    if len(t.schema) > 300:
        assert f"... and {len(t.schema) - 300:,} more top-level fields" in markup


def _needed(module: str):
    """``module`` (pinned in requirements-test.txt): missing, a loud skip, a failure under CI=true."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        skip_or_fail(f"{module} is not installed (pip install -r requirements-test.txt)")


def _flat(data, field):
    return ak.to_numpy(ak.flatten(data[field], axis=None)).astype(np.float64)


def test_hist_equals_numpy(tmp_path):
    hist = _needed("hist")
    path = tmp_path / "events.root"
    data = _events(path)
    t = rntuple.open(path)["Events"]
    # a collection's elements, flattened; a given range: under- and overflow counted
    h = t.hist("Muon_pt", bins=25, range=(5.0, 60.0), step_size=300)
    assert isinstance(h, hist.Hist)
    v = _flat(data, "Muon_pt")
    counts, edges = np.histogram(v, bins=25, range=(5.0, 60.0))
    assert np.array_equal(h.values(), counts)
    assert np.allclose(h.axes[0].edges, edges)
    flow = h.values(flow=True)
    assert flow[0] == np.sum(v < 5.0) and flow[-1] == np.sum(v >= 60.0)
    assert h.sum(flow=True) == len(v)
    # no range: the values' extent, nothing in the flow bins; the mean as numpy's
    h = t.hist("MET.pt", bins=40)
    v = ak.to_numpy(data["MET"]["pt"])
    assert h.sum() == len(v) and h.values(flow=True)[0] == 0 and h.values(flow=True)[-1] == 0
    assert h.axes[0].edges[0] == v.min() and h.axes[0].edges[-1] >= v.max()
    centers = h.axes[0].centers
    assert np.sum(centers * h.values()) / h.sum() == pytest.approx(v.mean(), rel=0.02)
    # a cut on entries
    h = t.hist("Muon_pt", where="nMuon >= 3", bins=10, range=(0, 100))
    keep = data["nMuon"] >= 3
    v = ak.to_numpy(ak.flatten(data["Muon_pt"][keep])).astype(np.float64)
    assert np.array_equal(h.values(), np.histogram(v, bins=10, range=(0, 100))[0])
    # a field that is not numeric, a bad range: errors that say so
    with pytest.raises(rntuple.InvalidArgumentError, match="'tag'.*not numbers"):
        t.hist("tag")
    with pytest.raises(rntuple.InvalidArgumentError, match="low < high"):
        t.hist("nMuon", range=(3, 3))


def test_notebook_shows_the_html(tmp_path):
    nbformat = _needed("nbformat")
    nbclient = _needed("nbclient")
    path = tmp_path / "events.root"
    _events(path)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import rntuple\nf = rntuple.open({str(path)!r})\nf"), nbformat.v4.new_code_cell("f['Events']")]
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    except Exception as e:  # no kernel spec: the venv's ipykernel serves this interpreter
        if "No such kernel" not in str(e):
            raise
        from ipykernel.kernelspec import install

        install(user=False, prefix=sys.prefix)
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    for cell in nb.cells:
        out = [o for o in cell.outputs if o.get("output_type") == "execute_result"]
        assert out, json.dumps(cell.outputs)[:500]
        shown = out[0]["data"]["text/html"]
        _parse(shown)
        assert "RNTuple Events" in shown and "2,000 entries" in shown and "Muon_pt" in shown

"""`rntuple report`: the HTML page of shared files and of the 969-field NanoAOD file opened in headless Chromium
(Debian's `chromium`, driven through the DevTools protocol: cdp.py): no console error, no request but the file
itself, the numbers the page shows (entries, field sizes, clusters, columns, page sizes, histograms) equal to
`info --json`, a screenshot that is not blank, and a collapsed schema node that opens on a mouse click. The report
of the NanoAOD file stays under 5 MB (its time is measured in bench/RESULTS.md, never asserted here)."""

from __future__ import annotations

import json

import numpy as np
import pngread
import pytest
from cdp import Browser, find_chromium

from conftest import skip_or_fail

NANO = "rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
CASES = [
    ("rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root", "Events", ["--hist", "Muon_pt,nMuon", "--hist", "Muon_eta"]),
    ("rntuple/test_stl_containers_rntuple_v1-0-0-0.root", "ntuple", []),
    ("rntuple/ntpl001_staff_rntuple_v1-0-1-0.root", "Staff", ["--hist", "Age"]),
    (NANO, "Events", []),
]

# What the page shows, read from its elements (not from its JSON block).
READ_DOM = """(() => {
  const num = (e, a) => Number(e.getAttribute(a));
  const all = (q) => Array.from(document.querySelectorAll(q));
  return {
    cards: Object.fromEntries(all('[data-key]').map(e => [e.dataset.key, e.dataset.value])),
    tree: all('#schema [data-field]').map(e => [e.dataset.field, num(e, 'data-compressed'), num(e, 'data-uncompressed'), num(e, 'data-pages')]),
    treemap: all('#treemap rect.tm[data-level="1"]').map(e => [e.dataset.field, num(e, 'data-bytes'), num(e, 'width') * num(e, 'height')]),
    nested: all('#treemap rect.tm:not([data-level="1"])').map(e => [e.dataset.field, num(e, 'data-bytes')]),
    clusters: all('#clustermap g.cluster').map(g => [num(g, 'data-first'), num(g, 'data-last'), num(g, 'data-bytes'),
      Array.from(g.querySelectorAll('rect')).reduce((s, r) => s + num(r, 'data-bytes'), 0)]),
    cluster_rows: all('#clusters tbody tr').map(e => [num(e, 'data-cluster'), num(e, 'data-entries'), num(e, 'data-compressed')]),
    columns: all('#columns tbody tr').map(e => [num(e, 'data-column'), num(e, 'data-compressed'), num(e, 'data-uncompressed')]),
    pagesizes: all('#pagesizes rect.pagesize').map(e => [num(e, 'data-lo'), num(e, 'data-pages'), num(e, 'data-bytes')]),
    histograms: all('figure.histogram').map(f => [f.dataset.field, Array.from(f.querySelectorAll('rect.bar')).map(r => num(r, 'data-count'))]),
  };
})()"""

# Scrolls the first collapsed node of the schema tree into view: its field and where its summary is.
FIND_CLOSED = """(() => {
  const d = document.querySelector('#schema details:not([open])');
  if (!d) return null;
  const s = d.querySelector(':scope > summary');
  s.scrollIntoView({block: 'center'});
  const r = s.getBoundingClientRect();
  return {field: d.dataset.field, x: r.left + 12, y: r.top + r.height / 2,
          child_visible: d.querySelector(':scope > .f, :scope > .own').checkVisibility()};
})()"""


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        skip_or_fail("chromium is not installed (apt-get install chromium; `make test` installs it)")
    with Browser.start() as b:
        yield b


def screenshot(page) -> np.ndarray:
    import base64

    data = base64.b64decode(page.call("Page.captureScreenshot", format="png", optimizeForSpeed=True)["data"])
    return pngread.decode(data)


@pytest.mark.parametrize("rel,name,args", CASES, ids=[c[0].split("/")[-1][:40] for c in CASES])
def test_report_in_browser(testdata, cli, browser, tmp_path, rel, name, args):
    path = testdata / rel
    if not path.exists():
        skip_or_fail(f"{path} is missing")
    out = tmp_path / "report.html"
    p = cli.run("report", path, "--ntuple", name, *args, "-o", out)
    assert p.returncode == 0, p.stderr.decode()
    summary = json.loads(p.stdout)
    assert summary["bytes"] == out.stat().st_size < 5_000_000, f"the report is {out.stat().st_size} bytes"
    info = json.loads(cli.run("info", path, "--ntuple", name, "--json").stdout)["ntuples"][0]

    page = browser.open(out.as_uri())
    assert page.evaluate("document.readyState") == "complete"
    data = page.evaluate("JSON.parse(document.getElementById('report-data').textContent)")
    assert data["ntuple"] == info, "the page's JSON is not `info --json`'s object"
    dom = page.evaluate(READ_DOM)

    cards = dom["cards"]
    for key in ("entries", "clusters", "compressed_bytes", "uncompressed_bytes", "pages"):
        assert int(cards[key]) == info[key], key
    assert (int(cards["fields"]), int(cards["columns"])) == (len(info["fields"]), len(info["columns"]))
    assert int(cards["header"]) == info["header"]["compressed_bytes"] and float(cards["metadata_ratio"]) == info["metadata_ratio"]

    fields = {f["path"]: f for f in info["fields"]}
    assert [t[0] for t in dom["tree"]] == [f["path"] for f in info["fields"]], "the tree shows every field, in order"
    for field, stored, unzipped, pages in dom["tree"]:
        assert (stored, unzipped, pages) == (fields[field]["compressed_bytes"], fields[field]["uncompressed_bytes"], fields[field]["pages"]), field
    tops = [f for f in info["fields"] if f["top_level"]]
    assert [(f["path"], f["compressed_bytes"]) for f in tops] == [tuple(t[:2]) for t in dom["treemap"]]
    assert sum(t[1] for t in dom["treemap"]) == info["compressed_bytes"]
    # squarified: the rectangles tile the 960 x 540 map, each with its share of the bytes
    assert sum(t[2] for t in dom["treemap"]) == pytest.approx(960 * 540, rel=1e-3)
    for field, b, area in dom["treemap"]:
        assert area / (960 * 540) == pytest.approx(b / info["compressed_bytes"], abs=2e-4), field
    assert all(fields[f]["compressed_bytes"] == b for f, b in dom["nested"])

    groups = dom["clusters"]
    details = info["cluster_details"]
    assert groups[0][0] == 0 and groups[-1][1] == len(details) - 1
    for first, last, total, segments in groups:
        assert total == segments == sum(c["compressed_bytes"] for c in details[first:last + 1]), (first, last)
    assert [(c["id"], c["entries"], c["compressed_bytes"]) for c in details] == [tuple(r) for r in dom["cluster_rows"]]
    assert [(c["id"], c["compressed_bytes"], c["uncompressed_bytes"]) for c in info["columns"]] == [tuple(r) for r in dom["columns"]]
    assert [(b["lo"], b["pages"], b["bytes"]) for b in info["page_sizes"]["buckets"]] == [tuple(r) for r in dom["pagesizes"]]
    assert [h["field"] for h in data["histograms"]] == summary["histograms"] == [h[0] for h in dom["histograms"]]
    assert [h["counts"] for h in data["histograms"]] == [h[1] for h in dom["histograms"]]
    if args:
        assert summary["histograms"] == [x for a in args[1::2] for x in a.split(",")]
    else:  # the first few numeric top-level fields
        assert 1 <= len(summary["histograms"]) <= 3 and all(h in fields and fields[h]["top_level"] for h in summary["histograms"])

    pixels = screenshot(page)
    colours = len(np.unique(pixels.reshape(-1, pixels.shape[2]), axis=0))
    inked = np.any(pixels < 240, axis=2).mean()
    assert colours >= 8 and inked > 0.02, f"the screenshot looks blank: {colours} colours, {inked:.1%} inked"
    page.evaluate("document.getElementById('treemap').scrollIntoView()")
    treemap = screenshot(page)
    assert len(np.unique(treemap.reshape(-1, treemap.shape[2]), axis=0)) >= min(8, len(tops)), "the treemap is not drawn"

    closed = page.evaluate(FIND_CLOSED)
    nested = any(not f["top_level"] for f in info["fields"])
    assert (closed is not None) == nested, "a schema with sub-fields has collapsed nodes (and only such a schema)"
    if closed:
        assert closed["child_visible"] is False, "a collapsed node shows its children"
        page.click(closed["x"], closed["y"])
        sel = f"#schema details[data-field=\"{closed['field']}\"]"
        opened = page.evaluate(f"(() => {{ const d = document.querySelector('{sel}'); return [d.open, "
                               f"d.querySelector(':scope > .f, :scope > .own').checkVisibility()]; }})()")
        assert opened == [True, True], f"a click on {closed['field']} did not open it (open, child visible): {opened}"

    assert page.problems() == [], page.problems()
    assert page.requests() == [out.as_uri()], f"requests other than the page itself: {page.requests()}"

"""`rntuple hist`: the histogram of a field (a collection's elements flattened) against numpy's histogram of the same
values read by uproot: edges, counts, under- and overflow, entries, mean and std; with `--where` and `--range`; the
terminal drawing read as a person reads it; the PNG decoded and the SVG parsed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import awkward as ak
import numpy as np
import pngread
import pytest
import uproot

from conftest import skip_or_fail

MUONS = "rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"


@pytest.fixture(scope="module")
def muons(testdata):
    path = testdata / MUONS
    if not path.exists():
        skip_or_fail(f"{path} is missing")
    return path, uproot.open(path)["Events"].arrays(["nMuon", "Muon_pt", "Muon_eta", "Muon_charge"])


def hist_json(cli, *args) -> dict:
    p = cli.run("hist", *args, "--json")
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def expected(values: np.ndarray, edges: list) -> dict:
    """What the histogram of `values` over `edges` must say (ROOT's TH1 conventions: the last edge excluded)."""
    lo, hi = edges[0], edges[-1]
    inside = values[(values >= lo) & (values < hi)]
    counts, _ = np.histogram(inside, bins=np.asarray(edges))
    return {"counts": counts.tolist(), "underflow": int((values < lo).sum()), "overflow": int((values >= hi).sum()),
            "entries": len(values), "mean": float(inside.mean()), "std": float(inside.std())}


def check(got: dict, values: np.ndarray, where: str):
    want = expected(values, got["edges"])
    for key in ("counts", "underflow", "overflow", "entries"):
        assert got[key] == want[key], f"{where}: {key} {got[key]} != numpy's {want[key]}"
    assert got["mean"] == pytest.approx(want["mean"], rel=1e-12), where
    assert got["std"] == pytest.approx(want["std"], rel=1e-9), where
    assert got["in_range"] == sum(want["counts"])


def test_default_range_is_min_to_max(cli, muons):
    path, arrays = muons
    pt = ak.to_numpy(ak.flatten(arrays["Muon_pt"])).astype(np.float64)
    got = hist_json(cli, path, "Muon_pt", "--bins", "37")
    hi = np.nextafter(pt.max(), np.inf)
    assert got["edges"] == np.linspace(pt.min(), hi, 38).tolist(), "edges are not numpy.linspace(min, just above max)"
    check(got, pt, "Muon_pt")
    assert (got["underflow"], got["overflow"], got["entries"]) == (0, 0, len(pt)) and sum(got["counts"]) == len(pt)
    assert np.histogram(pt, bins=37)[0].tolist() == got["counts"], "numpy's own binning of min..max differs"


@pytest.mark.parametrize("range_args", [["--range", "5", "60"], ["--range", "5:60"], ["--range=5:60"]])
def test_where_and_range(cli, muons, range_args):
    path, arrays = muons
    sel = arrays[arrays["nMuon"] >= 2]
    pt = ak.to_numpy(ak.flatten(sel["Muon_pt"])).astype(np.float64)
    got = hist_json(cli, path, "Muon_pt", "--where", "nMuon >= 2", "--bins", "11", *range_args)
    assert got["edges"] == np.linspace(5, 60, 12).tolist() and got["where"] == "nMuon >= 2"
    check(got, pt, "Muon_pt where nMuon >= 2")
    assert got["underflow"] > 0 and got["overflow"] > 0, "the range should cut both sides of this sample"


def test_negative_range_scalar_field_and_chain(cli, muons):
    path, arrays = muons
    got = hist_json(cli, path, "Muon_eta", "--where", "any(Muon_charge < 0)", "--range", "-2.1", "2.1", "--bins", "7")
    # the condition keeps whole entries: the eta of every muon of an entry with a negative muon
    keep = ak.any(arrays["Muon_charge"] < 0, axis=1)
    eta = ak.to_numpy(ak.flatten(arrays["Muon_eta"][keep])).astype(np.float64)
    check(got, eta, "Muon_eta where any(Muon_charge < 0)")
    n = ak.to_numpy(arrays["nMuon"]).astype(np.float64)
    check(hist_json(cli, path, "nMuon", "--bins", "5"), n, "nMuon")
    # two inputs chain (the same file twice, one named as FILE:NTUPLE): every count doubles
    twice = hist_json(cli, path, f"{path}:Events", "nMuon", "--bins", "5")
    once = hist_json(cli, path, "nMuon", "--bins", "5")
    assert twice["counts"] == [2 * c for c in once["counts"]] and twice["entries"] == 2 * len(n)


def test_terminal_drawing(cli, muons):
    path, arrays = muons
    got = hist_json(cli, path, "Muon_pt", "--bins", "10", "--range", "0", "50")
    p = cli.run("hist", path, "Muon_pt", "--bins", "10", "--range", "0", "50")
    assert p.returncode == 0, p.stderr.decode()
    lines = p.stdout.decode().splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert lines[0] == "Muon_pt: 10 bins from 0 to 50"
    rows = [re.fullmatch(r"\s*(\S+) ┤\s+(\d+) ?([█▏▎▍▌▋▊▉]*)", line) for line in lines]
    rows = [m for m in rows if m]
    assert [m[1] for m in rows] == ["0", "5", "10", "15", "20", "25", "30", "35", "40", "45"], "the bins' lower edges"
    assert [int(m[2]) for m in rows] == got["counts"]
    most = max(got["counts"])
    eighths = {"█": 8, "▏": 1, "▎": 2, "▍": 3, "▌": 4, "▋": 5, "▊": 6, "▉": 7}
    for m, c in zip(rows, got["counts"]):
        assert sum(eighths[ch] for ch in m[3]) == max(c * 55 * 8 // most, 1 if c else 0), f"bar of {c}: {m[3]!r}"
    assert re.fullmatch(r"\s*50 ┘", lines[lines.index(next(x for x in lines if "┘" in x))])
    under = next(x for x in lines if x.strip().startswith("underflow"))
    over = next(x for x in lines if x.strip().startswith("overflow"))
    assert int(under.split()[-1]) == got["underflow"] and int(over.split()[-1]) == got["overflow"] > 0
    stats = re.fullmatch(r"entries (\d+)  mean (\S+)  std (\S+)  \(in range (\d+)\)", lines[-1])
    assert stats, lines[-1]
    assert int(stats[1]) == got["entries"] and int(stats[4]) == got["in_range"]
    assert float(stats[2]) == pytest.approx(got["mean"], rel=1e-5) and float(stats[3]) == pytest.approx(got["std"], rel=1e-5)


def test_png_picture(cli, muons, tmp_path):
    path, _ = muons
    out = tmp_path / "eta.png"
    got = hist_json(cli, path, "Muon_eta", "--bins", "24", "--output", out)
    pixels = pngread.decode(out.read_bytes())
    assert pixels.shape == (420, 720, 3)
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) >= 3, f"a picture of {len(colours)} colours"
    bar = np.all(pixels == [0x48, 0x78, 0xB0], axis=2)
    assert bar.sum() > 0.1 * 720 * 420 * 0.5, "the bars cover too little"
    # the bars' heights follow the counts: the tallest column of bar pixels is in the fullest bin
    heights = bar.sum(axis=0)
    columns = np.nonzero(heights)[0]
    left, right = columns.min(), columns.max() + 1
    bin_of_tallest = int((np.argmax(heights) - left) * 24 // (right - left))
    assert got["counts"][bin_of_tallest] == max(got["counts"]), (bin_of_tallest, got["counts"])
    # dark text (tick labels and statistics) is drawn too
    assert np.all(pixels == [0x33, 0x33, 0x33], axis=2).sum() > 500


def test_svg_picture(cli, muons, tmp_path):
    path, _ = muons
    out = tmp_path / "pt.svg"
    got = hist_json(cli, path, "Muon_pt", "--bins", "17", "--where", "nMuon == 1", "-o", out)
    root = ET.parse(out).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    bars = root.findall(".//s:rect[@class='bar']", ns)
    assert len(bars) == 17
    assert [int(b.get("data-count")) for b in bars] == got["counts"]
    assert [float(b.get("data-lo")) for b in bars] == got["edges"][:-1]
    heights = [float(b.get("height")) for b in bars]
    assert heights.index(max(heights)) == got["counts"].index(max(got["counts"]))
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert f"entries {got['entries']}" in texts and "Muon_pt (where nMuon == 1)" in texts


@pytest.mark.parametrize("args,message", [
    (["Muon_ptt"], "no field 'Muon_ptt'"),
    (["Muon_pt", "--range", "5", "1"], "--range 5 1"),
    (["Muon_pt", "--bins", "0"], "0 bins"),
    (["Muon_pt", "--where", "nMuon >"], "nMuon >"),
    (["Muon_pt", "-o", "x.jpg"], ".png or .svg"),
])
def test_errors_name_what(cli, muons, args, message, tmp_path):
    path, _ = muons
    p = cli.run("hist", path, *[str(tmp_path / a) if a.endswith(".jpg") else a for a in args])
    err = p.stderr.decode()
    assert p.returncode == 1 and message in err and err.count("\n") == 1, err


def test_collection_count_and_expression(cli, testdata):
    """NanoAOD's flat layout: `count(Jet)` counts the elements of the `Jet_*` lists (the first one is read for it),
    and the histogrammed value may be an expression of fields."""
    path = testdata / "rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
    if not path.exists():
        skip_or_fail(f"{path} is missing")
    a = uproot.open(path)["Events"].arrays(["nJet", "Jet_pt"])
    keep = a["nJet"] >= 8
    pt = ak.to_numpy(ak.flatten(a["Jet_pt"][keep])).astype(np.float64)
    got = hist_json(cli, path, "Jet_pt * 2", "--where", "count(Jet) >= 8", "--bins", "8")
    check(got, 2 * pt, "Jet_pt * 2 where count(Jet) >= 8")
    assert 0 < got["entries"] < len(ak.flatten(a["Jet_pt"])), "the condition should keep some entries and drop others"

"""Files written by this project's (first, sequential) writer, read back by ROOT 6.40's RNTupleReader,
by uproot 5.7.7 and by our own reader: every entry must be equal in all three.

The files come from `rntuple bench write` (eventId: std::uint64_t, particles: std::vector<float>) with each
compression setting; clusters and pages are ROOT's defaults.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import uproot
from root_subprocess import run_root

ENTRIES = 20_000
SETTINGS = (0, 101, 207, 404, 505)

ROOT_READ = r"""
path = sys.argv[1]
f = ROOT.TFile.Open(path)
keys = [(k.GetName(), k.GetClassName()) for k in f.GetListOfKeys()]
anchor_type = type(f.Get("Events")).__name__
r = ROOT.RNTupleReader.Open("Events", path)
ids = r.GetView["std::uint64_t"]("eventId")
parts = r.GetView["std::vector<float>"]("particles")
rows = [[int(ids(i)), [float(x) for x in parts(i)]] for i in range(r.GetNEntries())]
done({"keys": keys, "anchor_type": anchor_type, "rows": rows})
"""


@pytest.fixture(scope="module")
def written(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("ours")
    files = {}
    for c in SETTINGS:
        path = out / f"synthetic_{c}.root"
        p = cli.run("bench", "write", "--mode", "sequential", "--entries", str(ENTRIES), "--compression", str(c), "--output", str(path))
        assert p.returncode == 0, p.stderr.decode()
        report = json.loads(p.stdout)
        assert report["entries"] == ENTRIES and report["stored_bytes"] == path.stat().st_size
        files[c] = path
    return files


def _ours(cli, path):
    return [[e["eventId"], e["particles"]] for e in cli.dump(path, "Events")]


def _root(path):
    return run_root(ROOT_READ, path)


@pytest.mark.parametrize("setting", SETTINGS)
def test_root_reads_our_file(cli, written, setting):
    path = written[setting]
    ours = _ours(cli, path)
    assert len(ours) == ENTRIES
    assert [r[0] for r in ours] == list(range(ENTRIES))
    root = _root(path)
    assert ("Events", "ROOT::RNTuple") in [tuple(k) for k in root["keys"]]
    assert root["anchor_type"] == "RNTuple"
    assert len(root["rows"]) == ENTRIES
    for i, (a, b) in enumerate(zip(root["rows"], ours)):
        assert a == b, f"entry {i}: ROOT {a} vs ours {b}"


@pytest.mark.parametrize("setting", SETTINGS)
def test_uproot_reads_our_file(cli, written, setting):
    path = written[setting]
    ours = _ours(cli, path)
    with uproot.open(path) as f:
        arrays = f["Events"].arrays(["eventId", "particles"])
    theirs = [[int(i), [float(x) for x in p]] for i, p in zip(arrays["eventId"].tolist(), arrays["particles"].tolist())]
    assert theirs == ours


def test_our_pages_are_compressed_as_asked(cli, written):
    sizes = {c: written[c].stat().st_size for c in SETTINGS}
    for c in (101, 207, 404, 505):
        assert sizes[c] < 0.8 * sizes[0], sizes
    info = cli.info(written[505])
    assert "SplitReal32" in info and "SplitIndex64" in info and "SplitUInt64" in info
    info0 = cli.info(written[0])
    assert "Real32" in info0 and "SplitReal32" not in info0 and "Index64" in info0


def test_hadd_merges_our_files(cli, written, tmp_path):
    import importlib.util

    spec = importlib.util.find_spec("ROOT")
    bundled = Path(spec.origin).parent / "bin" / "hadd" if spec and spec.origin else None
    hadd = str(bundled) if bundled and bundled.exists() else shutil.which("hadd")
    if not hadd:
        pytest.fail("ROOT's hadd (shipped in the pip package root) was not found")
    out = tmp_path / "merged.root"
    p = subprocess.run([hadd, "-f", str(out), str(written[505]), str(written[101])], capture_output=True, timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()[-3000:]
    merged = _ours(cli, out)
    assert merged == _ours(cli, written[505]) + _ours(cli, written[101])


ROOT_WRITE_DEFAULTS_CODE = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <random>
void ourtest_write_defaults(const char *path, int compression, std::uint64_t n) {
   auto model = ROOT::RNTupleModel::Create();
   auto id = model->MakeField<std::uint64_t>("eventId");
   auto parts = model->MakeField<std::vector<float>>("particles");
   auto x = model->MakeField<double>("x");
   auto label = model->MakeField<std::string>("label");
   auto flag = model->MakeField<bool>("flag");
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(compression);
   auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path, opts);
   std::mt19937_64 rng(7);
   std::poisson_distribution<int> pois(5);
   std::uniform_real_distribution<float> u(0, 100);
   for (std::uint64_t i = 0; i < n; ++i) {
      *id = i;
      parts->resize(pois(rng));
      for (auto &p : *parts) p = u(rng);
      *x = u(rng) * 0.001;
      *label = "event-" + std::to_string(i % 1000);
      *flag = (i % 3) == 0;
      w->Fill();
   }
}
"""

ROOT_WRITE_DEFAULTS = r"""
ROOT.ourtest_write_defaults(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
done({"written": sys.argv[1]})
"""


@pytest.mark.parametrize("setting", (505, 0))
def test_file_size_within_one_percent_of_root(cli, tmp_path, setting):
    """Same data, same (default) options: our file's size is within 1 % of ROOT 6.40's."""
    theirs = tmp_path / "root.root"
    run_root(ROOT_WRITE_DEFAULTS, theirs, setting, 300000, cxx=ROOT_WRITE_DEFAULTS_CODE, timeout=900)
    entries = tmp_path / "entries.json"
    with open(entries, "wb") as f:
        d = subprocess.run([str(cli.path), "dump", str(theirs), "--ntuple", "Events"], stdout=f, stderr=subprocess.PIPE, timeout=900)
    assert d.returncode == 0, d.stderr.decode()
    ours = tmp_path / "ours.root"
    schema = {"eventId": "std::uint64_t", "particles": "std::vector<float>", "x": "double", "label": "std::string", "flag": "bool"}
    w = cli.run("import-json", str(ours), "--ntuple", "Events", "--schema", json.dumps(schema), "--input", str(entries), "--compression", str(setting))
    assert w.returncode == 0, w.stderr.decode()
    a, b = theirs.stat().st_size, ours.stat().st_size
    assert abs(a - b) <= 0.01 * a, f"ROOT {a} bytes, ours {b} bytes ({(b - a) / a:+.3%})"
    assert cli.dump(ours, "Events", entries=(0, 50)) == cli.dump(theirs, "Events", entries=(0, 50))

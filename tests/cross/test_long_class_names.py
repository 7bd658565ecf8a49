"""Classes whose names are 300 characters long (issue 35): a TString of 255 bytes or more takes ROOT's long form in a
StreamerInfo record (the byte 255, then the length as a big-endian 32-bit integer). A class field of such a class,
written from Python, then copied by `rntuple skim` and `rntuple merge`: in each output uproot parses the
StreamerInfo record (`file.streamers` lists the class with its member) and reads the values; ROOT 6.40 opens the
file and its `GetStreamerInfoList()` lists the class with its member; our reader reads the values back."""

from __future__ import annotations

import pytest
from root_subprocess import run_root

import rntuple

NAME = "LongName" + "x" * 292  # 300 characters
INNER = "Inner" + "y" * 295  # 300 characters, a class used by the outer one
ROWS = [{"c": {"fX": 1.5, "fIn": {"fN": 1}}}, {"c": {"fX": -2.0, "fIn": {"fN": 2}}}, {"c": {"fX": 0.0, "fIn": {"fN": 3}}}]


@pytest.fixture(scope="module")
def outputs(cli, tmp_path_factory) -> dict:
    """The written file, its skim and its merge: name -> path."""
    assert len(NAME) == 300 and len(INNER) == 300
    d = tmp_path_factory.mktemp("longnames")
    src = d / "written.root"
    inner = rntuple.Class(INNER, {"fN": "std::int32_t"})
    rntuple.write(str(src), "Events", ROWS, schema={"c": rntuple.Class(NAME, {"fX": "float", "fIn": inner})})
    out = {"written": src, "skim": d / "skim.root", "merge": d / "merge.root"}
    for what, args in (("skim", ["skim", src, out["skim"]]), ("merge", ["merge", out["merge"], src])):
        p = cli.run(*args)
        assert p.returncode == 0, f"rntuple {what}: {p.stderr.decode(errors='replace')[-2000:]}"
    return out


@pytest.mark.parametrize("which", ["written", "skim", "merge"])
def test_uproot_parses_the_streamer_info(outputs, which):
    import uproot

    with uproot.open(outputs[which]) as f:
        streamers = f.file.streamers
        assert NAME in streamers, f"{which}: {NAME[:20]}... not among {sorted(s[:40] for s in streamers)}"
        assert INNER in streamers, f"{which}: {INNER[:20]}... not among {sorted(s[:40] for s in streamers)}"
        (info,) = streamers[NAME].values()
        members = [e.member("fName") for e in info.member("fElements")]
        assert members == ["fX", "fIn"], members
        # The type of the member of the inner class spells its 300-character name (its own long TString).
        assert info.member("fElements")[1].member("fTypeName") == INNER
        got = f["Events"].arrays().tolist()
    assert got == ROWS


@pytest.mark.parametrize("which", ["written", "skim", "merge"])
def test_our_reader_reads_the_values(outputs, which):
    with rntuple.open(str(outputs[which])) as f:
        assert f["Events"].schema["c"] == NAME
        assert f["Events"].arrays().tolist() == ROWS


def test_root_lists_the_classes(outputs):
    """ROOT 6.40 reads each file's StreamerInfo record (in a child process: ROOT stays out of pytest)."""
    code = (
        "out = {}\n"
        "for path in sys.argv[1:]:\n"
        "    f = ROOT.TFile.Open(path)\n"
        "    infos = {si.GetName(): [e.GetName() for e in si.GetElements()] for si in f.GetStreamerInfoList()}\n"
        "    out[path] = infos\n"
        "    f.Close()\n"
        "done(out)\n"
    )
    paths = [str(outputs[w]) for w in ("written", "skim", "merge")]
    got = run_root(code, *paths)
    for path in paths:
        assert got[path].get(NAME) == ["fX", "fIn"], f"{path}: {sorted(k[:40] for k in got[path])}"
        assert got[path].get(INNER) == ["fN"], f"{path}: {sorted(k[:40] for k in got[path])}"

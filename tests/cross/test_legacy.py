"""Pre-1.0 RNTuples (anchor class ROOT::Experimental::RNTuple, epoch 0, ROOT <= 6.32) must be refused: a non-zero
exit (not a crash), a message naming the format version, and no values printed."""

from __future__ import annotations

import re

import pytest

from conftest import shared_params, skip_or_fail

VERSION_MESSAGE = re.compile(r"epoch\s*0|pre-1\.0|\b0\.\d+\.\d+(\.\d+)?\b|version\s+0\.", re.IGNORECASE)


PARAMS = shared_params(subdirs=("legacy",), anchor_class="ROOT::Experimental::RNTuple")


def test_legacy_files_present(testdata):
    if not list((testdata / "legacy").glob("*.root")):
        skip_or_fail(f"no legacy files in {testdata / 'legacy'}")
    assert len(PARAMS) >= 15


def _check_refusal(p, what):
    err = p.stderr.decode("utf-8", errors="replace")
    out = p.stdout.decode("utf-8", errors="replace")
    assert p.returncode != 0, f"`{what}` succeeded on a pre-1.0 RNTuple; output: {out[:300]!r}"
    assert 0 < p.returncode < 128, f"`{what}` died with {p.returncode} (signal?): {err[-500:]}"
    assert "panicked" not in err and "RUST_BACKTRACE" not in err, f"`{what}` panicked: {err[-1000:]}"
    assert VERSION_MESSAGE.search(err + out), f"`{what}`: the message does not name the format version " \
                                              f"(epoch 0 / pre-1.0): {err[-500:]!r}"


@pytest.mark.parametrize("sub,filename,name", PARAMS)
def test_legacy_info_refused(testdata, cli, sub, filename, name):
    path = testdata / "legacy" / filename
    p = cli.run("info", path)
    _check_refusal(p, f"rntuple info {filename}")
    p = cli.run("info", path, "--ntuple", name)
    _check_refusal(p, f"rntuple info {filename} --ntuple {name}")
    p = cli.run("info", path, "--ntuple", name, "--json")
    _check_refusal(p, f"rntuple info {filename} --ntuple {name} --json")
    import json

    (nt,) = json.loads(p.stdout)["ntuples"]
    assert nt["name"].endswith(name) and VERSION_MESSAGE.search(nt["error"]), nt


@pytest.mark.parametrize("sub,filename,name", PARAMS)
def test_legacy_dump_refused(testdata, cli, sub, filename, name):
    path = testdata / "legacy" / filename
    p = cli.run("dump", path, "--ntuple", name)
    _check_refusal(p, f"rntuple dump {filename} --ntuple {name}")
    assert not p.stdout.strip().startswith(b"[{"), "values were printed"


def test_info_unknown_ntuple_is_an_error(cli, generated):
    p = cli.run("info", generated.file("two_ntuples"), "--ntuple", "nope")
    assert p.returncode != 0
    assert b"nope" in p.stderr and b"first" in p.stderr, p.stderr
    q = cli.run("info", generated.file("two_ntuples"), "--ntuple", "first")
    assert q.returncode == 0
    assert b"RNTuple 'first'" in q.stdout and b"RNTuple 'second'" not in q.stdout

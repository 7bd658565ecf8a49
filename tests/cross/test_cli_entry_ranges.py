"""The CLI's `--entries START:STOP` through the binary: open ends, the empty range at the end, and the
one-line errors (no error kind prefixed) for a reversed range, a range past the entries and a malformed one.
The parsing itself is the library's (`EntryRange`, tested in crates/rntuple/src/ops/skim.rs)."""

import json

import pytest


@pytest.fixture(scope="module")
def ten(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("ranges") / "ten.root"
    p = cli.run("bench", "write", "--mode", "sequential", "--entries", "10", "--output", path, "--no-progress")
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return path


@pytest.mark.parametrize("spec,ids", [("2:5", [2, 3, 4]), ("8:", [8, 9]), (":2", [0, 1]), ("10:10", [])])
def test_ranges_select_those_entries(cli, ten, spec, ids):
    p = cli.run("dump", ten, "--ntuple", "Events", "--entries", spec)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert [r["eventId"] for r in json.loads(p.stdout)] == ids


@pytest.mark.parametrize("spec,message", [
    ("10:5", "rntuple: error: --entries '10:5': start 10 is after stop 5"),
    ("0:11", "rntuple: error: --entries '0:11': the RNTuple has 10 entries (valid ranges lie within 0:10)"),
    ("x:3", "bad start 'x'"),
    ("5", "expected START:STOP"),
])
def test_bad_ranges_are_one_line_errors(cli, ten, spec, message):
    p = cli.run("dump", ten, "--ntuple", "Events", "--entries", spec)
    err = p.stderr.decode(errors="replace").strip()
    assert p.returncode == 1 and message in err and "\n" not in err, err

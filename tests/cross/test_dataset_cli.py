"""`rntuple info` and `rntuple dump` over a dataset: several files (and globs) as one chain, and friends joined on
(run, event) with shuffled and missing keys (`--friend FILE[:NTUPLE] --on FIELDS --how left|inner`). The dump of a
chain equals the per-file dumps one after the other; the dump of a join equals a join computed here in Python from
the files' own dumps (and rntuple.join, which tests/cross/test_processor_root.py holds against ROOT's
RNTupleProcessor). Errors (a missing index field, an incompatible chain) are one line naming file and field."""

from __future__ import annotations

import json
import random

import pytest

import rntuple

N = 400
SMALL = {"max_unzipped_cluster_size": 4000, "max_unzipped_page_size": 1000, "approx_zipped_cluster_size": 2000}
SCHEMA = {"run": "std::uint32_t", "event": "std::uint64_t", "x": "float", "v": "std::vector<std::int32_t>"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("dataset_cli")
    primary = []
    for k in range(2):
        rows = [{"run": 1 + k, "event": i, "x": 0.5 * i, "v": list(range(i % 4))} for i in range(N)]
        rntuple.write(str(d / f"p{k}.root"), "Events", rows, schema=SCHEMA, **SMALL)
        primary += rows
    rng = random.Random(11)
    keys = [(r["run"], r["event"]) for r in primary if rng.random() > 0.05]
    rng.shuffle(keys)
    aux = [{"run": r, "event": e, "w": (e % 10) / 8} for r, e in keys]
    rntuple.write(str(d / "aux.root"), "Aux", aux, schema={"run": "std::uint32_t", "event": "std::uint64_t", "w": "double"}, **SMALL)
    return d, primary, {(a["run"], a["event"]): a for a in aux}


def _json(cli, *args):
    p = cli.run(*args, "--no-progress")
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def test_dump_of_a_chain_is_the_files_one_after_the_other(cli, files):
    d, primary, _ = files
    one = _json(cli, "dump", d / "p0.root") + _json(cli, "dump", d / "p1.root")
    assert _json(cli, "dump", d / "p0.root", d / "p1.root") == one
    assert _json(cli, "dump", d / "p?.root") == one  # a glob, sorted
    assert [r["x"] for r in one] == [r["x"] for r in primary]
    # Fields in schema order whatever the order asked, and a range across the files' boundary.
    part = _json(cli, "dump", d / "p0.root", d / "p1.root", "--fields", "x,event", "--entries", f"{N - 2}:{N + 2}")
    assert part == [{"event": r["event"], "x": r["x"]} for r in primary[N - 2 : N + 2]]


@pytest.mark.parametrize("how", ["left", "inner"])
def test_dump_of_a_join_matches_on_run_and_event(cli, files, how):
    d, primary, aux = files
    got = _json(cli, "dump", d / "p0.root", d / "p1.root", "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,event", "--how", how)
    want = []
    for r in primary:
        a = aux.get((r["run"], r["event"]))
        if a is None and how == "inner":
            continue
        want.append({**r, "Aux.run": a and a["run"], "Aux.event": a and a["event"], "Aux.w": a and a["w"]})
    assert got == want
    assert any(row["Aux.w"] is None for row in got) == (how == "left")
    # The same rows as the Python join (held against ROOT's RNTupleProcessor elsewhere).
    j = rntuple.join([str(d / "p0.root"), str(d / "p1.root")], f"{d / 'aux.root'}:Aux", on=["run", "event"], how=how)
    rows = j.arrays(["x", "Aux.w"]).to_list()
    assert [{"x": row["x"], "Aux.w": row["Aux.w"]} for row in got] == rows


def test_dump_of_an_aligned_friend_and_selected_friend_fields(cli, files):
    d, primary, _ = files
    # Without --on, the friend is aligned entry by entry (p1 beside p0: its run is p0's plus one).
    got = _json(cli, "dump", d / "p0.root", "--friend", f"{d / 'p1.root'}", "--fields", "run,Events.run", "--entries", "0:3")
    assert got == [{"run": 1, "Events.run": 2}] * 3


def test_info_of_a_chain_and_a_join(cli, files):
    d, primary, aux = files
    info = _json(cli, "info", d / "p0.root", d / "p1.root", "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,event", "--json")
    assert info["entries"] == 2 * N and info["how"] == "left" and info["on"] == ["run", "event"]
    assert [(i["file"], i["entries"]) for i in info["primary"]["inputs"]] == [(str(d / "p0.root"), N), (str(d / "p1.root"), N)]
    assert info["friends"][0]["name"] == "Aux" and info["friends"][0]["chain"]["entries"] == len(aux)
    assert info["index_bytes"] > 0 and info["primary"]["clusters"] > 2
    assert [f["name"] for f in info["fields"]] == ["run", "event", "x", "v", "Aux.run", "Aux.event", "Aux.w"]
    assert info["fields"][3]["type"] == "std::vector<std::int32_t>"
    p = cli.run("info", d / "p0.root", d / "p1.root", "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,event")
    text = p.stdout.decode()
    assert p.returncode == 0 and f"of 2 file(s), {2 * N} entries" in text and "friend 'Aux'" in text and "joined on run, event" in text
    # One file alone keeps the per-file description.
    one = _json(cli, "info", d / "p0.root", "--json")
    assert one["ntuples"][0]["name"] == "Events"


def test_errors_name_file_and_field(cli, files, tmp_path):
    d, _, _ = files
    p = cli.run("dump", d / "p0.root", "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,lumi", "--no-progress")
    err = p.stderr.decode(errors="replace").strip()
    assert p.returncode == 1 and "lumi" in err and "p0.root" in err and "\n" not in err, err
    other = tmp_path / "other.root"
    rntuple.write(str(other), "Events", [{"run": 1.5}], schema={"run": "double"})
    p = cli.run("info", d / "p0.root", other, "--no-progress")
    err = p.stderr.decode(errors="replace").strip()
    assert p.returncode == 1 and "other.root" in err and "run" in err, err
    p = cli.run("dump", d / "p0.root", "--on", "run")  # --on needs a friend
    assert p.returncode == 2 and "--friend" in p.stderr.decode(errors="replace")

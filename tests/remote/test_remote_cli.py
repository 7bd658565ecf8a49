"""The CLI with http://, s3:// and root:// (XRootD, read natively through XrdCl) URLs in place of paths: `info`,
`dump`, `check`, `bench read`, `skim`, `merge` give what they give for the local file; errors exit non-zero with
`error: ...` naming the URL."""

from __future__ import annotations

import json

import pytest
import servers

from conftest import BUCKET, shared_files

FILES = [pytest.param(sub, fn, id=f"{sub}/{fn}") for sub, fn in shared_files()]
WINDOW = 2000  # dump: RNTuples up to WINDOW entries whole, larger ones their first and last WINDOW // 2 entries
MUONS = ("rntuple", "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
MULTI = ("rntuple", "rntviewer-testfile-multiple-rntuples-v1-0-0-0.root")


@pytest.fixture(params=["http", "s3", "xrootd"])
def remote(request, nginx, s3, xrootd):
    """(protocol, function (sub, file name) -> URL, env for the CLI)."""
    if request.param == "http":
        return "http", lambda sub, fn: f"{nginx.url}/{sub}/{fn}", {}
    if request.param == "xrootd":
        return "xrootd", lambda sub, fn: f"{xrootd.url}/{sub}/{fn}", {}
    return "s3", lambda sub, fn: f"s3://{BUCKET}/{sub}/{fn}", s3.env


def _without_file(obj):
    return {k: v for k, v in obj.items() if k != "file"}


def _without_file_lines(text):
    return [line for line in text.splitlines() if not line.startswith("file:")]


def _windows(n):
    return [(0, n)] if n <= WINDOW else [(0, WINDOW // 2), (n - WINDOW // 2, n)]


@pytest.mark.parametrize("sub,filename", FILES)
def test_info_dump_check_equal_local(cli, testdata, remote, sub, filename):
    proto, url_of, env = remote
    url, path = url_of(sub, filename), testdata / sub / filename
    local_info = cli.json("info", path, "--json", local=True)
    remote_info = cli.json("info", url, "--json", env=env)
    assert remote_info.get("file") == url, f"`info --json` names the file {remote_info.get('file')!r}, not {url}"
    assert _without_file(remote_info) == _without_file(local_info)
    text = cli.ok("info", url, env=env)
    assert url in text.splitlines()[0], f"`rntuple info {url}` first line: {text.splitlines()[0]!r}"
    assert _without_file_lines(text) == _without_file_lines(cli.local("info", path))
    for nt in local_info["ntuples"]:
        for a, b in _windows(nt["entries"]):
            args = ["--ntuple", nt["name"], "--entries", f"{a}:{b}"]
            assert cli.ok("dump", url, *args, env=env) == cli.local("dump", path, *args), f"{url}:{nt['name']} [{a}:{b}]"
    local_check = cli.json("check", path, "--json", local=True)
    assert _without_file(cli.json("check", url, "--json", env=env)) == _without_file(local_check)
    assert _without_file_lines(cli.ok("check", url, env=env)) == _without_file_lines(cli.local("check", path))


@pytest.mark.parametrize("file", [MUONS, ("rntuple", "test_multiple_cluster_groups_rntuple_v1-0-0-0.root"),
                                  ("v1-older", "test_stl_containers_rntuple_v1.root")], ids=lambda f: f[1])
def test_bench_read(cli, testdata, remote, file):
    proto, url_of, env = remote
    url, path = url_of(*file), testdata / file[0] / file[1]
    (name,) = [nt["name"] for nt in cli.json("info", path, "--json", local=True)["ntuples"]]
    local = cli.json("bench", "read", path, "--ntuple", name)
    got = cli.json("bench", "read", url, "--ntuple", name, env=env)
    assert got["entries"] == local["entries"]
    assert got["stored_bytes"] == local["stored_bytes"]
    assert isinstance(got.get("requests"), int) and got["requests"] > 0, f"`bench read {url}`: requests = {got.get('requests')!r}"
    assert isinstance(got.get("bytes_read"), int) and got["bytes_read"] > 0, f"`bench read {url}`: bytes_read = {got.get('bytes_read')!r}"
    size = path.stat().st_size
    assert got["bytes_read"] <= 1.2 * size + 4096, f"`bench read {url}` read {got['bytes_read']} B of a {size} B file"


def _content(cli, path):
    """What a written file holds: `info --json` without the file name, and every entry of every RNTuple."""
    info = _without_file(cli.json("info", path, "--json"))
    dumps = {nt["name"]: cli.ok("dump", path, "--ntuple", nt["name"]) for nt in info["ntuples"]}
    return info, dumps


@pytest.mark.parametrize("args", [[], ["--entries", "100:900", "--fields", "nMuon,Muon_pt"]], ids=["all", "reencode"])
def test_skim_from_url(cli, testdata, remote, tmp_path, args):
    proto, url_of, env = remote
    url, path = url_of(*MUONS), testdata / MUONS[0] / MUONS[1]
    cli.ok("skim", path, tmp_path / "local.root", *args)
    cli.ok("skim", url, tmp_path / "remote.root", *args, env=env)
    assert _content(cli, tmp_path / "remote.root") == _content(cli, tmp_path / "local.root")


def test_skim_from_url_picks_ntuple(cli, testdata, remote, tmp_path):
    proto, url_of, env = remote
    url, path = url_of(*MULTI), testdata / MULTI[0] / MULTI[1]
    cli.ok("skim", path, tmp_path / "local.root", "--ntuple", "B")
    cli.ok("skim", url, tmp_path / "remote.root", "--ntuple", "B", env=env)
    assert _content(cli, tmp_path / "remote.root") == _content(cli, tmp_path / "local.root")


def test_merge_from_urls(cli, testdata, nginx, s3, xrootd, tmp_path):
    """`rntuple merge OUT INPUTS...` with an HTTP input, an S3 input, an XRootD input and a local one, as from four
    local files."""
    path = testdata / MUONS[0] / MUONS[1]
    http_url = f"{nginx.url}/{MUONS[0]}/{MUONS[1]}"
    s3_url = f"s3://{BUCKET}/{MUONS[0]}/{MUONS[1]}"
    root_url = f"{xrootd.url}/{MUONS[0]}/{MUONS[1]}"
    cli.ok("merge", tmp_path / "local.root", path, path, path, path)
    out = json.loads(cli.ok("merge", tmp_path / "remote.root", http_url, s3_url, root_url, path, env=s3.env))
    assert isinstance(out, dict)
    local, remote = _content(cli, tmp_path / "local.root"), _content(cli, tmp_path / "remote.root")
    assert remote[0]["ntuples"][0]["entries"] == 4000
    assert remote == local


# ------------------------------------------------------------------------------------------------------------
# Errors


COMMANDS = {"info": (["info"], []), "dump": (["dump"], ["--ntuple", "Events", "--entries", "0:5"]), "check": (["check"], []),
            "bench-read": (["bench", "read"], ["--ntuple", "Events"])}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_http_404(cli, nginx, command):
    url = f"{nginx.url}/rntuple/no-such-file.root"
    before, after = COMMANDS[command]
    err = cli.expect_error(*before, url, *after, url=url)
    assert "404" in err or "not found" in err.lower(), err


def test_http_unreachable(cli):
    url = f"http://127.0.0.1:{servers.free_port()}/file.root"
    cli.expect_error("info", url, url=url)
    cli.expect_error("dump", url, "--entries", "0:5", url=url)


def test_http_not_a_root_file(cli, nginx):
    url = f"{nginx.url}/rntuple/"
    cli.expect_error("info", url, url=url)


def test_s3_missing_key_and_bucket(cli, s3):
    for url in (f"s3://{BUCKET}/rntuple/no-such-file.root", "s3://no-such-bucket/file.root"):
        cli.expect_error("info", url, url=url, env=s3.env)
        cli.expect_error("dump", url, "--entries", "0:5", url=url, env=s3.env)


def test_s3_unreachable_endpoint(cli, s3):
    url = f"s3://{BUCKET}/{MUONS[0]}/{MUONS[1]}"
    env = {**s3.env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{servers.free_port()}"}
    env["AWS_ENDPOINT_URL_S3"] = env["AWS_ENDPOINT_URL"]
    cli.expect_error("info", url, url=url, env=env)



@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_xrootd_missing_file(cli, xrootd, command):
    url = f"{xrootd.url}/rntuple/no-such-file.root"
    before, after = COMMANDS[command]
    err = cli.expect_error(*before, url, *after, url=url)
    assert "no such file" in err.lower(), err


def test_xrootd_unreachable_and_not_a_root_file(cli, xrootd):
    url = f"root://127.0.0.1:{servers.free_port()}//file.root"
    cli.expect_error("info", url, url=url)
    url = f"{xrootd.url}/README.md"
    cli.expect_error("info", url, url=url)

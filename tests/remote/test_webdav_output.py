"""http(s):// outputs (issue 33, point 3) to nginx taking WebDAV writes (servers.NginxDavServer: `dav_methods PUT DELETE
MOVE; create_full_put_path on`): the staged file goes up at the commit with one PUT to `.NAME.tmp-PID-RANDOM` beside
the destination, moved over it with MOVE (`Overwrite: T`). Skims and merges read back (uproot, every field; our reader
over HTTP) equal to local outputs; the Python writers write to an http:// URL; a server without MOVE, or failing it,
gives an error naming the URL and leaves neither the destination nor the temporary file; SIGTERM mid-PUT (through a
proxy slowing the upload) leaves nothing on the server and nothing in TMPDIR; over https:// (the test CA trusted through
X509_CERT_DIR) the bearer token is presented, and a refusal names the credential tried, never the token."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import servers
from test_credentials import TOKEN, full_env, pki  # noqa: F401 - pki is a fixture used here
from test_remote_output import same_data, source, tmp  # noqa: F401 - source and tmp are fixtures used here
from throttle_proxy import ThrottleProxy

from conftest import _start, assert_same_arrays, read_all


@pytest.fixture(scope="module")
def dav_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dav-root")


@pytest.fixture(scope="module")
def dav(dav_dir):
    server = _start(servers.NginxDavServer(dav_dir), "nginx with WebDAV")
    yield server
    server.stop()


def files_under(d: Path) -> list:
    """Every file under `d`, relative, sorted (temporary files included: their names start with '.')."""
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())


def dump(cli, what, entries: str, env=None) -> str:
    return cli.ok("dump", "--entries", entries, what, env=env)


def test_skim_and_merge_to_webdav_equal_local_outputs(cli, dav, dav_dir, source, tmp):  # noqa: F811
    out = dav.url + "/skims/2026/skim.root"  # the directories do not exist yet: created by the PUT
    cli.ok("skim", source, out)
    cli.ok("merge", dav.url + "/merged/merged.root", source, source)
    ref = tmp / "dav-reference"
    ref.mkdir()
    cli.ok("skim", source, ref / "skim.root")
    cli.ok("merge", ref / "merged.root", source, source)
    assert files_under(dav_dir) == ["merged/merged.root", "skims/2026/skim.root"]  # no temporary file left
    same_data(dav_dir / "skims/2026/skim.root", ref / "skim.root")
    same_data(dav_dir / "merged/merged.root", ref / "merged.root")
    # Our reader, over HTTP: every page checked, entries at both ends equal to the local output's.
    cli.ok("check", out)
    for entries in ("0:300", "399700:"):
        assert dump(cli, out, entries) == dump(cli, ref / "skim.root", entries)
    merged_url = dav.url + "/merged/merged.root"
    assert dump(cli, merged_url, "399900:400100") == dump(cli, ref / "merged.root", "399900:400100")
    # Written again: the file is replaced (MOVE with Overwrite: T).
    cli.ok("skim", source, out, "--entries", "0:1000")
    assert '"entries":1000' in cli.ok("info", "--json", out).replace(" ", "")
    assert files_under(dav_dir) == ["merged/merged.root", "skims/2026/skim.root"]
    log = dav.access_log()
    assert '"PUT /skims/2026/.skim.root.tmp-' in log and '"MOVE /skims/2026/.skim.root.tmp-' in log, log[-2000:]
    # A destination that is a directory is refused before anything is sent (MOVE would replace it).
    err = cli.expect_error("skim", source, dav.url + "/skims", "--entries", "0:10", url=dav.url + "/skims")
    assert "is a directory" in err, err
    assert files_under(dav_dir) == ["merged/merged.root", "skims/2026/skim.root"]


def test_python_writers_to_webdav(rntuple_pkg, dav, dav_dir):
    import awkward as ak
    import numpy as np

    rntuple = rntuple_pkg
    data = {"x": np.arange(1000, dtype=np.float32), "v": ak.Array([[i] * (i % 3) for i in range(1000)])}
    rntuple.write(dav.url + "/py/write.root", "Events", data)
    with rntuple.Writer(dav.url + "/py/writer.root", "Events", {"x": "float", "v": "std::vector<std::int64_t>"}) as w:
        w.extend(data)
    for name in ("write", "writer"):
        url = f"{dav.url}/py/{name}.root"
        expected = read_all(rntuple, str(dav_dir / "py" / f"{name}.root"))
        assert_same_arrays(read_all(rntuple, url), expected, url)
        got = expected["Events"]
        assert ak.array_equal(got.x, data["x"]) and ak.to_list(got.v) == ak.to_list(data["v"])
    # An aborted writer uploads nothing.
    w = rntuple.Writer(dav.url + "/py/aborted.root", "Events", {"x": "float"})
    w.extend({"x": np.zeros(3, np.float32)})
    w.abort()
    assert files_under(dav_dir / "py") == ["write.root", "writer.root"]


@pytest.mark.parametrize("server", ["no-move", "move-500"])
def test_server_refusing_or_failing_move_leaves_nothing(cli, server, source, tmp):  # noqa: F811
    root = tmp / f"dav-{server}"
    root.mkdir()
    options = {"methods": "PUT DELETE"} if server == "no-move" else {"move_status": 500}
    with servers.NginxDavServer(root, **options) as srv:
        url = srv.url + "/out/skim.root"
        err = cli.expect_error("skim", source, url, "--entries", "0:5000", url=url, env={"RNTUPLE_RETRIES": "1"})
    assert "MOVE" in err, err
    if server == "no-move":
        assert "405" in err and "does not move files" in err, err
    else:
        assert "500" in err, err
    assert files_under(root) == [], files_under(root)  # no destination, no temporary file


def test_sigterm_mid_upload_leaves_nothing(cli, dav, dav_dir, source, tmp):  # noqa: F811
    staging = tmp / "dav-staging"  # TMPDIR: where the output is staged
    staging.mkdir()
    with ThrottleProxy(dav.port, up_rate=2 << 20) as proxy:  # ~27 MiB at 2 MiB/s: ~13 s of PUT
        env = {**os.environ, "TMPDIR": str(staging)}
        proc = subprocess.Popen([str(cli.path), "merge", proxy.url + "/interrupted/merged.root", source, source],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            end = time.monotonic() + 60
            while proxy.bytes_up < (3 << 20) and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.05)
            assert proc.poll() is None and proxy.bytes_up >= (3 << 20), "the PUT did not start"
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, err)  # ended by the signal, after the clean-up
    assert not any("interrupted" in n for n in files_under(dav_dir)), files_under(dav_dir)
    assert '"MOVE /interrupted/' not in dav.access_log()
    assert os.listdir(staging) == []


def test_sigterm_after_the_put_deletes_the_temporary_file(cli, dav, dav_dir, source, tmp):  # noqa: F811
    """The server has stored the temporary file but its answer to the PUT is held: SIGTERM then cuts the PUT and
    DELETEs the temporary file (the clean-up's requests are not cancelled by the interrupt they serve)."""
    staging = tmp / "dav-staging-held"
    staging.mkdir()
    with ThrottleProxy(dav.port, up_rate=1 << 30, hold_put_answer_s=30) as proxy:
        env = {**os.environ, "TMPDIR": str(staging)}
        proc = subprocess.Popen([str(cli.path), "skim", source, proxy.url + "/held/skim.root", "--entries", "0:5000"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            end = time.monotonic() + 60
            while not (dav_dir / "held").is_dir() or not os.listdir(dav_dir / "held"):
                assert proc.poll() is None and time.monotonic() < end, "the temporary file never appeared"
                time.sleep(0.05)
            assert os.listdir(dav_dir / "held")[0].startswith(".skim.root.tmp-")
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, err)
    assert os.listdir(dav_dir / "held") == []  # deleted, and never moved
    assert os.listdir(staging) == []
    assert '"DELETE /held/.skim.root.tmp-' in dav.access_log()


def test_https_with_bearer_token(cli, pki, source, tmp):  # noqa: F811
    root = tmp / "dav-tls"
    root.mkdir()
    with servers.NginxDavServer(root, cert=pki["server_cert"], key=pki["server_key"], token=TOKEN) as srv:
        url = srv.url + "/tls/skim.root"
        cli.ok("skim", source, url, "--entries", "0:5000", env=full_env(pki))
        assert files_under(root) == ["tls/skim.root"]
        assert '"entries":5000' in cli.ok("info", "--json", url, env=full_env(pki)).replace(" ", "")
        # Without a token: 401, "no credential"; with another: 403 naming where it came from, never the token.
        bad = tmp / "dav-tls-wrong-token"
        bad.write_text("rntuple-wrong-token-value\n")
        err = cli.expect_error("skim", source, srv.url + "/tls/refused.root", "--entries", "0:5000",
                               url=srv.url + "/tls/refused.root", env=full_env(pki, BEARER_TOKEN_FILE=bad))
        assert "403" in err and f"BEARER_TOKEN_FILE={bad}" in err and "rntuple-wrong-token-value" not in err, err
        no_token = {k: v for k, v in full_env(pki).items() if k != "BEARER_TOKEN_FILE"}
        p = subprocess.run([str(cli.path), "skim", str(source), srv.url + "/tls/refused.root", "--entries", "0:5000"],
                           capture_output=True, env=no_token, timeout=60)
        err = p.stderr.decode()
        assert p.returncode != 0 and "401" in err and "no bearer token" in err and TOKEN not in err, err
    assert files_under(root) == ["tls/skim.root"]

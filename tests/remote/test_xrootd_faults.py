"""root:// reads that fail safely (issue 35, point 1, for XRootD): tcp_fault_proxy.TcpFaultProxy between XrdCl and
Debian's xrootd, in each of its modes (pass-through, a stall after N answer bytes, a byte a second, a reset once or on
every connection, refused connections, a corrupted readv answer, a lying frame length, a close after the handshake),
read natively by Python (`rntuple.open("root://...")`, in a child) and by the CLI (`rntuple dump`, `rntuple info`).

Each read gives exactly the local values or one clear error (Python: RNTupleError; CLI: exit 1 and one stderr line)
naming the URL, within the configured timeout + 10 %, and a peak RSS (os.wait4) under 256 MB. Timeouts are set short
(connect 1 s, idle 2 s, 1 retry, through `--connect-timeout`/`--idle-timeout`/`--retries` and
`rntuple.set_remote_options`; the XRD_* variables of conftest are removed from the children's environment so that
these reach XrdCl): a request of at most 2 MiB must finish within connect + idle + 1 = 4 s, XrdCl's retries and
reconnections included. The bound is that deadline x 1.1, plus the time a correct read takes (the requests before
the faulty one), plus 1.5 s: XrdCl checks its timeouts once a second (TimeoutResolution 1), and this VM is shared.

N (`after`) is half the answer bytes a correct read of the same kind takes, so that the fault lands in the middle of
its requests; the three readers of a mode run at once, each through its own proxy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import servers
from fault_children import MEASURE, READ_CHILD
from tcp_fault_proxy import TcpFaultProxy

CONNECT, IDLE, RETRIES = 1, 2, 1
CLI_FLAGS = ["--connect-timeout", CONNECT, "--idle-timeout", IDLE, "--retries", RETRIES]
SLACK = 1.5
RSS_LIMIT = 256 << 20
KINDS = ("python", "dump", "info")

# mode -> (proxy arguments, what a read may give: "values", "error" or "either"). A stall or a reset on every
# connection may still read: the request is sent again on a new connection (retries 1), where the fault comes only
# after N more bytes, by when the remaining requests may be done.
MODES = {
    "pass": ({}, "values"),
    "stall": ({}, "either"),
    "trickle": ({}, "error"),
    "reset": ({}, "either"),
    "reset-once": ({"mode": "reset", "connections": 1}, "values"),  # the retry on a new connection reads it
    "refuse": ({}, "error"),
    "corrupt-data": ({}, "either"),
    "corrupt-length": ({}, "either"),
    "close-after-handshake": ({}, "error"),
}
# XrdCl sends every request to a server on one connection: behind a trickling answer, the read-ahead's next requests
# would each wait their own deadline (4 deadlines were measured); rntuple_xrootd::File fails them at once after the
# first missed deadline, so a trickle too ends within one.
DEADLINES: dict[str, int] = {}
# Garbage inside a page is caught by its checksum, an error about the file's bytes (its offset) rather than the
# transfer: it need not name the URL.
DAMAGED = "checksum mismatch"


# The children's environment: conftest's XRD_* settings (for the other tests) removed, so that the configured
# timeouts are the ones XrdCl uses.
_ENV = {k: v for k, v in os.environ.items() if not k.startswith("XRD_")}


def _deadline(size: int) -> float:
    """rntuple_xrootd::Patience::deadline_s of a request of at most `size` bytes."""
    return CONNECT + IDLE + (size >> 20)


def _run_measured(argv, timeout=60.0) -> dict:
    """Exit code, stdout, stderr, seconds and peak RSS (bytes) of `argv`, run with _ENV."""
    with tempfile.NamedTemporaryFile() as rss_file:
        cmd = [sys.executable, "-c", MEASURE, rss_file.name, *map(str, argv)]
        t = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_ENV, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            out, err = p.communicate()
            return {"code": None, "out": out.decode(errors="replace"), "seconds": timeout, "rss": 0,
                    "err": f"did not finish within {timeout} s; stdout {out[-500:]!r}, stderr {err[-1500:]!r}"}
        seconds = time.monotonic() - t
        rss = int(open(rss_file.name).read() or 0) * 1024
    return {"code": p.returncode, "out": out.decode(errors="replace"), "err": err.decode(errors="replace"),
            "seconds": seconds, "rss": rss}


def _argv(kind: str, url: str, path, cli) -> list:
    if kind == "python":
        return [sys.executable, "-c", READ_CHILD, url, path, CONNECT, IDLE, RETRIES]
    if kind == "dump":
        return [cli.path, *CLI_FLAGS, "dump", url, "--entries", "0:100000"]
    return [cli.path, *CLI_FLAGS, "info", "--json", url]


@pytest.fixture(scope="module")
def target(cli, rntuple_pkg):
    """A 1.7 MB file of 7 clusters served by xrootd, its local `dump` and `info`, and for each kind of reader the
    answer bytes and seconds of a correct read through a pass-through proxy."""
    # Started as root, xrootd runs as nobody, who cannot enter pytest's directories (0700): a directory of /tmp.
    d = Path(tempfile.mkdtemp(prefix="rntuple-xrootd-faults-"))
    d.chmod(0o755)
    path = d / "small.root"
    cli.ok("bench", "write", "--threads", 1, "--entries", 100_000, "--cluster-size", 200_000, "--output", path,
           timeout=120)
    path.chmod(0o644)
    try:
        server = servers.XRootDServer(d).start()
    except Exception as exc:  # noqa: BLE001 - any reason is a failure with its message
        pytest.fail(f"could not start xrootd: {type(exc).__name__}: {exc}", pytrace=False)
    local = {"dump": cli.ok("dump", path, "--entries", "0:100000"), "info": cli.json("info", "--json", path, local=True)}
    normal = {}
    for kind in KINDS:
        with TcpFaultProxy(server.port, "pass") as proxy:
            res = _run_measured(_argv(kind, proxy.url_of("/small.root"), path, cli))
            assert res["code"] == 0, f"{kind} through a pass-through proxy: {res['err'][-2000:]}"
            normal[kind] = {"bytes": sum(proxy.bytes_down), "seconds": _seconds(kind, res)}
    yield {"path": path, "size": path.stat().st_size, "server": server, "local": local, "normal": normal}
    server.stop()
    shutil.rmtree(d, ignore_errors=True)


def _seconds(kind: str, res: dict) -> float:
    """The read's own time: the Python child's measure (without its start-up), the CLI's wall time."""
    if kind == "python" and res["code"] == 0:
        return json.loads(res["out"])["seconds"]
    return res["seconds"]


def _judge(kind: str, mode: str, res: dict, url: str, expect: str, target) -> str:
    """Checks one read (see the module's doc); returns "values" or "error"."""
    what = f"{kind} of {url}"
    assert res["code"] is not None, f"{what}: {res['err']}"
    assert res["rss"] < RSS_LIMIT, f"{what}: peak RSS {res['rss'] >> 20} MiB"
    assert "panicked" not in res["err"], f"{what}: {res['err'][-2000:]}"
    if kind == "python":
        assert res["code"] == 0, f"{what}: the child failed ({res['code']}): {res['err'][-2000:]}"
        out = json.loads(res["out"])
        error = out["error"]
        if error is None:
            assert out["same"], f"{what}: WRONG VALUES read without an error"
    else:
        assert res["code"] in (0, 1), f"{what}: exit {res['code']}: {res['err'][-2000:]}"
        error = None
        if res["code"] == 1:
            lines = res["err"].strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("rntuple: error: "), f"{what}: stderr {res['err'][-1500:]!r}"
            error = lines[0]
        elif kind == "dump":
            assert res["out"] == target["local"]["dump"], f"{what}: WRONG VALUES dumped without an error"
        else:
            remote = json.loads(res["out"])
            assert remote["ntuples"] == target["local"]["info"]["ntuples"], f"{what}: info differs from the local one"
    if error is not None:
        assert "\n" not in error.strip(), f"{what}: the error is not one line: {error!r}"
        assert url in error or DAMAGED in error, f"{what}: the error does not name the URL: {error!r}"
    got = "values" if error is None else "error"
    assert expect in (got, "either"), f"{what}: expected {expect}, got {got}: {error or ''}"
    bound = DEADLINES.get(mode, 1) * 1.1 * _deadline(target["size"]) + target["normal"][kind]["seconds"] + SLACK
    assert _seconds(kind, res) <= bound, f"{what}: {_seconds(kind, res):.2f} s, above {bound:.2f} s ({error})"
    return got


@pytest.mark.parametrize("mode", list(MODES))
def test_xrootd_fault_mode(cli, target, mode):
    args, expect = MODES[mode]
    results: dict[str, dict] = {}
    proxies = {}
    for kind in KINDS:
        after = target["normal"][kind]["bytes"] // 2
        if mode == "trickle" and kind == "info":
            after = 0  # info's half lands in its last answer (the file's edges): a trickle from the first byte
        proxies[kind] = TcpFaultProxy(target["server"].port, args.get("mode", mode), after=after,
                                      connections=args.get("connections")).__enter__()

    def run(kind):
        results[kind] = _run_measured(_argv(kind, proxies[kind].url_of("/small.root"), target["path"], cli))

    threads = [threading.Thread(target=run, args=(kind,)) for kind in KINDS]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for p in proxies.values():
            p.stop()
    got = {}
    for kind in KINDS:
        got[kind] = _judge(kind, mode, results[kind], proxies[kind].url_of("/small.root"), expect, target)
        if mode not in ("pass", "refuse"):
            assert proxies[kind].faults > 0 or got[kind] == "values", f"{kind}: the fault never happened"
    if mode not in ("pass", "refuse", "corrupt-data", "corrupt-length"):
        assert any(p.faults for p in proxies.values()), "no reader met the fault"

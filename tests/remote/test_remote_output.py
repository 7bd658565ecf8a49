"""Outputs at URLs (issue 33, point 3): skim, merge, convert, import-json and the Python writers write to `s3://`
(moto's S3 emulator) and `root://` (a writable xrootd-server), read back by ROOT 6.40 and uproot equal to the same
output written locally; an upload that is interrupted (SIGTERM, SIGKILL) or meets a server failing mid-way leaves no
object behind: S3 multipart uploads are aborted where the process can still clean up (no object, no upload listed),
XRootD uploads go to a temporary name beside the destination, moved over it only at the commit. (http(s):// outputs,
WebDAV: test_webdav_output.py.)

Outputs are staged in TMPDIR and uploaded at the commit; a file above 8 MiB goes up as a multipart upload (8 MiB
parts), a smaller one as one PutObject. The source is the synthetic model (`bench write`, ~13 MiB: 2 parts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import servers
from tcp_fault_proxy import TcpFaultProxy
from upload_proxy import UploadProxy, part_number

BUCKET = "rntuple-out"
SECRET = "s3cr3t-never-shown"


@pytest.fixture(scope="module")
def s3():
    with servers.S3Server() as srv:
        srv.client().create_bucket(Bucket=BUCKET)
        yield srv


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("remote-output")


@pytest.fixture(scope="module")
def source(cli, tmp) -> Path:
    """A ~13 MiB file of the synthetic model, 2 clusters."""
    p = tmp / "synth.root"
    cli.ok("bench", "write", "--threads", "2", "--entries", "400000", "--output", p)
    assert p.stat().st_size > (8 << 20)
    return p


@pytest.fixture(scope="module")
def xrd_dir():
    d = Path(tempfile.mkdtemp(prefix="rntuple-xrootd-out-"))
    d.chmod(0o777)  # the server runs as nobody when the tests run as root
    yield d
    subprocess.run(["rm", "-rf", str(d)], check=False)


@pytest.fixture(scope="module")
def xrd(xrd_dir):
    with servers.XRootDServer(xrd_dir, writable=True) as srv:
        yield srv


def objects(s3) -> dict:
    return {o["Key"]: o["Size"] for o in s3.client().list_objects_v2(Bucket=BUCKET).get("Contents", [])}


def uploads(s3) -> list:
    return [u["Key"] for u in s3.client().list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])]


def download(s3, key: str, to: Path) -> Path:
    s3.client().download_file(BUCKET, key, str(to))
    return to


def same_data(a: Path, b: Path) -> None:
    """Both files hold the same RNTuple `Events` (uproot: every field equal) and have the same size (both written
    under the same file name, which the file records)."""
    import awkward as ak
    import uproot

    with uproot.open(a) as fa, uproot.open(b) as fb:
        ra, rb = fa["Events"], fb["Events"]
        assert ra.num_entries == rb.num_entries > 0
        assert ak.array_equal(ra.arrays(), rb.arrays())
    assert a.stat().st_size == b.stat().st_size


ROOT_SUMS = """
import sys, ROOT
for p in sys.argv[1:]:
    df = ROOT.RDataFrame("Events", p)
    print(int(df.Count().GetValue()), int(df.Sum("eventId").GetValue()))
"""


def root_sums(*paths: Path) -> list:
    """(entries, sum of eventId) of each file, read by ROOT 6.40 (PyROOT, in a child)."""
    p = subprocess.run([sys.executable, "-c", ROOT_SUMS, *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return [tuple(map(int, line.split())) for line in p.stdout.strip().splitlines()[-len(paths):]]


def leftovers(prefix: str) -> list:
    """Staging files of this module's outputs left in TMPDIR."""
    return [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("rntuple-upload-" + prefix)]


# ------------------------------------------------------------------------------------------------------------
# Written and read back


def test_skim_merge_import_json_to_s3_equal_local_outputs(cli, s3, source, tmp):
    env = s3.env
    cli.ok("skim", source, f"s3://{BUCKET}/skim.root", env=env)
    cli.ok("skim", source, tmp / "skim.root")
    cli.ok("merge", f"s3://{BUCKET}/merged.root", source, source, env=env)
    cli.ok("merge", tmp / "merged.root", source, source)
    # A small output (one PutObject), from JSON.
    js = tmp / "entries.json"
    js.write_text('[{"x": 1.5, "v": [1, 2]}, {"x": 2.5, "v": []}]')
    cli.ok("import-json", f"s3://{BUCKET}/small.root", "--ntuple", "Events", "--schema",
           '{"x": "float", "v": "std::vector<std::int32_t>"}', "--input", js, env=env)
    got = objects(s3)
    assert got["skim.root"] > (8 << 20) and got["merged.root"] > (16 << 20) and got["small.root"] < (1 << 20), got
    assert uploads(s3) == []
    skim = download(s3, "skim.root", tmp / "s3-skim.root")
    merged = download(s3, "merged.root", tmp / "s3-merged.root")
    same_data(skim, tmp / "skim.root")
    same_data(merged, tmp / "merged.root")
    sums = root_sums(skim, tmp / "skim.root", merged, tmp / "merged.root")
    assert sums[0] == sums[1] and sums[2] == sums[3] and sums[2][0] == 2 * sums[0][0], sums
    # Our own reader, over S3.
    assert '"entries":2' in cli.ok("info", "--json", f"s3://{BUCKET}/small.root", env=env).replace(" ", "")
    assert leftovers("skim") == [] and leftovers("merged") == []


def test_skim_and_merge_to_xrootd_equal_local_outputs(cli, xrd, xrd_dir, source, tmp):
    cli.ok("skim", source, xrd.url + "/skim.root")
    cli.ok("merge", xrd.url + "/merged.root", source, source)
    cli.ok("skim", source, xrd.url + "/skim.root", "--entries", "0:1000")  # replaces the first
    assert sorted(os.listdir(xrd_dir)) == ["merged.root", "skim.root"]  # no temporary file left
    ref = tmp / "xrootd-reference"
    ref.mkdir()
    cli.ok("skim", source, ref / "skim.root", "--entries", "0:1000")
    same_data(xrd_dir / "skim.root", ref / "skim.root")
    local_merged = ref / "merged.root"
    cli.ok("merge", local_merged, source, source)
    same_data(xrd_dir / "merged.root", local_merged)  # 27 MiB: streamed from 8 MiB on
    cli.ok("merge", xrd.url + "/merged.root", source, source, env={"RNTUPLE_UPLOAD_STREAMING": "0"})
    same_data(xrd_dir / "merged.root", local_merged)
    sums = root_sums(xrd_dir / "merged.root", local_merged)
    assert sums[0] == sums[1], sums
    assert '"entries":1000' in cli.ok("info", "--json", xrd.url + "/skim.root").replace(" ", "")


def test_python_writers_skim_merge_convert_to_s3(rntuple_pkg, s3, source, tmp, monkeypatch):
    import awkward as ak
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rntuple = rntuple_pkg
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    url = f"s3://{BUCKET}/py"
    data = {"x": np.arange(1000, dtype=np.float32), "v": ak.Array([[i] * (i % 3) for i in range(1000)])}
    rntuple.write(f"{url}/write.root", "Events", data)
    with rntuple.Writer(f"{url}/writer.root", "Events", {"x": "float", "v": "std::vector<std::int64_t>"}) as w:
        w.extend(data)
    with rntuple.ParallelWriter(f"{url}/parallel.root", "Events", {"x": "float"}) as pw:
        ctx = pw.fill_context()
        ctx.extend({"x": np.ones(500, np.float32)})
        ctx.close()
    rntuple.skim(str(source), f"{url}/skim.root", fields=["eventId"], where="eventId % 2 == 0")
    rntuple.merge(f"{url}/merge.root", [str(source), str(source)])
    pq.write_table(pa.table({"a": np.arange(10, dtype=np.int32)}), tmp / "t.parquet")
    rntuple.convert(str(tmp / "t.parquet"), f"{url}/conv.root")
    got = objects(s3)
    for name in ["write", "writer", "parallel", "skim", "merge", "conv"]:
        assert f"py/{name}.root" in got, (name, got)
    with rntuple.open(f"{url}/write.root") as f:
        a = f["Events"].arrays()
        assert ak.array_equal(a.x, data["x"]) and ak.array_equal(a.v, data["v"])
    with rntuple.open(f"{url}/parallel.root") as f:
        assert f["Events"].num_entries == 500
    with rntuple.open(f"{url}/skim.root") as f:
        assert f["Events"].num_entries == 400000
    with rntuple.open(f"{url}/conv.root") as f:
        assert f["Events"].arrays().a.tolist() == list(range(10))
    # An aborted writer uploads nothing.
    w = rntuple.Writer(f"{url}/aborted.root", "Events", {"x": "float"})
    w.extend({"x": np.zeros(3, np.float32)})
    w.abort()
    assert "py/aborted.root" not in objects(s3) and uploads(s3) == []


def test_s3_parts_stream_while_writing_and_part_1_goes_last(cli, s3, source, tmp):
    """A 27 MiB merge: parts 2 and 3 (bytes 8..24 MiB) leave as soon as they are written; part 1 (the TFile header,
    rewritten at the commit) and the tail go at the commit, then the upload is completed."""
    with UploadProxy(s3.endpoint) as proxy:
        env = {**s3.env, "AWS_ENDPOINT_URL": proxy.url, "AWS_ENDPOINT_URL_S3": proxy.url}
        cli.ok("merge", f"s3://{BUCKET}/streamed.root", source, source, env=env)
        started = [p for m, p in proxy.started() if m == "PUT" and "partNumber=" in p]
        log = proxy.log()
    numbers = [part_number(p) for p in started]
    assert sorted(numbers) == [1, 2, 3, 4] and numbers[:2] == [2, 3] and numbers.index(1) > numbers.index(3), numbers
    assert log[-1][0] == "POST" and "uploadId=" in log[-1][1] and log[-1][2] == 200, log[-3:]  # completed last
    got = tmp / "streamed-s3" / "streamed.root"
    got.parent.mkdir()
    download(s3, "streamed.root", got)
    ref = tmp / "streamed-ref" / "streamed.root"
    ref.parent.mkdir()
    cli.ok("merge", ref, source, source)
    same_data(got, ref)
    assert uploads(s3) == []
    # The same without streaming: every part at the commit (4 at once, in any order).
    with UploadProxy(s3.endpoint) as proxy:
        env = {**env, "AWS_ENDPOINT_URL": proxy.url, "AWS_ENDPOINT_URL_S3": proxy.url, "RNTUPLE_UPLOAD_STREAMING": "0"}
        cli.ok("merge", f"s3://{BUCKET}/streamed.root", source, source, env=env)
        numbers = [part_number(p) for m, p in proxy.started() if m == "PUT" and "partNumber=" in p]
    assert sorted(numbers) == [1, 2, 3, 4], numbers
    again = tmp / "streamed-again" / "streamed.root"
    again.parent.mkdir()
    same_data(download(s3, "streamed.root", again), ref)


def test_python_writers_to_xrootd(rntuple_pkg, xrd, xrd_dir):
    import awkward as ak
    import numpy as np

    rntuple = rntuple_pkg
    data = {"x": np.arange(100, dtype=np.float64)}
    rntuple.write(xrd.url + "/py-write.root", "Events", data)
    with rntuple.ParallelWriter(xrd.url + "/py-parallel.root", "Events", {"x": "double"}) as pw:
        ctx = pw.fill_context()
        ctx.extend(data)
        ctx.close()
    for name in ["py-write.root", "py-parallel.root"]:
        with rntuple.open(str(xrd_dir / name)) as f:
            assert ak.array_equal(f["Events"].arrays().x, data["x"])
    w = rntuple.Writer(xrd.url + "/py-aborted.root", "Events", {"x": "double"})
    w.extend(data)
    w.abort()
    assert not any("py-aborted" in n for n in os.listdir(xrd_dir))


# ------------------------------------------------------------------------------------------------------------
# Errors and interrupts


def test_missing_bucket_and_refusals_name_the_url_and_credential_never_the_secret(cli, s3, source):
    env = {**s3.env, "AWS_SECRET_ACCESS_KEY": SECRET}
    p = cli.run("skim", source, "s3://no-such-bucket/x.root", env=env)
    err = p.stderr.decode()
    assert p.returncode != 0 and "s3://no-such-bucket/x.root" in err and "NoSuchBucket" in err, err
    assert "AWS_ACCESS_KEY_ID" in err and SECRET not in err and "<?xml" not in err, err
    # A refusal (403 to a part) names the status, the part and the credential.
    with UploadProxy(s3.endpoint, fail_parts_from=2, fail_status=403) as proxy:
        env = {**env, "AWS_ENDPOINT_URL": proxy.url, "AWS_ENDPOINT_URL_S3": proxy.url}
        p = cli.run("skim", source, f"s3://{BUCKET}/refused.root", env=env)
    err = p.stderr.decode()
    assert p.returncode != 0 and f"s3://{BUCKET}/refused.root" in err and "part 2" in err and "403" in err, err
    assert "AWS_ACCESS_KEY_ID" in err and SECRET not in err, err
    assert "refused.root" not in objects(s3) and uploads(s3) == []
    # Outputs that cannot go to a URL say so.
    for args in (["skim", "--checkpoint-clusters", "1", source, f"s3://{BUCKET}/c.root"],
                 ["convert", source, f"s3://{BUCKET}/x.parquet"]):
        p = cli.run(*args, env=s3.env)
        assert p.returncode != 0 and "://" in p.stderr.decode(), p.stderr.decode()


def test_server_failing_mid_upload_leaves_no_object_and_no_upload(cli, s3, source):
    with UploadProxy(s3.endpoint, fail_parts_from=2, fail_status=500) as proxy:
        env = {**s3.env, "AWS_ENDPOINT_URL": proxy.url, "AWS_ENDPOINT_URL_S3": proxy.url, "RNTUPLE_RETRIES": "1"}
        p = cli.run("skim", source, f"s3://{BUCKET}/failed.root", env=env)
        log = proxy.log()
    err = p.stderr.decode()
    assert p.returncode != 0 and f"s3://{BUCKET}/failed.root" in err and "part 2" in err, err
    assert any(m == "DELETE" and "uploadId=" in path for m, path, _ in log), log  # aborted
    assert "failed.root" not in objects(s3) and uploads(s3) == []
    assert leftovers("failed") == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_interrupted_upload_leaves_no_object(cli, s3, source, sig, tmp):
    key = f"interrupted-{sig.name}.root"
    staging = tmp / f"staging-{sig.name}"  # TMPDIR: where the output is staged
    staging.mkdir()
    with UploadProxy(s3.endpoint, part_delay_s=2.0) as proxy:
        env = {**os.environ, **s3.env, "AWS_ENDPOINT_URL": proxy.url, "AWS_ENDPOINT_URL_S3": proxy.url,
               "TMPDIR": str(staging)}
        proc = subprocess.Popen([str(cli.path), "merge", f"s3://{BUCKET}/{key}", source, source],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            assert proxy.wait_for(lambda m, p: m == "PUT" and "partNumber=" in p), "no part upload started"
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
        assert proc.returncode == -sig, (proc.returncode, err)  # ended by the signal, after the clean-up
        time.sleep(2.5)  # parts the proxy still held reach the server (refused: the upload is gone)
    assert key not in objects(s3)
    left = os.listdir(staging)
    if sig == signal.SIGKILL:
        # No clean-up ran: the unfinished upload is listed (it is no object; a lifecycle rule removes such), and
        # the staging file stays in TMPDIR.
        assert uploads(s3) == [key]
        for u in s3.client().list_multipart_uploads(Bucket=BUCKET)["Uploads"]:
            s3.client().abort_multipart_upload(Bucket=BUCKET, Key=u["Key"], UploadId=u["UploadId"])
        assert len(left) == 1 and left[0].startswith(f"rntuple-upload-{key}-"), left
    else:
        assert uploads(s3) == [], err
        assert left == [], left


def test_xrootd_server_failing_mid_upload_leaves_no_file(cli, xrd, xrd_dir, source):
    # Once through a passing proxy, to learn the answer bytes of a whole upload.
    with TcpFaultProxy(xrd.port, "pass") as proxy:
        cli.ok("skim", source, proxy.url_of("/probe.root"))
        total = proxy.bytes_down[0]
        print("answer bytes per connection", proxy.bytes_down)
    (xrd_dir / "probe.root").unlink()
    # Then the connections reset before the answers of the last writes, the sync and the close.
    env = {"RNTUPLE_CONNECT_TIMEOUT": "1", "RNTUPLE_IDLE_TIMEOUT": "2", "RNTUPLE_RETRIES": "0"}
    with TcpFaultProxy(xrd.port, "reset", after=total - 40) as proxy:
        p = cli.run("skim", source, proxy.url_of("/cut.root"), env=env)
    err = p.stderr.decode()
    assert p.returncode != 0 and "cut.root" in err, err
    assert not (xrd_dir / "cut.root").exists()
    left = [n for n in os.listdir(xrd_dir) if "cut.root" in n]
    # The temporary file may stay when the server cannot be reached to remove it; never the destination.
    assert all(n.startswith(".cut.root.tmp-") for n in left), left
    for n in left:
        (xrd_dir / n).unlink()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_interrupted_xrootd_upload_leaves_no_destination(cli, xrd, xrd_dir, source, sig, tmp):
    """The server stops answering after the temporary file is created (its connection stalls); the process is
    interrupted mid-upload: the destination never appears (the temporary file may stay: the server cannot be
    reached to remove it)."""
    with TcpFaultProxy(xrd.port, "pass") as proxy:
        cli.ok("skim", source, proxy.url_of("/probe.root"))
        total = proxy.bytes_down[0]
    (xrd_dir / "probe.root").unlink()
    name = f"stalled-{sig.name}.root"
    staging = tmp / f"xrootd-staging-{sig.name}"
    staging.mkdir()
    env = {**os.environ, "RNTUPLE_CONNECT_TIMEOUT": "1", "RNTUPLE_IDLE_TIMEOUT": "2", "RNTUPLE_RETRIES": "0",
           "TMPDIR": str(staging)}
    with TcpFaultProxy(xrd.port, "stall", after=total - 40) as proxy:
        proc = subprocess.Popen([str(cli.path), "skim", source, proxy.url_of("/" + name)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        try:
            end = time.monotonic() + 20
            while not any(n.startswith(f".{name}.tmp-") for n in os.listdir(xrd_dir)) and time.monotonic() < end:
                time.sleep(0.05)
            time.sleep(0.3)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
    assert proc.returncode == -sig, (proc.returncode, err)  # ended by the signal, after the clean-up
    assert not (xrd_dir / name).exists()
    left = [n for n in os.listdir(xrd_dir) if name in n]
    assert all(n.startswith(f".{name}.tmp-") for n in left), left
    for n in left:
        (xrd_dir / n).unlink()
    # The staging file: removed on SIGTERM, left by SIGKILL.
    assert len(os.listdir(staging)) == (1 if sig == signal.SIGKILL else 0), os.listdir(staging)

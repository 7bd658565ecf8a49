"""bench/io_bench.py's s3-write part (issue 33): a skim written to S3 by this project (streamed while written) against
the same skim written locally and uploaded by boto3 and the AWS CLI; every object read back; and its tables."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from pathlib import Path

import _harness as H
import _io_common as C
from _io_common import fmt_s

# ----------------------------------------------------------------------------------------------
# s3:// write of a skim: streamed by this project vs skimmed locally and then uploaded
# ----------------------------------------------------------------------------------------------

# dataset -> (what, CLI skim flags, rntuple.skim keyword arguments)
SKIMS = {
    "synthetic": ("fields particles (compressed pages copied, cluster by cluster)", ["--fields", "particles"],
                  {"fields": ["particles"]}),
    "nanoaod": ("where nMuon >= 1 (all fields, re-encoded)", ["--where", "nMuon >= 1"], {"where": "nMuon >= 1"}),
}
S3_OUT_BUCKET = "iobench-out"


def _aws_cli() -> str | None:
    """The AWS CLI's path when `aws --version` runs, else None."""
    import shutil

    aws = shutil.which("aws")
    if not aws:
        return None
    try:
        p = subprocess.run([aws, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return aws if p.returncode == 0 else None


def _readback(src: str, env=None) -> dict:
    """The values `rntuple bench read` gives for a skim's output: entries and every sum it prints."""
    _, o = C.bench_read(src, env=env)
    return {k: v for k, v in o.items() if k == "entries" or k == "checksum" or k.endswith("_sum") or k.endswith("_items")}


def run_s3_write(b: C.Bench, ds: str, path: Path, s3, notes: dict) -> None:
    """One skim of `path` (SKIMS[ds]) written to S3 four ways, alternated (rotated) in each repetition:

    * ``ours CLI -> s3://``: ``rntuple skim IN s3://iobench-out/KEY`` (staged in TMPDIR and streamed as multipart
      parts while written, completed after the footer), the process's wall time;
    * ``ours py -> s3://``: ``rntuple.skim(IN, "s3://...")`` in this process;
    * ``ours CLI local + boto3``: ``rntuple skim IN bench/data/io/KEY`` then boto3's ``upload_file`` (its default
      TransferConfig: multipart from 8 MiB, 8 MiB parts, 10 threads), the sum of both;
    * ``ours CLI local + aws s3 cp``: the same with the AWS CLI (``aws s3 cp``) when it is installed.

    Every object is read back (``rntuple bench read s3://...``) once and must give the local skim's values; objects
    and the local file are deleted after each run (moto keeps them in memory)."""
    what, flags, kw = SKIMS[ds]
    env = {**os.environ, **s3.env}
    client = s3.client()
    try:
        client.create_bucket(Bucket=S3_OUT_BUCKET)
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass
    aws = _aws_cli()
    notes["aws_cli"] = aws and subprocess.run([aws, "--version"], capture_output=True, text=True).stdout.strip()
    local = C.IODATA / f"skim_{ds}.root"
    C.warm(path)

    def skim_cli(out: str) -> dict:
        p = H.run_child([str(C.BINARY), "skim", str(path), out, "--ntuple", C.NTUPLE, "--no-progress", *flags], env=env)
        if p.returncode != 0:
            raise RuntimeError(f"rntuple skim -> {out}: exit {p.returncode}: {p.why()}")
        o = H.last_json(p.stdout, "seconds")
        return {"seconds": p.wall, "skim_seconds": p.wall, "entries": o.get("entries"), "method": o.get("method"),
                "file_bytes": o.get("file_bytes")}

    def streamed(key: str) -> dict:
        r = skim_cli(f"s3://{S3_OUT_BUCKET}/{key}")
        del r["skim_seconds"]  # skim and upload in one
        return r

    def py_streamed(key: str) -> dict:
        import rntuple

        saved = {k: os.environ.get(k) for k in s3.env}
        os.environ.update(s3.env)
        try:
            t0 = time.perf_counter()
            o = rntuple.skim(str(path), f"s3://{S3_OUT_BUCKET}/{key}", ntuple=C.NTUPLE, **kw)
            secs = time.perf_counter() - t0
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return {"seconds": secs, "entries": o.get("entries"), "method": o.get("method"), "file_bytes": o.get("file_bytes")}

    def local_then(upload, key: str) -> dict:
        r = skim_cli(str(local))
        t0 = time.perf_counter()
        upload(key)
        r["upload_seconds"] = time.perf_counter() - t0
        r["seconds"] = r["skim_seconds"] + r["upload_seconds"]
        r["file_bytes"] = local.stat().st_size
        return r

    def boto3_upload(key: str) -> None:
        client.upload_file(str(local), S3_OUT_BUCKET, key)  # boto3's default TransferConfig

    def aws_upload(key: str) -> None:
        p = H.run_child([aws, "s3", "cp", "--only-show-errors", str(local), f"s3://{S3_OUT_BUCKET}/{key}",
                         "--endpoint-url", s3.endpoint], env=env)
        if p.returncode != 0:
            raise RuntimeError(f"aws s3 cp: exit {p.returncode}: {p.why()}")

    methods = {"ours CLI -> s3://": streamed, "ours py -> s3://": py_streamed,
               "ours CLI local + boto3": lambda key: local_then(boto3_upload, key)}
    if aws:
        methods["ours CLI local + aws s3 cp"] = lambda key: local_then(aws_upload, key)
    else:
        b.skip(ds, "skim", "s3-write", None, "ours CLI local + aws s3 cp", "the AWS CLI (aws) is not installed")
    C.log(f"  [{ds} s3 write: skim {what}] load {C.loadavg()}")
    ref = None
    recs = {name: {"dataset": ds, "fieldset": "skim", "target": "s3-write", "latency_ms": None, "reader": name,
                   "skim": what, "load": C.loadavg(), "runs": []} for name in methods}

    def one(name: str, rep: int) -> dict:
        nonlocal ref
        key = f"{ds}-{''.join(c if c.isalnum() else '_' for c in name)}-{rep}.root"
        try:
            r = methods[name](key)
            if rep == 0:  # the object read back once per method
                if ref is None:  # the local skim's values
                    skim_cli(str(local))
                    ref = _readback(str(local))
                    notes[f"s3_write_{ds}_local_skim"] = ref
                got = _readback(f"s3://{S3_OUT_BUCKET}/{key}", env)
                r["readback"] = got
                r["readback_equal"] = got == ref
            client.delete_object(Bucket=S3_OUT_BUCKET, Key=key)
        finally:
            local.unlink(missing_ok=True)
        return r

    b.alternate(recs, one, repeat_slow=True)
    for name in methods:
        rec = recs[name]
        C.Bench.finish(rec)
        if "seconds" in rec:
            for k in ("skim_seconds", "upload_seconds", "file_bytes", "method"):
                vals = [r[k] for r in rec["runs"] if r.get(k) is not None]
                if vals:
                    rec[k] = statistics.median(vals) if k != "method" else vals[0]
            rec["readback_equal"] = rec["runs"][0].get("readback_equal")
            rec["readback"] = rec["runs"][0].get("readback")
            rec["reference"] = ref
        b.records.append(rec)
        C.Bench.print_record(rec)


def s3_write_tables(b: C.Bench, datasets: dict) -> str:
    recs = [r for r in b.records if r["target"] == "s3-write"]
    if not recs:
        return ""
    loads = [r["load"][0] for r in recs]
    lines = [f"load average (1 min) {min(loads):.2f}-{max(loads):.2f}", "",
             "| dataset | skim | method | seconds (median) | n | runs | skim s | upload s | output MB | MB/s | "
             "read back = local skim |", "|---|---|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for r in recs:
        if "seconds" not in r:
            why = r.get("skipped") or ("error: " + r.get("error", "?"))
            lines.append(f"| {r['dataset']} | {r.get('skim', '')} | {r['reader']} | - | 0 | {why[:150]} | | | | | |")
            continue
        mb = (r.get("file_bytes") or 0) / 1e6
        eq = r.get("readback_equal")
        lines.append(f"| {r['dataset']} | {r.get('skim', '')} | {r['reader']} | {fmt_s(r['seconds'])} | {r['n']} | "
                     f"{', '.join(fmt_s(x) for x in r['seconds_all'])} | "
                     f"{fmt_s(r.get('skim_seconds') if r.get('upload_seconds') is not None else None)} | "
                     f"{fmt_s(r.get('upload_seconds'))} | {mb:.1f} | {mb / r['seconds']:.0f} | "
                     f"{'yes' if eq else ('-' if eq is None else 'NO')} (entries {(r.get('readback') or {}).get('entries')}) |")
    return "\n".join(lines) + "\n"

"""Damaged files through the Python package: thousands of variants of small valid files (bytes flipped, blocks
zeroed, truncated) either read or raise rntuple.RNTupleError; nothing crashes the interpreter and no other
exception escapes. The sweep runs in a subprocess, so that a crash shows up as a failed test."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import rntuple

SWEEP = r"""
import io, json, os, random, sys
import rntuple
src, work, n_variants, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(src, "rb").read()
rng = random.Random(seed)
stats = {"ok": 0, "raised": 0, "unexpected": []}
path = os.path.join(work, "variant.root")

def variants():
    for _ in range(n_variants):
        b = bytearray(data)
        kind = rng.random()
        if kind < 0.6:
            for _ in range(rng.choice((1, 1, 1, 2, 4))):
                i = rng.randrange(len(b))
                b[i] ^= rng.choice((1, 2, 4, 8, 16, 32, 64, 128, 255, rng.randrange(1, 256)))
            yield "flip", bytes(b)
        elif kind < 0.8:
            i = rng.randrange(len(b))
            n = rng.choice((4, 8, 16, 64))
            b[i:i + n] = bytes(len(b[i:i + n])) if rng.random() < 0.5 else b"\xff" * len(b[i:i + n])
            yield "block", bytes(b)
        else:
            yield "truncate", bytes(b[:rng.randrange(len(b))])

for k, (kind, blob) in enumerate(variants()):
    with open(path, "wb") as f:
        f.write(blob)
    # every fourth variant through a file object, read range by range (the path for remote files)
    source = io.BytesIO(blob) if k % 4 == 0 else path
    try:
        with rntuple.open(source) as f:
            for name in f.ntuple_names():
                t = f[name]
                a = t.arrays()
                len(a)
                t.to_arrow()
                t.to_rows(entry_stop=min(t.num_entries, 50))
                for c in t.iterate(step_size=max(1, t.num_entries // 3 or 1), progress=False):
                    len(c)
        stats["ok"] += 1
    except rntuple.RNTupleError:
        stats["raised"] += 1
    except KeyError:
        stats["raised"] += 1
    except Exception as exc:
        if len(stats["unexpected"]) < 20:
            stats["unexpected"].append(f"variant {k} ({kind}): {type(exc).__name__}: {exc}"[:400])
print(json.dumps(stats))
sys.stdout.flush()
"""

ROWS_SCHEMA = {
    "i": "std::int32_t", "f": "float", "s": "std::string", "v": "std::vector<std::int16_t>",
    "vv": "std::vector<std::vector<float>>", "o": "std::optional<double>", "a": "std::array<std::uint8_t,2>",
    "var": "std::variant<std::int32_t,std::string>", "m": "std::map<std::string,std::int32_t>", "b": "std::bitset<3>",
    "p": "std::pair<float,std::string>", "u": "std::unique_ptr<std::int64_t>",
}


def rows(n):
    return [{"i": k, "f": k / 2, "s": "x" * (k % 4), "v": list(range(k % 3)), "vv": [[float(k)] * j for j in range(k % 3)],
             "o": None if k % 2 else k * 0.5, "a": [k % 256, 1], "var": k if k % 2 else str(k),
             "m": [[str(j), j] for j in range(k % 2)], "b": [k % 2 == 0, True, False], "p": [k * 1.5, str(k)],
             "u": None if k % 3 else k} for k in range(n)]


@pytest.mark.parametrize("variant,options,n_variants", [
    ("zstd", {"compression": 505, "max_unzipped_page_size": 64}, 1500),
    ("uncompressed_no_checksums", {"compression": 0, "enable_page_checksums": False, "max_unzipped_page_size": 64}, 1500),
])
def test_corruption_sweep(tmp_path, variant, options, n_variants):
    src = tmp_path / f"{variant}.root"
    rntuple.write(src, "T", rows(40), schema=ROWS_SCHEMA, **options)
    assert len(rntuple.open(src)["T"].arrays()) == 40
    proc = subprocess.run([sys.executable, "-c", SWEEP, str(src), str(tmp_path), str(n_variants), "5"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, (f"the sweep crashed (status {proc.returncode}):\n"
                                  f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not stats["unexpected"], "exceptions other than RNTupleError:\n" + "\n".join(stats["unexpected"])
    assert stats["ok"] + stats["raised"] == n_variants
    assert stats["raised"] > 0 and stats["ok"] > 0, stats


def test_truncated_every_length_small(tmp_path):
    """Every prefix of a tiny file raises RNTupleError or (when only records after the RNTuple's anchor are
    cut: streamer info, keys list, free segments) reads the right values; a cut through the data always raises."""
    src = tmp_path / "tiny.root"
    rntuple.write(src, "T", {"x": np.arange(3, dtype=np.int32)})
    data = src.read_bytes()
    p = tmp_path / "cut.root"
    raised = 0
    for n in range(0, len(data)):
        p.write_bytes(data[:n])
        try:
            with rntuple.open(p) as f:
                values = [f[k].arrays().x.tolist() for k in f.ntuple_names()]
        except rntuple.RNTupleError:
            raised += 1
            continue
        assert values in ([[0, 1, 2]], []), (n, values)
    assert raised > len(data) // 2

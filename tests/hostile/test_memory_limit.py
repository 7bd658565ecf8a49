"""The process-wide read budget from Python (``rntuple.set_memory_limit``, issue 35): a read over the limit raises an
``RNTupleError`` naming what and how much before allocating; under it, the values. Run in a child process (the limit is
global to the process)."""

from __future__ import annotations

import json

from harness import PYTHON, assert_sane, run_limited

CODE = r"""
import json, sys
import numpy as np
import rntuple

path = sys.argv[1]
x = (np.arange(1_000_000) % 1000).astype(np.float32) * np.float32(0.5)
rntuple.write(path, "Events", {"x": x})
out = {"default": rntuple.memory_limit()}
rntuple.set_memory_limit(1 << 20)
out["set"] = rntuple.memory_limit()
try:
    rntuple.open(path)["Events"].arrays()
    out["over"] = "no error"
except rntuple.RNTupleError as e:
    out["over"] = f"{type(e).__name__}: {e}"
rntuple.set_memory_limit(64 << 20)
a = rntuple.open(path)["Events"].arrays()
out["n"] = len(a)
out["sum"] = float(np.asarray(a["x"], dtype=np.float64).sum())
out["head"] = [float(v) for v in np.asarray(a["x"])[[0, 1, 999, 1999]]]
rntuple.set_memory_limit(None)
out["reset"] = rntuple.memory_limit()
print(json.dumps(out))
"""


def test_memory_limit_from_python(tmp_path):
    r = run_limited([PYTHON, "-c", CODE, tmp_path / "x.root"], timeout=120)
    assert_sane(r, "rntuple.set_memory_limit")
    assert r.returncode == 0, r.describe()
    out = json.loads(r.stdout)
    assert (out["default"], out["set"], out["reset"]) == (None, 1 << 20, None)
    assert out["over"].startswith("UnsupportedError: "), out["over"]
    assert "of field 'x'" in out["over"] and "over the memory limit of 1.0 MiB" in out["over"], out["over"]
    assert out["n"] == 1_000_000
    assert out["head"] == [0.0, 0.5, 499.5, 499.5]
    assert out["sum"] == 1000.0 * sum(i * 0.5 for i in range(1000))


def test_memory_limit_flag_of_the_cli(cli, tmp_path):
    """``rntuple --memory-limit SIZE``: a one-line error naming what and how much over it, the values under it."""
    from harness import BIN, assert_one_line_error

    src = tmp_path / "in.json"
    src.write_text(json.dumps([{"x": float(i % 1000) * 0.5} for i in range(300_000)]))
    path = tmp_path / "x.root"
    w = run_limited([BIN, "import-json", path, "--ntuple", "Events", "--schema", '{"x": "float"}', "--input", src],
                    timeout=120)
    assert w.returncode == 0, w.describe()
    over = run_limited([BIN, "--memory-limit", "512K", "bench", "read", path])
    assert_sane(over, "bench read over the limit")
    assert_one_line_error(over, "bench read over the limit")
    err = over.stderr.decode()
    assert "of field 'x'" in err and "over the memory limit of 512.0 KiB" in err, err
    under = run_limited([BIN, "--memory-limit", "64M", "bench", "read", path])
    assert_sane(under, "bench read under the limit")
    assert under.returncode == 0 and json.loads(under.stdout)["entries"] == 300_000, under.describe()
    bad = run_limited([BIN, "--memory-limit", "lots", "info", path])
    assert_one_line_error(bad, "--memory-limit lots")
    assert b"--memory-limit" in bad.stderr, bad.describe()

"""Malformed attribute sets (issue 35) through Python's attribute API: ``ntuple.attributes[name]``, its
``entries()`` and ``arrays()``, in a child process with the harness's wall-time and RSS limits. Each gives the
values or one line of an ``rntuple.RNTupleError`` (never a ValueError, TypeError or another exception's
traceback). The files are the manifest's entries with an ``attribute_set`` (their CLI runs are test_hostile's)."""

from __future__ import annotations

import json

import pytest
from harness import PYTHON, assert_one_line_error, assert_sane, manifest, run_limited

CODE = r"""
import json, sys
import rntuple
path, ntuple, name = sys.argv[1:4]
try:
    s = rntuple.open(path)[ntuple].attributes[name]
    out = {"entries": [list(e) for e in s.entries()], "arrays": s.arrays().to_list()}
except rntuple.RNTupleError as e:
    print(f"{type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
    sys.exit(1)
print(json.dumps(out))
"""


def _cases():
    m = manifest()
    if m.get("error"):
        return [pytest.param(None, id="generator-failed")]
    return [pytest.param(e, id=e["file"]) for e in m["files"] if "attribute_set" in e]


@pytest.mark.parametrize("e", _cases())
def test_attribute_set_through_python(files, e):
    assert e is not None, manifest().get("error")
    a = e["attribute_set"]
    r = run_limited([PYTHON, "-c", CODE, files / e["file"], e["ntuple"], a["name"]])
    what = f"{e['file']} ({e['description']}): Python attributes[{a['name']!r}]"
    assert_sane(r, what)
    if a["expect"] == "error":
        assert_one_line_error(r, what)
        assert r.stderr.split(b":")[0] in (b"CorruptFileError", b"UnsupportedError", b"RNTupleError"), r.describe()
    else:
        assert r.returncode == 0, f"{what}: {r.describe()}"
        assert json.loads(r.stdout) == a["values"], f"{what}: {r.stdout[:300]!r}"

"""ROOT 6.40 in a subprocess, as the tests ask it things, and the C++ more than one test declares there.

PyROOT and cling stay out of pytest's process (a crash inside ROOT then fails one test, not the run): each question
to ROOT is a short Python script run in a fresh interpreter.

  * `run_root(script, *args, cxx=...)`: ROOT imported quietly (Python warnings off, gErrorIgnoreLevel = kError),
    the C++ `cxx` declared to cling, then `script`, which reads its arguments from sys.argv[1:] and ends with
    `done(result)`: the result printed as JSON on the last line, and the process ended with os._exit (ROOT 6.40
    from pip can crash while tearing down PyROOT at interpreter exit; the result is out by then). Returns the
    result; a result {"error": ...} fails the test.
  * `root_oracle(work, targets)`: the suite's oracle (root_helpers.cxx's `xoracle::DumpJson`, loaded by
    rootgen._load_root: compiled once by ACLiC, root_load.py) reads each (RNTuple, file) of `targets` in one
    process: every entry in the JSON form of `rntuple dump`, and with describe=True ROOT's view of the
    descriptor (`xoracle::Describe`); `compare_entries` checks its entries against what was written.
  * `ATTRIBUTE_SET_CXX`: `xattr_entries`, the entries of an attribute set (ROOT 6.38+'s experimental RNTuple
    attributes) as ROOT's RNTupleAttrSetReader gives them; declared by test_attributes.py and test_merge_modes.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import need_root
from rootgen import compare, load_oracle

HERE = Path(__file__).resolve().parent

PREAMBLE = r'''
import json, os, sys, warnings
warnings.filterwarnings("ignore")
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kError


def done(result):
    print(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)


'''


def _python(code: str, args, timeout: float) -> subprocess.CompletedProcess:
    """`python -c code args...`; a non-zero exit fails the test with the end of its stderr."""
    need_root()
    p = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, timeout=timeout)
    assert p.returncode == 0, f"the ROOT process exited with {p.returncode}:\n{p.stderr.decode(errors='replace')[-4000:]}"
    return p


def run_root(script: str, *args, cxx: str = "", timeout: float = 600):
    """Runs `script` (Python, after PREAMBLE and the declaration of the C++ `cxx`) with `args` in a ROOT process;
    returns the JSON result it passed to done()."""
    declare = ""
    if cxx:
        declare = (f"if not ROOT.gInterpreter.Declare({cxx!r}):\n"
                   "    done({'error': 'cling could not declare the C++ given to run_root (its errors are on stderr)'})\n")
    p = _python(PREAMBLE + declare + script, args, timeout)
    err = p.stderr.decode(errors="replace")[-3000:]
    lines = p.stdout.decode(errors="replace").strip().splitlines()
    try:
        res = json.loads(lines[-1])
    except (IndexError, ValueError):
        pytest.fail(f"the ROOT process printed no JSON result: {p.stdout[-1000:]!r}\n{err}")
    if isinstance(res, dict) and "error" in res:
        pytest.fail(f"ROOT: {res['error']}\n{err}")
    return res


ORACLE = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import rootgen
ROOT, _ = rootgen._load_root(Path(sys.argv[2]))
jobs = json.loads(sys.argv[3])
if jobs["dictionaries"]:
    # ACLiC writes a dictionary library into the current directory.
    (Path(sys.argv[2]) / "dict").mkdir(parents=True, exist_ok=True)
    ROOT.gSystem.ChangeDirectory(str(Path(sys.argv[2]) / "dict"))
    for types, headers in jobs["dictionaries"]:
        ROOT.gInterpreter.GenerateDictionary(types, headers)
for ntuple, path, out in jobs["targets"]:
    ROOT.xoracle.DumpJson(ntuple, path, out + ".oracle.json")
    if jobs["describe"]:
        with open(out + ".describe.json", "w") as f:
            f.write(str(ROOT.xoracle.Describe(ntuple, path)))
sys.stdout.flush()
os._exit(0)
'''


class Reading(NamedTuple):
    entries: list  # every entry, as rootgen.load_oracle gives them
    describe: dict | None  # ROOT's view of the descriptor (describe=True)


def root_oracle(work: Path, targets, describe: bool = False, dictionaries=(), timeout: float = 900) -> dict:
    """ROOT 6.40's reading of each (ntuple, file) of `targets`, in one ROOT process working in `work` (the oracle's
    files go there): {(ntuple, file): Reading}. `dictionaries`: (types, headers) pairs given to
    gInterpreter.GenerateDictionary first, for the instantiations ROOT 6.40 from pip reads only with a compiled
    dictionary (root_load.DICTIONARY_TYPES has the generated files' ones)."""
    work, targets = Path(work), list(targets)
    jobs = {"describe": describe, "dictionaries": [list(d) for d in dictionaries], "targets": []}
    for k, (ntuple, path) in enumerate(targets):
        jobs["targets"].append([ntuple, str(path), str(work / f"{k}_{Path(path).name}.{ntuple.replace('/', '_')}")])
    _python(ORACLE, [HERE, work, json.dumps(jobs)], timeout)
    out = {}
    for (ntuple, path), (_, _, stem) in zip(targets, jobs["targets"]):
        out[(ntuple, path)] = Reading(load_oracle(stem + ".oracle.json"),
                                      json.loads(Path(stem + ".describe.json").read_text()) if describe else None)
    return out


def compare_entries(oracle: list, entries: list, what: str = "", limit: int = 20) -> list[str]:
    """ROOT's reading (`root_oracle`'s entries) against what was written, entry by entry and value by value
    (rootgen.compare): the first `limit` differences, a different number of entries included."""
    errors = [] if len(oracle) == len(entries) else [f"{what + ': ' if what else ''}ROOT reads {len(oracle)} entries, {len(entries)} written"]
    for k, (o, e) in enumerate(zip(oracle, entries)):
        compare(o, e, f"{what + ' ' if what else ''}entry[{k}]", errors, limit=limit)
    return errors


ATTRIBUTE_SET_CXX = r"""
#include <ROOT/RNTupleAttrReading.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

// The entries of the attribute set `set` of `reader` as ROOT's RNTupleAttrSetReader gives them (by range start),
// or only those whose range holds the main entry `entry` when entry >= 0: a JSON array of
// [range start, range length, the value of each field of the set in schema order]. Fields of type std::int32_t
// and std::string (what the tests write); another type throws.
std::string xattr_entries(ROOT::RNTupleReader &reader, const std::string &set, long long entry = -1) {
   auto attrs = reader.OpenAttributeSet(set);
   auto values = attrs->CreateEntry();
   std::ostringstream os;
   os << "[";
   bool first = true;
   for (auto idx : entry < 0 ? attrs->GetAttributes() : attrs->GetAttributes(entry)) {
      auto range = attrs->LoadEntry(idx, *values);
      os << (first ? "" : ", ") << "[" << range.GetStart() << ", " << range.GetLength();
      for (const auto &v : *values) {
         const auto type = v.GetField().GetTypeName();
         if (type == "std::int32_t")
            os << ", " << v.GetRef<std::int32_t>();
         else if (type == "std::string")
            os << ", \"" << v.GetRef<std::string>() << "\"";
         else
            throw std::runtime_error("xattr_entries: field '" + v.GetField().GetFieldName() + "' of type " + type);
      }
      os << "]";
      first = false;
   }
   os << "]";
   return os.str();
}
"""

"""The suite's C++ (root_helpers.cxx, xtypes.h and the map dictionary) in a ROOT process, compiled once.

Every ROOT subprocess of the test suites (the generator, the oracles, tests/python's ``run_root``) needs the
generators (``xgen::``), the oracle (``xoracle::``) and a compiled dictionary for ``DICTIONARY_TYPES``. Declaring
root_helpers.cxx to cling JIT-compiles it again in each process (about 10 s of a 15 s oracle run), and an
ACLiC dictionary built in a fresh directory costs 10-30 s more. ``load(ROOT)`` builds both with ACLiC once, into
``generated/aclic/<hash of the sources and of ROOT's version>/``, under a file lock (one process builds, the
others wait), and loads them (a few seconds). Where ACLiC cannot build (no C++ compiler), it falls back to
cling's JIT and says so on stderr: slower, same results.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELPERS = HERE / "root_helpers.cxx"
XTYPES = HERE / "xtypes.h"
CACHE = HERE / "generated" / "aclic"

# std::map-like instantiations whose collection proxy is broken when cling generates it on the fly (ROOT 6.40 from
# pip aborts in TGenCollectionProxy__VectorNext or crashes in RMapField's constructor): give them a real, compiled
# dictionary with ACLiC before anything else touches them. Sets, std::map<std::string, int> and the unordered
# containers keyed by strings work without one.
DICTIONARY_TYPES = [
    "std::unordered_map<std::int32_t,std::string>",
    "std::multimap<std::int32_t,float>",
    "std::map<std::string,xtypes::Point>",
]


def cache_dir(ROOT) -> Path:
    """The build directory of these sources for this ROOT version."""
    h = hashlib.sha256()
    for p in (HELPERS, XTYPES, Path(__file__)):  # this file holds DICTIONARY_TYPES
        h.update(p.read_bytes())
    h.update(str(ROOT.gROOT.GetVersion()).encode())
    return CACHE / h.hexdigest()[:16]


def load(ROOT) -> dict:
    """Makes xgen::, xoracle:: and the dictionary of DICTIONARY_TYPES available in this ROOT process; returns
    how long each part took and whether the compiled helpers were used."""
    ROOT.gInterpreter.AddIncludePath(str(HERE))
    out = cache_dir(ROOT)
    (out / "dict").mkdir(parents=True, exist_ok=True)
    cwd = Path.cwd()
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        t = time.time()
        # ACLiC writes the dictionary library into the current directory and reuses it when it is up to date.
        ROOT.gSystem.ChangeDirectory(str(out / "dict"))
        try:
            ROOT.gInterpreter.GenerateDictionary(";".join(DICTIONARY_TYPES), f"map;unordered_map;string;cstdint;{XTYPES}")
        finally:
            ROOT.gSystem.ChangeDirectory(str(cwd))
        if not list((out / "dict").glob("AutoDict_*.so")):
            raise RuntimeError(f"ACLiC did not build the dictionary for {DICTIONARY_TYPES} in {out / 'dict'}")
        t_dict = time.time() - t
        t = time.time()
        # A copy of the source in the cache directory: ACLiC puts its library beside the path it is given.
        src = out / HELPERS.name
        if not src.exists() or src.read_bytes() != HELPERS.read_bytes():
            shutil.copyfile(HELPERS, src)
        compiled = ROOT.gSystem.CompileMacro(str(src), "kO", "", str(out / "build")) == 1
    if not compiled:
        print(f"root_load: ACLiC could not compile {HELPERS} (see above); declaring it to cling instead", file=sys.stderr)
        if not ROOT.gInterpreter.Declare(HELPERS.read_text()):
            raise RuntimeError("cling could not compile root_helpers.cxx")
    return {"dictionary_s": round(t_dict, 2), "helpers_s": round(time.time() - t, 2), "helpers_compiled": compiled}

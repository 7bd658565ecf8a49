"""`make install PREFIX=...` and the installed package used as a C++ project uses it: a CMake project outside
the tree (examples/cpp, copied to a temporary directory) finds it with find_package(rntuple) and writes
NanoAOD-like events from four threads; a C program (examples/c) builds with pkg-config, against the shared
and the static library, and reads that file column by column. The values are checked with the Python package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _abi import LIB_DIR, REPO, skip_or_fail


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    if not (LIB_DIR / "librntuple_c.so").exists():
        skip_or_fail(f"{LIB_DIR}/librntuple_c.so is missing: run `make build` first")
    for tool in ("cmake", "pkg-config", "cc"):
        if shutil.which(tool) is None:
            skip_or_fail(f"{tool} is not installed")
    pfx = tmp_path_factory.mktemp("prefix")
    _run(["make", "--no-print-directory", "install", f"PREFIX={pfx}"], cwd=REPO)
    return pfx


def test_install_puts_everything_in_place(prefix):
    for rel in ("include/rntuple.h", "include/rntuple.hpp", "include/rntuple_view.hpp", "lib/librntuple_c.so", "lib/librntuple_c.a", "lib/pkgconfig/rntuple.pc",
                "lib/cmake/rntuple/rntupleConfig.cmake", "lib/cmake/rntuple/rntupleConfigVersion.cmake"):
        assert (prefix / rel).is_file(), rel
    pc = (prefix / "lib/pkgconfig/rntuple.pc").read_text()
    assert "prefix=${pcfiledir}/../.." in pc.splitlines() and "Version: 0.1.0" in pc  # relocatable: no absolute prefix
    assert str(prefix) not in pc and str(prefix) not in (prefix / "lib/cmake/rntuple/rntupleConfig.cmake").read_text()


@pytest.fixture(scope="module")
def nano_file(prefix, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("consumer")
    src = work / "src"
    shutil.copytree(REPO / "examples" / "cpp", src)  # outside the tree: only the installed package is found
    _run(["cmake", "-S", str(src), "-B", str(work / "build"), f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", str(work / "build"), "-j2"])
    out = work / "nano.root"
    _run([str(work / "build" / "output_module"), str(out), "4", "5000"])
    return out


def test_cmake_project_outside_the_tree_writes_from_four_threads(nano_file):
    import numpy as np

    import rntuple

    with rntuple.open(nano_file) as f:
        nt = f["Events"]
        assert nt.num_entries == 20_000
        assert len(nt.fields) == 50
        a = nt.arrays(["event", "nJet", "Jet_pt", "HLT_IsoMu24"])
    order = np.argsort(a["event"].to_numpy())
    np.testing.assert_array_equal(a["event"].to_numpy()[order], np.arange(20_000))
    njet = np.asarray([len(x) for x in a["Jet_pt"].to_list()])[order]
    np.testing.assert_array_equal(njet, np.arange(20_000) % 8)
    np.testing.assert_array_equal(a["nJet"].to_numpy()[order], np.arange(20_000) % 8)
    np.testing.assert_array_equal(a["HLT_IsoMu24"].to_numpy()[order], np.arange(20_000) % 3 == 0)


@pytest.mark.parametrize("link", ["shared", "static"])
def test_c_program_with_pkg_config_reads_column_by_column(prefix, nano_file, tmp_path, link):
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    cflags = _run(["pkg-config", "--cflags", "rntuple"], env=env).split()
    exe = tmp_path / "read_columns"
    if link == "shared":
        libs = _run(["pkg-config", "--libs", "rntuple"], env=env).split() + [f"-Wl,-rpath,{prefix}/lib"]
    else:
        libs = [str(prefix / "lib" / "librntuple_c.a")] + [x for x in _run(["pkg-config", "--static", "--libs", "rntuple"], env=env).split()
                                                         if x != "-lrntuple_c" and not x.startswith("-L")]
    _run(["cc", "-Wall", "-Wextra", "-Werror", "-O2", str(REPO / "examples" / "c" / "read_columns.c"), *cflags, *libs, "-o", str(exe)])
    if link == "static":
        assert "rntuple" not in _run(["ldd", str(exe)])
    out = _run([str(exe), str(nano_file)])
    lines = out.splitlines()
    assert lines[0] == "20000 entries, 50 fields"
    by_field = {ln.split()[0]: ln.split() for ln in lines[1:]}
    assert by_field["event"][2] == "20000" and by_field["event"][-1] == f"{sum(range(20_000)):.6g}"
    assert by_field["Jet_pt"][2] == str(sum(i % 8 for i in range(20_000)))  # the items of every entry's list
    assert by_field["nJet"][-1] == f"{sum(i % 8 for i in range(20_000)):.6g}"

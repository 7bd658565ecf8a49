"""`make dist`, the relocatable binary package (target/dist/rntuple-VERSION-linux-x86_64.tar.gz): unpacked into a random
temporary directory, a CMake project (find_package(rntuple), the shared and the static target) and a plain C program built
with `cc prog.c $(pkg-config --cflags --libs rntuple)` write a small RNTuple through the C ABI, read it back and print its
entry count and sums; `bin/rntuple` runs from it. Then the unpacked directory is moved to another random directory and
both are built again from scratch against the new place, with the same output. Nothing in the package's pkg-config and
CMake files names the build tree or the first place it was unpacked.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from _abi import LIB_DIR, REPO, skip_or_fail

N = 1000

# Writes N entries (x = i; pt = i % 4 items i + 0.25 j) through the C ABI, reads both columns back in bulk and prints
# the entry count, the clusters and the sums.
PROG_C = r"""
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "rntuple.h"

#define CHECK(call)                                                                    \
  do {                                                                                 \
    if ((call) != RNTUPLE_OK) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, rntuple_last_error()); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

static int read_sum(uint64_t r, const char* field, size_t clusters, int is_float, double* sum, uint64_t* n) {
  uint32_t size = 0;
  CHECK(rntuple_reader_column_elements(r, field, 0, 0, clusters, n, &size, NULL));
  void* buf = malloc(*n * size + 8);
  uint64_t got = 0;
  CHECK(rntuple_reader_read_column(r, field, 0, 0, clusters, buf, *n * size + 8, &got));
  *sum = 0;
  for (uint64_t i = 0; i < got; i++) *sum += is_float ? (double)((float*)buf)[i] : (double)((int64_t*)buf)[i];
  free(buf);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.root\n", argv[0]);
    return 2;
  }
  uint64_t w = 0, r = 0, entries = 0, n_x = 0, n_pt = 0;
  uint32_t x = 0, pt = 0;
  CHECK(rntuple_writer_create(argv[1], "Events", "{\"x\": \"std::int64_t\", \"pt\": \"std::vector<float>\"}", 0, &w));
  CHECK(rntuple_entry_field(w, "x", &x));
  CHECK(rntuple_entry_field(w, "pt", &pt));
  for (int64_t i = 0; i < NENTRIES; i++) {
    float v[3];
    for (int j = 0; j < 3; j++) v[j] = (float)i + 0.25f * (float)j;
    CHECK(rntuple_entry_set_i64(w, x, i));
    CHECK(rntuple_entry_set_vec_f32(w, pt, v, (size_t)(i % 4)));
    CHECK(rntuple_entry_fill(w));
  }
  CHECK(rntuple_writer_commit(w, NULL));
  CHECK(rntuple_writer_free(w));

  size_t clusters = 0;
  double sum_x = 0, sum_pt = 0;
  CHECK(rntuple_open(argv[1], NULL, &r));
  CHECK(rntuple_reader_entries(r, &entries));
  CHECK(rntuple_reader_cluster_count(r, &clusters));
  if (read_sum(r, "x", clusters, 0, &sum_x, &n_x) || read_sum(r, "pt._0", clusters, 1, &sum_pt, &n_pt)) return 1;
  CHECK(rntuple_reader_free(r));
  printf("entries %" PRIu64 " x %" PRIu64 " sum %.2f pt %" PRIu64 " sum %.2f\n", entries, n_x, sum_x, n_pt, sum_pt);
  return 0;
}
"""

CMAKE_LISTS = """cmake_minimum_required(VERSION 3.16)
project(dist_consumer C)
find_package(rntuple 0.1 REQUIRED)
add_executable(prog prog.c)
target_compile_definitions(prog PRIVATE NENTRIES={n})
target_link_libraries(prog PRIVATE rntuple::rntuple)
add_executable(prog_static prog.c)
target_compile_definitions(prog_static PRIVATE NENTRIES={n})
target_link_libraries(prog_static PRIVATE rntuple::rntuple_static)
"""


def _expected() -> str:
    items = [(i, j) for i in range(N) for j in range(i % 4)]
    sum_pt = sum(i + 0.25 * j for i, j in items)
    return f"entries {N} x {N} sum {sum(range(N)):.2f} pt {len(items)} sum {sum_pt:.2f}"


def _run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def _clean_env(**extra) -> dict:
    """The environment without LD_LIBRARY_PATH (the programs must find the library by their run-time path) and without
    any rntuple package of the machine that CMake or pkg-config could find instead."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH", "rntuple_DIR")}
    env.update(extra)
    return env


def _version() -> str:
    """[workspace.package] version of Cargo.toml."""
    text = (REPO / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"', text, re.M | re.S)
    assert m, "no [workspace.package] version in Cargo.toml"
    return m.group(1)


@pytest.fixture(scope="module")
def tarball() -> Path:
    if not (LIB_DIR / "librntuple_c.so").exists() or not (REPO / "target" / "release" / "rntuple").exists():
        skip_or_fail("target/release/librntuple_c.so or target/release/rntuple is missing: run `make build` first")
    for tool in ("cmake", "pkg-config", "cc", "strip", "readelf", "objdump", "ldd"):
        if shutil.which(tool) is None:
            skip_or_fail(f"{tool} is not installed")
    # `-o build`: package what `make build` left in target/release (as the other tests of tests/c use it; `make test`
    # builds first) rather than a cargo build here.
    out = _run(["make", "--no-print-directory", "-o", "build", "dist"], cwd=REPO)
    path = Path(out.strip().splitlines()[-1])
    assert path == REPO / "target" / "dist" / f"rntuple-{_version()}-linux-{platform.machine()}.tar.gz"
    assert path.is_file()
    return path


def _top(tarball: Path) -> str:
    return tarball.name.removesuffix(".tar.gz")


def _build_and_run(pkg: Path, work: Path) -> dict:
    """Builds the CMake project (shared and static) and the pkg-config program against the package at `pkg` in the
    fresh directory `work`, runs each (writing its own file) and returns what they printed and where the shared library
    was found."""
    work.mkdir()
    src = work / "src"
    src.mkdir()
    (src / "prog.c").write_text(PROG_C)
    (src / "CMakeLists.txt").write_text(CMAKE_LISTS.format(n=N))
    env = _clean_env()
    _run(["cmake", "-S", src, "-B", work / "build", f"-DCMAKE_PREFIX_PATH={pkg}", "-DCMAKE_BUILD_TYPE=Release"], env=env)
    _run(["cmake", "--build", work / "build", "-j2"], env=env)
    pc_env = _clean_env(PKG_CONFIG_PATH=str(pkg / "lib" / "pkgconfig"))
    flags = _run(["pkg-config", "--cflags", "--libs", "rntuple"], env=pc_env).split()
    _run(["cc", "-Wall", "-Wextra", "-Werror", "-O2", f"-DNENTRIES={N}", src / "prog.c", *flags, "-o", work / "prog_pc"], env=env)
    res = {"pkg_config_prefix": _run(["pkg-config", "--variable=prefix", "rntuple"], env=pc_env).strip()}
    for exe in ("build/prog", "build/prog_static", "prog_pc"):
        out_file = work / f"{Path(exe).name}.root"
        res[exe] = _run([work / exe, out_file], env=env).strip()
        res[exe + ":file"] = out_file
        ldd = _run(["ldd", work / exe], env=env)
        found = [ln.split("=>")[1].split("(")[0].strip() for ln in ldd.splitlines() if "librntuple_c" in ln]
        res[exe + ":lib"] = [os.path.realpath(p) for p in found]
    return res


def _check(pkg: Path, res: dict) -> None:
    expected = _expected()
    real_lib = os.path.realpath(pkg / "lib" / "librntuple_c.so")
    assert res["build/prog"] == expected
    assert res["build/prog_static"] == expected
    assert res["prog_pc"] == expected
    assert res["build/prog:lib"] == [real_lib]  # by CMake's build run-time path, without LD_LIBRARY_PATH
    assert res["prog_pc:lib"] == [real_lib]  # by the .pc's -Wl,-rpath
    assert res["build/prog_static:lib"] == []
    assert os.path.realpath(res["pkg_config_prefix"]) == os.path.realpath(pkg)
    cli = pkg / "bin" / "rntuple"
    assert _run([cli, "--version"], env=_clean_env()).strip() == f"rntuple {_version()}"
    for exe in ("build/prog", "prog_pc"):
        info = json.loads(_run([cli, "info", "--json", res[exe + ":file"]], env=_clean_env()))
        assert [(t["name"], t["entries"], t["writer"]) for t in info["ntuples"]] == [("Events", N, f"rntuple v{_version()}")]
    assert "RNTuple 'Events'" in _run([cli, "info", res["prog_pc:file"]], env=_clean_env())


@pytest.fixture(scope="module")
def first(tarball, tmp_path_factory) -> dict:
    """The package unpacked into a random directory, both projects built against it and run there."""
    where = Path(tempfile.mkdtemp(prefix="unpack-", dir=tmp_path_factory.mktemp("first")))
    _run(["tar", "-xzf", tarball, "-C", where])
    pkg = where / _top(tarball)
    texts = {p.relative_to(pkg).as_posix(): p.read_text() for p in pkg.rglob("*")
             if p.is_file() and p.suffix in (".pc", ".cmake", ".md")}
    res = _build_and_run(pkg, tmp_path_factory.mktemp("build-first") / "w")
    _check(pkg, res)
    return {"where": where, "pkg": pkg, "texts": texts, "res": res}


@pytest.fixture(scope="module")
def moved(first, tmp_path_factory) -> dict:
    """The unpacked directory moved (renamed) to another random directory; both projects built again from scratch."""
    where = Path(tempfile.mkdtemp(prefix="moved-", dir=tmp_path_factory.mktemp("second")))
    pkg = where / first["pkg"].name
    os.rename(first["pkg"], pkg)
    assert not first["pkg"].exists()
    res = _build_and_run(pkg, tmp_path_factory.mktemp("build-second") / "w")
    return {"where": where, "pkg": pkg, "res": res}


def test_tarball_has_one_top_directory_and_every_file(tarball):
    top = _top(tarball)
    with tarfile.open(tarball) as t:
        members = {m.name: m for m in t.getmembers()}
    assert all(name == top or name.startswith(top + "/") for name in members), sorted(members)
    files = {name.removeprefix(top + "/") for name, m in members.items() if m.isfile()}
    expected = {"bin/rntuple", "lib/librntuple_c.so", "lib/librntuple_c.a", "include/rntuple.h", "include/rntuple.hpp",
                "include/rntuple_view.hpp",
                "lib/pkgconfig/rntuple.pc", "lib/cmake/rntuple/rntupleConfig.cmake", "lib/cmake/rntuple/rntupleConfigVersion.cmake",
                "README.md"}
    expected |= {n for n in ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING", "NOTICE") if (REPO / n).is_file()}
    assert files == expected
    assert members[f"{top}/bin/rntuple"].mode & 0o111
    assert members[f"{top}/lib/librntuple_c.so"].mode & 0o111


def test_binaries_carry_no_debug_information(first):
    pkg = first["pkg"]
    for rel in ("bin/rntuple", "lib/librntuple_c.so"):
        sections = _run(["readelf", "-S", "-W", pkg / rel])
        assert ".debug_info" not in sections, rel
    # The static library: no member with DWARF left.
    assert ".debug_info" not in _run(["readelf", "-S", "-W", pkg / "lib" / "librntuple_c.a"])


def test_package_files_name_no_absolute_place(first):
    texts = first["texts"]
    assert set(texts) >= {"lib/pkgconfig/rntuple.pc", "lib/cmake/rntuple/rntupleConfig.cmake",
                          "lib/cmake/rntuple/rntupleConfigVersion.cmake", "README.md"}
    for rel, text in texts.items():
        for place in (str(REPO), str(first["where"]), str(first["pkg"]), "/target/release", "/target/dist"):
            assert place not in text, f"{rel} holds {place}"
    pc = texts["lib/pkgconfig/rntuple.pc"]
    assert "prefix=${pcfiledir}/../.." in pc.splitlines()
    assert f"Version: {_version()}" in pc.splitlines()
    libs = next(ln for ln in pc.splitlines() if ln.startswith("Libs:"))
    assert "-Wl,-rpath,${libdir}" in libs.split()
    assert "${CMAKE_CURRENT_LIST_DIR}" in texts["lib/cmake/rntuple/rntupleConfig.cmake"]
    assert f'set(PACKAGE_VERSION "{_version()}")' in texts["lib/cmake/rntuple/rntupleConfigVersion.cmake"]
    readme = texts["README.md"]
    for snippet in ("find_package(rntuple", "target_link_libraries(", "-DCMAKE_PREFIX_PATH=/where/unpacked",
                    "PKG_CONFIG_PATH=/where/unpacked/lib/pkgconfig", "pkg-config --cflags --libs rntuple", "-Wl,-rpath"):
        assert snippet in readme, snippet


def test_programs_build_and_run_where_unpacked(first):
    res = first["res"]
    assert res["build/prog"] == _expected() == res["prog_pc"] == res["build/prog_static"]
    lib = os.path.realpath(first["pkg"] / "lib" / "librntuple_c.so")
    assert res["build/prog:lib"] == [lib] and res["prog_pc:lib"] == [lib]


def test_programs_build_and_run_after_the_package_moved(first, moved):
    assert not first["where"].joinpath(first["pkg"].name).exists()
    assert not str(moved["pkg"]).startswith(str(first["where"]))
    _check(moved["pkg"], moved["res"])
    for exe in ("build/prog", "build/prog_static", "prog_pc"):
        assert moved["res"][exe] == first["res"][exe] == _expected()
    lib = os.path.realpath(moved["pkg"] / "lib" / "librntuple_c.so")
    assert moved["res"]["build/prog:lib"] == [lib] and moved["res"]["prog_pc:lib"] == [lib]

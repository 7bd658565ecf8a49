"""The binary wheel (`make wheel`, python/build_wheel.py) installed where no Rust toolchain is: fresh virtual
environments of CPython 3.9 and 3.13 (pyenv's), PATH holding no cargo or rustc, pip taking binary packages only.
There: `import rntuple` reads a shared file equal to the source build in .venv, the `rntuple` command the wheel put
on PATH runs `info`, `skim` and `--version`, `rntuple.write` writes a file ROOT 6.40 reads back equal, root:// reads
through the system's XrdCl loaded at run time (and a clear message when it cannot be loaded), `rntuple.mpi` says
how to get MPI; `auditwheel show` finds the manylinux_2_28 tag and no library outside the policy; the versions of
the wheel's metadata, the package, the command and the workspace are one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import awkward as ak
import pytest

import rntuple
from conftest import REPO, need, root_dump, same, skip_or_fail, workspace_version
from conftest import testdata_dir as shared_dir

WHEELS = REPO / "target" / "wheels"
MUONS = "rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
# What pip installs beside the wheel in each environment: binary packages pinned per Python version.
PINS = {
    "3.9": ["numpy==2.0.2", "pyarrow==21.0.0", "awkward==2.8.11"],
    "3.13": ["numpy==2.4.6", "pyarrow==26.0.1", "awkward==2.14.0"],
}


@pytest.fixture(scope="module")
def wheel() -> Path:
    found = sorted(WHEELS.glob("rntuple-*.whl"))
    if len(found) != 1:
        skip_or_fail(f"{len(found)} wheels in {WHEELS}, not one: run `make wheel`")
    return found[0]


def interpreter(version: str) -> Path:
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(root.glob(f"{version}.*/bin/python{version}"))
    if not found:
        skip_or_fail(f"no CPython {version} under {root} (pyenv install {version})")
    return found[-1]


def clean_path(venv: Path) -> str:
    """The environment's bin and the system's directories: no cargo, no rustc (asserted)."""
    path = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    for tool in ("cargo", "rustc"):
        hits = [d for d in path.split(os.pathsep) if (Path(d) / tool).exists()]
        assert not hits, f"{tool} is on the clean PATH in {hits}"
    return path


class Env:
    """A fresh virtual environment holding the wheel, and a way to run things in it."""

    def __init__(self, venv: Path, version: str):
        self.venv, self.version = venv, version
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "CARGO", "RUSTUP"))}
        self.env.update(PATH=clean_path(venv))
        self.env.pop("LD_LIBRARY_PATH", None)
        self.cwd = venv.parent  # not the repository: its python/rntuple must not be importable

    def run(self, args: list, check: bool = True, **kw) -> subprocess.CompletedProcess:
        env = dict(self.env, **kw.pop("env", {}))
        p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, cwd=self.cwd, timeout=600, **kw)
        if check and p.returncode != 0:
            raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        return p

    def python(self, code: str, *args, check: bool = True, **kw) -> subprocess.CompletedProcess:
        return self.run([self.venv / "bin" / "python", "-c", code, *args], check=check, **kw)


@pytest.fixture(scope="module", params=sorted(PINS))
def env(request, wheel, tmp_path_factory) -> Env:
    version = request.param
    base = tmp_path_factory.mktemp(f"wheel-py{version}")
    venv = base / "venv"
    subprocess.run([str(interpreter(version)), "-m", "venv", str(venv)], check=True)
    e = Env(venv, version)
    e.run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--only-binary", ":all:",
           str(wheel), *PINS[version]])
    return e


def test_import_reads_a_shared_file_as_the_source_build(env: Env, tmp_path):
    path = need(shared_dir() / MUONS)
    out = tmp_path / "arrays.json"
    code = ("import json, sys, awkward as ak, rntuple\n"
            "a = rntuple.open(sys.argv[1])['Events'].arrays()\n"
            "json.dump({'file': rntuple.__file__, 'fields': a.fields, 'values': ak.to_list(a)}, open(sys.argv[2], 'w'))\n")
    env.python(code, path, out)
    got = json.loads(out.read_text())
    assert got["file"].startswith(str(env.venv)), got["file"]
    expected = rntuple.open(path)["Events"].arrays()
    assert got["fields"] == expected.fields
    assert len(got["values"]) == len(expected) == 1000
    assert got["values"] == json.loads(json.dumps(ak.to_list(expected)))


def test_the_command_on_path_runs_info_skim_and_version(env: Env, tmp_path):
    path = need(shared_dir() / MUONS)
    which = env.run(["sh", "-c", "command -v rntuple"]).stdout.strip()
    assert which == str(env.venv / "bin" / "rntuple")
    assert env.run(["rntuple", "--version"]).stdout.strip() == f"rntuple {workspace_version()}"
    info = env.run(["rntuple", "info", path]).stdout
    assert "Events" in info and re.search(r"\b1000\b", info), info
    skimmed = tmp_path / "skim.root"
    env.run(["rntuple", "skim", path, skimmed, "--entries", "10:30", "--fields", "nMuon,Muon_pt"])
    back = rntuple.open(skimmed)["Events"].arrays()
    assert sorted(back.fields) == ["Muon_pt", "nMuon"]
    source = rntuple.open(path)["Events"].arrays(back.fields)[10:30]
    assert ak.to_list(back) == ak.to_list(source)


def test_write_from_the_wheel_is_read_back_by_root(env: Env, tmp_path):
    out = tmp_path / "written.root"
    code = ("import sys, awkward as ak, rntuple\n"
            "a = ak.Array({'x': [1.5, 2.5, 3.5], 'n': [1, 2, 3], 'v': [[1.0], [], [2.0, 3.0]], 's': ['a', 'bc', '']})\n"
            "rntuple.write(sys.argv[1], 'Events', a)\n")
    env.python(code, out)
    expected = [{"x": 1.5, "n": 1, "v": [1.0], "s": "a"}, {"x": 2.5, "n": 2, "v": [], "s": "bc"},
                {"x": 3.5, "n": 3, "v": [2.0, 3.0], "s": ""}]
    assert ak.to_list(rntuple.open(out)["Events"].arrays()) == expected
    assert same(expected, root_dump(out, "Events")) == []


def test_versions_are_one(env: Env):
    code = ("import importlib.metadata as m, rntuple\n"
            "print(rntuple.__version__, m.version('rntuple'))\n")
    package, metadata = env.python(code).stdout.split()
    assert package == metadata == workspace_version() == rntuple.__version__


def test_mpi_absent_says_how_to_get_it(env: Env):
    p = env.python("import rntuple.mpi", check=False)
    assert p.returncode != 0
    assert "ImportError" in p.stderr and "built without MPI support" in p.stderr and "--features mpi" in p.stderr, p.stderr


def test_root_url_through_the_systems_xrdcl(env: Env):
    sys.path.insert(0, str(REPO / "tests" / "remote"))
    try:
        import servers
    finally:
        sys.path.pop(0)
    if not Path("/usr/lib/x86_64-linux-gnu/libXrdCl.so.3").exists():
        skip_or_fail("XrdCl (libXrdCl.so.3) is not installed (apt-get install libxrdcl3)")
    try:
        server = servers.XRootDServer(shared_dir()).start()
    except Exception as exc:  # noqa: BLE001 - any reason is a skip (or a failure under CI) with its message
        skip_or_fail(f"could not start xrootd: {exc}")
    try:
        url = f"{server.url}/{MUONS}"
        info = env.run(["rntuple", "info", url]).stdout
        assert re.search(r"\b1000\b", info), info
        code = "import sys, rntuple; print(len(rntuple.open(sys.argv[1])['Events'].arrays(['nMuon'])))"
        assert env.python(code, url).stdout.strip() == "1000"
        # Where XrdCl cannot be loaded, the request says what to install (and the rest of the package works).
        bad = env.run(["rntuple", "info", url], check=False, env={"RNTUPLE_XRDCL_LIB": "/nonexistent/libXrdCl.so.3"})
        assert bad.returncode != 0
        assert "libXrdCl.so.3" in bad.stderr and "xrootd-client-libs" in bad.stderr, bad.stderr
    finally:
        server.stop()


def test_auditwheel_finds_manylinux_2_28_and_nothing_outside_the_policy(wheel):
    assert re.fullmatch(r"rntuple-[0-9.]+-cp39-abi3-manylinux_2_(1[7-9]|2[0-8])_x86_64(\.manylinux\S*)?\.whl", wheel.name), wheel.name
    p = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True, check=True)
    text = " ".join(p.stdout.split())
    assert re.search(r'consistent with the following platform tag: "manylinux_2_(1[7-9]|2[0-8])_x86_64"', text), text
    assert "external shared librar" not in text, text
    size_mb = wheel.stat().st_size / 1e6
    print(f"{wheel.name}: {size_mb:.1f} MB")
    assert size_mb < 40
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert any(n.endswith(".data/scripts/rntuple") for n in names), names
    assert any(re.fullmatch(r"rntuple/_rntuple\.abi3\.so", n) for n in names), names

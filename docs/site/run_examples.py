"""Runs the site's examples against the installed package, so that the pages show working code.

Every fenced block opened by exactly ```python in the pages below runs, in page order, in one namespace per page, in a
fresh temporary directory (blocks fenced otherwise, ```{code-block} python or ```py, are shown but not run: code for
another library, a cluster or a file that is not there). Then examples/output_module.cpp (the tutorial's C++ output
module) is compiled against include/ and target/release/librntuple_c.so and run, when a C++ compiler and the library
are there (said so otherwise).

    python docs/site/run_examples.py [PAGE.md ...]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PAGES = ["tutorial.md", "migrate-uproot.md", "migrate-root.md"]
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(line number, code) of each ```python block of a Markdown page."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def run_page(page: Path) -> bool:
    blocks = python_blocks(page)
    namespace: dict = {"__name__": "__main__"}
    start = time.perf_counter()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="rntuple-docs-") as tmp:
        os.chdir(tmp)
        try:
            for line, code in blocks:
                try:
                    exec(compile(code, f"{page.name}:{line}", "exec"), namespace)  # noqa: S102 - the docs' own examples
                except Exception:
                    print(f"FAILED: the block at {page.name}:{line}:\n{code}")
                    traceback.print_exc()
                    return False
        finally:
            os.chdir(cwd)
    print(f"{page.name}: {len(blocks)} Python blocks ran ({time.perf_counter() - start:.1f} s)")
    return True


def run_cpp() -> bool:
    source = HERE / "examples" / "output_module.cpp"
    lib = ROOT / "target" / "release"
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx or not (lib / "librntuple_c.so").is_file():
        print(f"examples/output_module.cpp: NOT compiled (compiler: {cxx}, library: {lib / 'librntuple_c.so'})")
        return True
    with tempfile.TemporaryDirectory(prefix="rntuple-docs-cpp-") as tmp:
        exe = Path(tmp) / "output_module"
        cmd = [cxx, "-std=c++17", "-O1", f"-I{ROOT / 'include'}", str(source), f"-L{lib}", "-lrntuple_c", f"-Wl,-rpath,{lib}", "-pthread", "-o", str(exe)]
        for step in (cmd, [str(exe)]):
            done = subprocess.run(step, cwd=tmp, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"FAILED: {' '.join(step)}\n{done.stdout}{done.stderr}")
                return False
        print(f"examples/output_module.cpp: compiled and ran: {done.stdout.strip()}")
    return True


def main(argv: list[str]) -> int:
    pages = [HERE / p for p in (argv or PAGES)]
    ok = all([run_page(p) for p in pages])
    ok = run_cpp() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

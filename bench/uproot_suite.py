"""uproot's own RNTuple tests, run with ``rntuple.open`` in place of ``uproot.open``: how far an uproot user's
code ports by changing one name.

The tests are not in this repository: give a checkout of uproot5 (``--uproot-src``). Each of its
``tests/test_*rntuple*.py`` files is copied to a scratch directory with ``uproot.open(`` rewritten to
``rntuple.open(`` (nothing else changes; writing still goes through uproot), ``skhep_testdata.data_path``
finds the shared test files, and pytest runs them. The table counts passed and failed tests per
file; ``--show-failures`` prints the first lines of each failure.

    .venv/bin/python bench/uproot_suite.py --uproot-src ~/src/uproot5
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
TESTDATA = HERE.parent.parent / "shared" / "testdata"

# Stands in for scikit-hep-testdata (which downloads): the same file names, from the shared test files.
TESTDATA_MODULE = '''
import pathlib
import pytest

_ROOTS = [pathlib.Path({testdata!r}) / d for d in ("rntuple", "v1-older", "legacy")]


def data_path(name, *args, **kwargs):
    for root in _ROOTS:
        if (root / name).exists():
            return str(root / name)
    pytest.skip(f"{{name}} is not among the shared test files")
'''


def adapt(source: str) -> str:
    """One uproot test file as an rntuple user would run it: only the opening call changes."""
    # Under an alias: several tests name a local variable `rntuple`.
    out = source.replace("uproot.open(", "rntuple_package.open(")
    if out != source:
        out = re.sub(r"^import uproot$", "import uproot\nimport rntuple as rntuple_package", out, count=1, flags=re.M)
    return out


def collect(src: pathlib.Path, dest: pathlib.Path, pattern: str) -> list[str]:
    names = []
    for path in sorted((src / "tests").glob("test_*.py")):
        if re.search(pattern, path.name, re.I):
            (dest / path.name).write_text(adapt(path.read_text()))
            names.append(path.name)
    (dest / "skhep_testdata.py").write_text(TESTDATA_MODULE.format(testdata=str(TESTDATA)))
    return names


def run(dest: pathlib.Path, extra: list[str]) -> ET.Element:
    report = dest / "report.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", f"--junitxml={report}", str(dest), *extra]
    subprocess.run(cmd, cwd=dest, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return ET.parse(report).getroot()


def tally(root: ET.Element) -> tuple[dict[str, dict[str, int]], list[tuple[str, str]]]:
    per_file: dict[str, dict[str, int]] = {}
    failures = []
    for case in root.iter("testcase"):
        name = case.get("classname", "").split(".")[-1] + ".py"
        row = per_file.setdefault(name, {"passed": 0, "failed": 0, "skipped": 0})
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            row["failed"] += 1
            failures.append((f"{name}::{case.get('name')}", (bad.get("message") or "").strip()))
        elif case.find("skipped") is not None:
            row["skipped"] += 1
        else:
            row["passed"] += 1
    return per_file, failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uproot-src", required=True, type=pathlib.Path, help="a checkout of scikit-hep/uproot5")
    ap.add_argument("--pattern", default="rntuple", help="regular expression on the test file names")
    ap.add_argument("--show-failures", action="store_true")
    ap.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="uproot-suite-") as tmp:
        dest = pathlib.Path(tmp)
        collect(args.uproot_src, dest, args.pattern)
        per_file, failures = tally(run(dest, args.pytest_args))
    total = {k: sum(r[k] for r in per_file.values()) for k in ("passed", "failed", "skipped")}
    width = max(map(len, per_file), default=10)
    print(f"{'file':<{width}}  passed  failed  skipped")
    for name, row in sorted(per_file.items()):
        print(f"{name:<{width}}  {row['passed']:6}  {row['failed']:6}  {row['skipped']:7}")
    print(f"{'total':<{width}}  {total['passed']:6}  {total['failed']:6}  {total['skipped']:7}")
    if args.show_failures:
        for test, message in failures:
            print(f"\nFAILED {test}\n    {message.splitlines()[0][:300] if message else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The suite's own rules (issue 19), checked on its sources: no test is skipped or expected to fail except as
listed. Skips go through conftest.skip_or_fail (missing inputs: a loud skip, a failure under CI=true); the only
expected failures are strict xfails with `raises=` (expected_failures.py for ROOT, test_key_split.py for uproot);
Rust tests are ignored only by the direct-I/O probe of build.rs. Costs nothing."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PY_DIRS = [REPO / "tests" / "cross", REPO / "tests" / "python"]
RUST_DIRS = [REPO / "crates" / "rntuple" / "tests"]


def _calls(tree, dotted: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == dotted:
            yield node


def _enclosing_function(tree, target):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(n is target for n in ast.walk(node)):
                inner = _enclosing_function(ast.Module(body=node.body, type_ignores=[]), target)
                return inner or node.name
    return None


def test_skips_only_through_skip_or_fail():
    bad = []
    for d in PY_DIRS:
        for path in sorted(d.glob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for name in ("pytest.skip", "pytest.importorskip"):
                for call in _calls(tree, name):
                    if name == "pytest.skip" and _enclosing_function(tree, call) == "skip_or_fail":
                        continue
                    bad.append(f"{path.relative_to(REPO)}:{call.lineno}: {name}(...) (use conftest.skip_or_fail)")
            bad += [f"{path.relative_to(REPO)}:{n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
                    if isinstance(n, ast.Attribute) and ast.unparse(n) in ("pytest.mark.skip", "pytest.mark.skipif")]
    assert not bad, "skips outside conftest.skip_or_fail:\n  " + "\n  ".join(sorted(set(bad)))


def test_expected_failures_are_strict_and_name_what_they_expect():
    bad = []
    for d in PY_DIRS:
        for path in sorted(d.glob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for call in _calls(tree, "pytest.mark.xfail"):
                kw = {k.arg: k.value for k in call.keywords}
                strict = isinstance(kw.get("strict"), ast.Constant) and kw["strict"].value is True
                if not strict or "raises" not in kw:
                    bad.append(f"{path.relative_to(REPO)}:{call.lineno}: xfail without strict=True and raises=")
            for call in _calls(tree, "pytest.xfail"):
                bad.append(f"{path.relative_to(REPO)}:{call.lineno}: pytest.xfail(...) (imperative, not strict)")
    assert not bad, "\n  ".join(["expected failures that are not strict:", *bad])


def test_rust_tests_are_ignored_only_where_o_direct_is_refused():
    bad = []
    for d in RUST_DIRS:
        for path in sorted(d.rglob("*.rs")):
            for k, line in enumerate(path.read_text().splitlines(), 1):
                s = line.strip()
                if s.startswith("#[ignore") or ("ignore" in s and s.startswith("#[cfg_attr(")):
                    if not (path.name == "parallel_stress.rs" and s.startswith("#[cfg_attr(rntuple_no_direct_io, ignore")):
                        bad.append(f"{path.relative_to(REPO)}:{k}: {s}")
    assert not bad, "ignored Rust tests:\n  " + "\n  ".join(bad)

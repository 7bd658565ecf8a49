"""Nested values (objects as dicts, lists, numbers, strings) compared member by member: the message names the path
of the first difference (`.member`, `[index]`); floats within a relative tolerance."""

from __future__ import annotations

import math


def same(a, b, path: str = "", rel: float = 1e-6, abs_tol: float = 1e-12) -> None:
    """Asserts that `a` and `b` hold the same members in the same order and equal values, floats (either side)
    within `rel` / `abs_tol`."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), f"{path}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{path}: members {list(a)} != {list(b) if isinstance(b, dict) else b!r}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}", rel, abs_tol)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]", rel, abs_tol)
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"

"""Reading in chunks: step sizes (``parse_size``: ``"100 MB"``), the older ``iterate(step_size, fields)``
argument order, and tqdm progress bars."""

from __future__ import annotations

import re
import sys

import numpy as np

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKMGT]?i?B|[kKMGT])?\s*$")
_UNITS = {
    "": 1,
    "B": 1,
    "kB": 1000,
    "KB": 1000,
    "k": 1000,
    "K": 1000,
    "MB": 1000**2,
    "M": 1000**2,
    "GB": 1000**3,
    "G": 1000**3,
    "TB": 1000**4,
    "T": 1000**4,
    "KiB": 1024,
    "kiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
}


def parse_size(text: str) -> int:
    """Bytes in a size string such as ``"100 MB"``, ``"1.5 GiB"`` or ``"4096"``."""
    m = _SIZE.match(text)
    if not m or (m.group(2) or "") not in _UNITS:
        raise ValueError(f"cannot understand the size {text!r} (examples: '100 MB', '1 GiB', '65536')")
    return int(float(m.group(1)) * _UNITS[m.group(2) or ""])


def _looks_like_step(x, is_key) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    if isinstance(x, str) and not is_key(x):
        try:
            parse_size(x)
        except ValueError:
            return False
        return True
    return False


def _legacy_step(step_size, expressions, cut, legacy, is_key):
    """uproot's ``iterate(expressions, cut, *, step_size=...)`` or the older ``iterate(step_size, fields)``."""
    if legacy:
        raise TypeError("iterate(expressions=None, cut=None, *, step_size=..., ...): pass the other arguments by keyword")
    if _looks_like_step(expressions, is_key):
        if step_size != "100 MB":
            raise TypeError(f"iterate() got the step size twice ({expressions!r} and step_size={step_size!r})")
        step_size, expressions = expressions, None
        if cut is not None:  # the older iterate(step_size, fields)
            expressions, cut = cut, None
    return step_size, expressions, cut



def _in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel (where standard error is no terminal, yet a bar shows)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _progress_bar(progress, total, desc):
    """A tqdm bar (``tqdm.auto``: a widget in Jupyter, text on a terminal); ``progress=None`` shows one when
    standard error is a terminal or in Jupyter."""
    explicit = progress is True
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)()) or _in_jupyter()
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm  # a widget in Jupyter, text on a terminal
    except ImportError:
        if explicit:
            raise ImportError("progress=True needs tqdm (pip install tqdm)") from None
        return None
    return tqdm(total=total, desc=desc, unit="entries", unit_scale=True, file=sys.stderr)

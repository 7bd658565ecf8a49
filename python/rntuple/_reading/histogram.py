"""``RNTuple.hist``: a histogram of a numeric field as a scikit-hep ``hist.Hist`` (a collection's elements flattened,
as RDataFrame's ``Histo1D`` of an RVec), filled chunk by chunk; it plots as any histogram does (``h.plot()``,
mplhep)."""

from __future__ import annotations

import awkward as ak
import numpy as np

from .._rntuple import InvalidArgumentError

#: ROOT's default number of bins (TH1's, RDataFrame's Histo1D without a model).
DEFAULT_BINS = 100


def _values(chunk, field: str) -> np.ndarray:
    if field in chunk.fields:
        column = chunk[field]
    else:  # a nested field, read as its top-level field: walk down its path
        column = chunk
        for segment in field.replace("/", ".").split("."):
            column = column[segment]
    flat = ak.flatten(column, axis=None)
    values = ak.to_numpy(flat)
    if values.dtype.kind not in "biuf":
        raise InvalidArgumentError(f"hist: field {field!r} holds {values.dtype} values, not numbers")
    return values


def hist(t, field: str, *, where: str | None = None, bins: int = DEFAULT_BINS, range: tuple[float, float] | None = None, step_size="100 MB",
         label: str | None = None):
    """A 1-D histogram of ``field`` of the RNTuple ``t`` (``where``: a cut as ``arrays(cut=)`` takes it; ``bins``
    regular bins over ``range``, by default the values' minimum to maximum, found by a first pass); values outside
    the range go to the under- and overflow bins. Needs the ``hist`` package (``pip install hist``)."""
    try:
        import hist as _hist
    except ImportError:
        raise ImportError("RNTuple.hist needs scikit-hep's hist: pip install hist") from None
    if not isinstance(bins, (int, np.integer)) or bins < 1:
        raise InvalidArgumentError(f"hist: bins must be a positive integer, not {bins!r}")

    def chunks():  # read twice when no range is given
        return t.iterate([field], cut=where, step_size=step_size)

    if range is None:
        lo, hi = np.inf, -np.inf
        for chunk in chunks():
            v = _values(chunk, field)
            v = v[np.isfinite(v)] if v.dtype.kind == "f" else v
            if len(v):
                lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
        if lo > hi:  # no value at all
            lo, hi = 0.0, 1.0
        elif lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        else:  # the maximum falls inside the last bin, not the overflow
            hi = float(np.nextafter(hi, np.inf))
        range = (lo, hi)
    lo, hi = (float(x) for x in range)
    if not lo < hi:
        raise InvalidArgumentError(f"hist: range must be (low, high) with low < high, not {range!r}")
    h = _hist.Hist(_hist.axis.Regular(int(bins), lo, hi, name=field.replace(".", "_"), label=label or field), storage=_hist.storage.Double())
    for chunk in chunks():
        h.fill(_values(chunk, field))
    return h

"""Entries read ahead for iterations in small steps.

A read decodes whole pages, so reading a step of a few entries alone decompresses every page it touches again at
each step (3 fields x 20,000 entries in steps of 7: 3.8 s). :class:`ReadAhead` reads a window of entries at once
and hands out zero-copy slices of it; the window is the one :meth:`rntuple.RNTuple.iterate` asks for, so the
results are the same batches, only read fewer times."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

# Entries read at once for steps smaller than this (the C ABI's streams read ahead as many).
WINDOW = 16384


class ReadAhead:
    """``read(names, start, stop)`` with the last window of ``window`` entries kept: a request inside it (same
    fields) is a slice of it; another reads the next window, from its start, never past ``limit`` unless asked.
    ``selected(names, start, stop, where, entry_numbers=False)`` likewise for selected reads (``selected``, see
    ``RNTuple._read_selected``): a window's kept entries, the request's found by their entry numbers."""

    def __init__(self, read: Callable[[list, int, int], pa.RecordBatch], limit: int, window: int = WINDOW, selected=None):
        self._read = read
        self._selected = selected
        self._limit = limit
        self._window = window
        self._cached: tuple | None = None  # (fields, start, stop, batch), replaced whole (thread-safe reads)
        self._cached_selected: tuple | None = None  # ((fields, where), start, stop, batch, entry numbers)

    def __call__(self, names, start: int, stop: int) -> pa.RecordBatch:
        key = tuple(names)
        c = self._cached
        if c is not None and c[0] == key and c[1] <= start and stop <= c[2]:
            return c[3].slice(start - c[1], stop - start)
        end = max(stop, min(self._limit, start + self._window))
        batch = self._read(names, start, end)
        self._cached = (key, start, end, batch)
        return batch.slice(0, stop - start)

    def selected(self, names, start: int, stop: int, where: str, entry_numbers: bool = False):
        if self._selected is None:
            raise TypeError("this read-ahead has no selected read")
        key = (tuple(names), where)
        c = self._cached_selected
        if c is None or c[0] != key or not (c[1] <= start and stop <= c[2]):
            end = max(stop, min(self._limit, start + self._window))
            batch, _, numbers = self._selected(names, start, end, where, True)
            c = self._cached_selected = (key, start, end, batch, numbers)
        batch, numbers = c[3], c[4]
        i, j = (int(k) for k in np.searchsorted(numbers, [start, stop]))
        stats = {"entries_read": stop - start, "entries_kept": j - i}
        return batch.slice(i, j - i), stats, (numbers[i:j] if entry_numbers else None)

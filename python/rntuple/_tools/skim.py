"""``rntuple.skim``: fields, entry ranges, and selected entries and collection elements of one or many
RNTuples into one new file."""

from __future__ import annotations

import concurrent.futures
import os
import threading

import numpy as np

from .. import _rntuple
from .._datasets.dataset import _expand
from .._reading.chunks import _progress_bar
from .._reading.file import File
from .._reading.selection import to_core
from .._rntuple import apply_selection_masks, default_write_options, selection_masks, skim_selected
from .._rntuple import skim as _skim_one
from .._writing.options import compression_setting
from .merge import _only_ntuple

_DEFAULT_COMPRESSION = default_write_options()["compression"]


def skim(sources, output, fields=None, where=None, filters=None, ntuple=None, threads=None,
         compression=_DEFAULT_COMPRESSION, *, entry_start=None, entry_stop=None, reencode=False,
         progress=None, friends=None, on=None, fill_missing=False) -> dict:
    """Skims ``sources`` (a path, URL or glob, a list of them, or ``{path: ntuple}``) into the new file
    ``output``: the top-level ``fields`` (default all; a name or a list), the entries where ``where`` holds, the
    elements of collections that ``filters`` keep.

    ``where``: an expression string (``"nMuon >= 1 && count(Jet_pt > 25) >= 4"``: fields by name, ``Jet.pt``
    for a member of a collection of records, arithmetic, comparisons, ``&&`` ``||`` ``!``, and ``count``,
    ``sum``, ``any``, ``all``, ``max``, ``min`` over collections, ``abs``, ``sqrt``, ``exp``, ``log``; or the same
    in uproot's spelling, as ``cut=`` takes it: ``"(nMuon >= 1) & (ak.sum(Jet_pt > 25, axis=1) >= 4)"``), or a
    callable taking an awkward array of the entries (all fields of the input) and returning one boolean per
    entry. ``filters``: ``{collection: expression or callable}``; a callable returns a jagged boolean array, one
    per element of the collection. A collection is a list field ``Jet`` and/or the list fields ``Jet_*``
    (NanoAOD's flat layout): all of them are cut alike and the count field ``nJet`` is set to the elements kept.
    Both are evaluated on the entries as read. ``threads``: inputs are read cluster by cluster on that many
    threads, each writing through its own fill context of one parallel writer (one thread keeps the input
    order). Expression strings run entirely in the compiled core; a callable runs in Python on each cluster
    (the cluster is then read twice: as awkward for the callable, as Arrow for writing).

    One input without ``where``/``filters``/``threads`` is skimmed as before: kept fields' compressed pages are
    copied when the entries are whole clusters (``entry_start``/``entry_stop`` cut a range;
    ``reencode=True`` forces re-encoding). Returns a dict like the CLI's JSON report.

    ``fill_missing=True``: the inputs may lack some of the kept fields; the output holds every kept field any input
    has, with its default value (0, empty) in the entries of the inputs that lack it, as ROOT's union merge fills
    them (as ``rntuple skim --fill-missing``; expression strings only). Without it such an input is an error.

    ``friends``: friend RNTuples (``"file.root:NTUPLE"``, a glob makes a chain) joined to the inputs as
    ``rntuple.join`` joins them, on the index fields ``on`` (``["run", "event"]``; entry by entry when ``None``):
    each friend's fields are written as one record field named after it (``Aux.w`` in ``where`` and on reading),
    each member empty where the friend has no match; the inputs' attribute sets follow the entries kept. As
    ``rntuple skim ... --friend FILE --on FIELDS``; ``where`` must then be an expression string, and ``filters``
    and entry ranges are not taken.

    >>> rntuple.skim(["a.root", "b.root"], "sel.root", friends=["scores.root:Scores"], on=["run", "event"],
    ...              where="Scores.score > 0.5")  # doctest: +SKIP
    {'entries': 812, 'entries_read': 2000, 'friends': ['Scores'], 'method': 'joined and re-encoded', ...}

    >>> rntuple.skim(["a.root", "b.root"], "sel.root", fields=["nJet", "Jet_pt", "nMuon"],
    ...              where="nMuon >= 1 && count(Jet_pt > 25) >= 4", filters={"Jet": "Jet_pt > 25"})  # doctest: +SKIP
    {'method': 're-encoded', 'inputs': 2, 'entries_read': 2000, 'entries': 131, ...}
    """
    if isinstance(compression, str):
        compression = compression_setting(compression)
    if fill_missing and (friends is not None or callable(where) or any(callable(f) for f in (filters or {}).values())):
        raise ValueError("skim: fill_missing=True takes expression strings for where/filters and no friends")
    if friends is not None:
        return _skim_join(sources, output, fields, where, filters, ntuple, threads, compression, friends, on,
                          entry_start, entry_stop)
    if on is not None:
        raise ValueError("skim: on= matches entries of friends; pass friends=")
    filters = dict(filters or {})
    for c in filters:
        if not isinstance(c, str) or not c:
            raise TypeError(f"filters: keys are collection names (str), got {c!r}")
    if isinstance(fields, str):
        fields = [fields]
    elif fields is not None:
        fields = [str(f) for f in fields]
    single = isinstance(sources, (str, os.PathLike)) and not any(ch in os.fspath(sources) for ch in "*?[")
    if single and where is None and not filters and threads is None:
        path = os.fspath(sources)
        name = _only_ntuple(path, ntuple, "skim")
        for label, v in (("entry_start", entry_start), ("entry_stop", entry_stop)):
            if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0):
                raise ValueError(f"skim: {label} must be a non-negative integer, got {v!r}")
        return dict(_skim_one(path, os.fspath(output), name, fields, entry_start, entry_stop, compression, reencode))
    if entry_start is not None or entry_stop is not None:
        raise ValueError("skim: entry_start/entry_stop apply to one input without where, filters or threads")
    for what, v in [("where", where)] + [(f"filters[{c!r}]", f) for c, f in filters.items()]:
        if v is not None and not isinstance(v, str) and not callable(v):
            raise TypeError(f"skim: {what} must be an expression string or a callable, not {type(v).__name__}")
    # Expression strings in either spelling of the selection language (uproot's translated, see _selection).
    if isinstance(where, str):
        where = to_core(where, what="where")[0]
    filters = {c: to_core(f, what=f"filters[{c!r}]")[0] if isinstance(f, str) else f for c, f in filters.items()}
    pairs = _expand(sources, ntuple)
    names = {n for _, n in pairs if n is not None}
    if len(names) > 1:
        raise ValueError(f"skim: the inputs name several RNTuples ({', '.join(sorted(names))}); one output holds one")
    ntuple = next(iter(names), ntuple)
    inputs = [p for p, _ in pairs]
    threads = 1 if threads is None else int(threads)
    if threads < 0:
        raise ValueError(f"skim: threads must be >= 0, got {threads}")
    if (where is None or isinstance(where, str)) and all(isinstance(f, str) for f in filters.values()):
        return dict(skim_selected(inputs, os.fspath(output), ntuple, fields, where, list(filters.items()),
                                  threads, compression, fill_missing))
    return _skim_with_callables(inputs, os.fspath(output), ntuple, fields, where, filters, threads, compression,
                                progress)


def _skim_join(sources, output, fields, where, filters, ntuple, threads, compression, friends, on, entry_start,
               entry_stop) -> dict:
    if isinstance(friends, (str, os.PathLike)):
        friends = [friends]
    friends = [os.fspath(f) for f in friends]
    if not friends:
        raise ValueError("skim: friends= is empty")
    if isinstance(on, str):
        on = [on]
    refused = [(filters, "filters"), (entry_start is not None or entry_stop is not None, "entry_start/entry_stop")]
    for given, what in refused:
        if given:
            raise ValueError(f"skim: {what} is not taken with friends= (a joined entry is always re-encoded; cut "
                             "with where=)")
    if where is not None and not isinstance(where, str):
        raise TypeError("skim: with friends=, where= must be an expression string")
    if isinstance(where, str):
        where = to_core(where, what="where")[0]
    if isinstance(fields, str):
        fields = [fields]
    inputs = [os.fspath(s) for s in sources] if isinstance(sources, (list, tuple)) else [os.fspath(sources)]
    threads = 0 if threads is None else int(threads)
    return dict(_rntuple.skim_join(inputs, os.fspath(output), friends, [str(o) for o in (on or [])], ntuple,
                                   None if fields is None else [str(f) for f in fields], where, threads, compression))


def _entry_mask(result, n: int) -> bytes:
    arr = np.asarray(result)
    if arr.dtype != np.bool_ or arr.shape != (n,):
        raise ValueError(f"skim: where= must return one boolean per entry ({n}), got {arr.dtype} of shape {arr.shape}")
    return arr.astype(np.uint8).tobytes()


def _element_mask(result, collection: str) -> bytes:
    import awkward as ak

    arr = ak.Array(result) if not isinstance(result, ak.Array) else result
    if arr.ndim != 2:
        raise ValueError(f"skim: filters[{collection!r}] must return a jagged boolean array (one per element), "
                         f"got {arr.type}")
    flat = ak.to_numpy(ak.flatten(arr, axis=1))
    if flat.dtype != np.bool_:
        raise ValueError(f"skim: filters[{collection!r}] must return booleans, got {arr.type}")
    return flat.astype(np.uint8).tobytes()


def _skim_with_callables(inputs, output, ntuple, fields, where, filters, threads, compression, progress):
    """The skim in Python: per cluster, callables on the awkward chunk and expressions in the core give masks,
    which the core applies; fill contexts of one parallel writer on ``threads`` threads."""
    opened = []
    for path in inputs:
        f = File(path)
        name = ntuple
        if name is None:
            keys = f.ntuple_names()
            if len(keys) != 1:
                raise ValueError(f"skim: {path} holds {len(keys)} RNTuples ({', '.join(keys)}); pass ntuple=")
            name = keys[0]
        opened.append(f[name])
    first = opened[0]
    # The output's schema as the core's skim makes it (projected fields become fields of their own).
    w, kept = _rntuple.skim_writer(first._path, first.name, fields, output, compression)
    for t in opened[1:]:
        for k in kept:
            if t.schema.get(k) != first.schema[k]:
                w.abort("the inputs' schemas differ")
                raise ValueError(f"skim: field {k!r} is {t.schema.get(k)!r} in {t._path}, {first.schema[k]!r} in "
                                 "the first input")
    parts = []
    for k, t in enumerate(opened):
        b = t.cluster_boundaries
        parts.extend((k, b[i], b[i + 1]) for i in range(len(b) - 1) if b[i + 1] > b[i])
    total = sum(t.num_entries for t in opened)
    expr_filters = [(c, f) for c, f in filters.items() if isinstance(f, str)]
    call_filters = [(c, f) for c, f in filters.items() if not isinstance(f, str)]
    counts = {"read": 0, "written": 0}
    lock = threading.Lock()
    bar = _progress_bar(progress, total, "skim")
    work = iter(parts)

    def worker():
        ctx = w.fill_context()
        try:
            while True:
                with lock:
                    item = next(work, None)
                if item is None:
                    return
                k, a, b = item
                t = opened[k]
                batch = t._read_batch(list(t._names), a, b)
                entries, elements = selection_masks(batch, where if isinstance(where, str) else None, expr_filters)
                elements = list(elements)
                if callable(where) or call_filters:
                    chunk = t.arrays(entry_start=a, entry_stop=b)
                    if callable(where):
                        entries = _entry_mask(where(chunk), b - a)
                    for c, fn in call_filters:
                        elements.append((c, _element_mask(fn(chunk), c)))
                out = apply_selection_masks(batch, entries, elements)
                out = out.select(kept)
                if out.num_rows:
                    ctx.append_arrow(out)
                with lock:
                    counts["read"] += b - a
                    counts["written"] += out.num_rows
                    if bar is not None:
                        bar.update(b - a)
        finally:
            ctx.finish()

    try:
        n = max(1, min(threads or os.cpu_count() or 1, len(parts) or 1))
        with concurrent.futures.ThreadPoolExecutor(n) as pool:
            for fut in [pool.submit(worker) for _ in range(n)]:
                fut.result()
    except BaseException as e:
        w.abort(f"the skim failed: {e}")
        raise
    finally:
        if bar is not None:
            bar.close()
    file_bytes = w.commit()
    return {"method": "re-encoded", "inputs": len(opened), "ntuple": first.name, "fields": kept,
            "entries_read": counts["read"], "entries": counts["written"], "parts": len(parts), "threads": n,
            "file_bytes": file_bytes}

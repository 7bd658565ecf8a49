"""Many files as one dataset: ``rntuple.iterate`` and ``rntuple.concatenate`` over a list of files, globs or
``"file.root:Events"`` specifications, as ``uproot.iterate`` and ``uproot.concatenate`` do."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from typing import Iterator, Sequence

from .._compat import api as _compat
from .._reading import evolution as _evolution
from .._reading.chunks import _legacy_step, _progress_bar
from .._reading.file import File, _is_url
from .._reading.ntuple import RNTuple
from .._rntuple import NotFoundError

_GLOB_CHARS = "*?["
_BRACES = re.compile(r"\{([^{}]*)\}")


def _split_spec(spec: str) -> tuple[str, str | None]:
    """``"path:name"`` -> (path, name); a colon that belongs to the path (a URL scheme ``s3://``, or a
    path that exists as written) is not a separator."""
    if os.path.exists(spec) or ":" not in spec:
        return spec, None
    path, _, name = spec.rpartition(":")
    if not path or "/" in name or name.startswith("//"):
        return spec, None
    return path, name


def _items(sources, ntuple: str | None) -> list[tuple[str, str | None]]:
    """uproot's file specifications, flattened: a path (or ``"path:name"``, a glob), a dict {path or glob: name
    or {"object_path": name}}, or a list of any of those (a list of dicts, as uproot)."""
    if isinstance(sources, (str, os.PathLike)):
        return [(os.fspath(sources), ntuple)]
    if isinstance(sources, dict):
        out = []
        for k, v in sources.items():
            if isinstance(v, dict):
                if v.get("steps") is not None:
                    raise TypeError("unrecognized 'files' pattern for this function ('steps' are only allowed in dask)")
                v = v.get("object_path")
            if v is not None and not isinstance(v, str):
                raise TypeError(f"the RNTuple name of {k!r} is a string, a dict with 'object_path' or None, not {v!r}")
            out.append((os.fspath(k), v))
        return out
    if isinstance(sources, Iterable) and not isinstance(sources, bytes):
        return [item for s in sources for item in _items(s, ntuple)]
    raise TypeError(f"files are a path (a glob, 'path:name'), a dict {{path: name}} or a list of those, not {sources!r}")


def _braces(path: str) -> list[str]:
    """``data/{a,b}/*.root`` -> ``data/a/*.root``, ``data/b/*.root`` (as uproot expands them)."""
    m = _BRACES.search(path)
    if m is None:
        return [path]
    return [q for alt in m.group(1).split(",") for q in _braces(path[: m.start()] + alt + path[m.end():])]


def _expand(sources, ntuple: str | None) -> list[tuple[str, str | None]]:
    """The (path, RNTuple name) pairs of ``sources`` (see :func:`_items`); globs expanded, each in sorted order
    (uproot keeps the file system's order; sorted, entry numbers and reports are the same on every machine)."""
    out = []
    for spec, name in _items(sources, ntuple):
        path, spec_name = _split_spec(spec)
        name = spec_name or name
        if any(c in path for c in _GLOB_CHARS + "{") and not _is_url(path) and not os.path.exists(path):
            matches = [m for p in _braces(path) for m in sorted(glob.glob(p))]
            if not matches:
                raise FileNotFoundError(f"no file matches {path!r}")
            out.extend((m, name) for m in dict.fromkeys(matches))
        else:
            out.append((path, name))
    if not out:
        raise ValueError("no files given")
    return out


def _open_all(sources, ntuple, allow_missing=False):
    """Opens every file's RNTuple (the one named, or the only one in the file); already-open
    :class:`RNTuple` objects are taken as they are."""
    if isinstance(sources, RNTuple):
        return [(sources._path, sources)]
    if isinstance(sources, (list, tuple)) and any(isinstance(s, RNTuple) for s in sources):
        out = []
        for s in sources:
            out.extend(_open_all(s, ntuple, allow_missing))
        return out
    opened = []
    for path, name in _expand(sources, ntuple):
        f = File(path)
        if name is None:
            keys = f.ntuple_names()
            if len(keys) != 1:
                if allow_missing and not keys:
                    continue
                trees = [k for k, c in _compat.top_keys(path).items() if c.startswith(("TTree", "TNtuple"))] if not keys and os.path.isfile(path) else []
                hint = (
                    f"; it holds the TTree(s) {', '.join(trees)}: read them with uproot, or convert them with rntuple.convert({path!r}, 'out.root', tree=NAME)"
                    if trees
                    else ""
                )
                raise ValueError(f"{path} holds {len(keys)} RNTuples ({', '.join(keys) or 'none'}): name one with ntuple=... or {path!r}:NAME{hint}")
            name = keys[0]
        try:
            opened.append((path, f[name]))
        except NotFoundError:
            if not allow_missing:
                raise
    if not opened:
        raise ValueError(f"none of the files holds the RNTuple{'' if ntuple is None else ' ' + repr(ntuple)}")
    return opened


def _check_fields(opened, names, types=None):
    """Every file must have the top-level fields ``names`` (all of the first file's when ``None``) with the same
    types, except the fields ``types`` reads into requested types; returns the names."""
    first_path, first = opened[0]
    names = first._names if names is None else [names] if isinstance(names, str) else list(names)
    for n in names:
        if n not in first.schema:
            raise NotFoundError(f"no field {n!r} in {first_path} (fields: {', '.join(first._names)})")
    for path, t in opened[1:]:
        for n in names:
            if n not in t.schema:
                raise NotFoundError(f"no field {n!r} in {path}, which {first_path} has")
            if t.schema[n] != first.schema[n] and n not in (types or {}):
                raise ValueError(
                    f"field {n!r} is {first.schema[n]} in {first_path} but {t.schema[n]} in {path}"
                    f" (types={{{n!r}: ...}} reads it as one type from every file, where ROOT's schema evolution allows)"
                )
    return names


def iterate(
    files,
    expressions=None,
    cut=None,
    *legacy,
    filter_name=None,
    filter_typename=None,
    filter_field=None,
    aliases=None,
    language=None,
    step_size="100 MB",
    library="ak",
    how=None,
    report: bool = False,
    allow_missing: bool = False,
    ntuple: str | None = None,
    fields: Sequence[str] | str | None = None,
    progress: bool | None = None,
    types=None,
    **uproot_only,
) -> Iterator:
    """Yields chunks of entries of the RNTuples of many files, in order, as :meth:`RNTuple.iterate` does (a chunk
    never spans two files); uproot 5's signature::

        rntuple.iterate(files, expressions=None, cut=None, *, filter_name=..., aliases=None,
                        step_size="100 MB", library="ak", how=None, report=False, allow_missing=False)

    ``files``: a path, a glob (``"data/*.root"``), ``"file.root:Events"``, a list of those, a dict ``{path or
    glob: RNTuple name}``, or open :class:`RNTuple` objects; ``ntuple`` names the RNTuple when the sources do not
    (it may be omitted when each file holds exactly one). Every file must have the fields read with the same
    types. ``expressions``, ``cut``, the filters, ``aliases``, ``library`` ("ak", "np", "pd", "pa") and ``how`` as
    for :meth:`RNTuple.arrays`; ``fields=`` is the older spelling of ``expressions``. With ``library="pd"`` the
    index counts entries over all files, as uproot's. ``report=True`` yields ``(chunk, report)`` pairs (the report's
    ``global_entry_start``/``stop`` count over all files). ``allow_missing=True`` skips files without the RNTuple.
    ``progress``: one tqdm bar over all files. ``types`` (``{top-level field: type}``) reads those fields into the
    requested types from every file, as :meth:`RNTuple.arrays` does, so that files whose types differ where ROOT's
    schema evolution allows (``float`` in one, ``double`` in another) read as one.

    Backward compatibility: ``rntuple.iterate(files, step_size, fields)`` (the older order) still works: a
    second positional argument that is an int or a size string (``100``, ``"100 MB"``) is the step size, and a
    third one is then the fields.

    >>> for chunk in rntuple.iterate("skims/*.root:Events", ["Muon_pt"], step_size="200 MB"):
    ...     h.fill(ak.flatten(chunk.Muon_pt))
    """
    opened = _open_all(files, ntuple, allow_missing)
    step_size, expressions, cut = _legacy_step(step_size, expressions, cut, legacy, opened[0][1]._is_key)
    lib = _compat.regularize_library(library)
    plans = [t._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, fields) for _, t in opened]
    typed = [_evolution.pairs(t, types) for _, t in opened]
    _check_fields(opened, plans[0].names, types)
    total = sum(t.num_entries for _, t in opened)
    bar = _progress_bar(progress, total, f"{len(opened)} files")
    offset = 0
    try:
        for (_, t), plan, sel in zip(opened, plans, typed):
            step = t.step_entries(step_size, plan.names)
            pos, stop = 0, t.num_entries
            read = t._reader_for(step, stop, sel)
            while pos < stop:
                end = min(stop, pos + step)
                out = t._compute(plan, pos, end, lib, how, index_offset=offset, read=read)
                yield (out, _compat.Report(t, pos, end, offset)) if report else out
                if bar is not None:
                    bar.update(end - pos)
                pos = end
            offset += t.num_entries
    finally:
        if bar is not None:
            bar.close()


def concatenate(
    files,
    expressions=None,
    cut=None,
    *legacy,
    filter_name=None,
    filter_typename=None,
    filter_field=None,
    aliases=None,
    language=None,
    entry_start: int | None = None,
    entry_stop: int | None = None,
    library="ak",
    how=None,
    allow_missing: bool = False,
    ntuple: str | None = None,
    fields: Sequence[str] | str | None = None,
    types=None,
    **uproot_only,
):
    """Reads the RNTuples of many files into one array, entries in file order; uproot 5's signature::

        rntuple.concatenate(files, expressions=None, cut=None, *, filter_name=..., aliases=None,
                            entry_start=None, entry_stop=None, library="ak", how=None, allow_missing=False)

    ``files``, ``ntuple``, ``types`` and the rest as for :func:`iterate`; ``entry_start``/``entry_stop`` count over
    all the files. ``library="ak"``: one awkward array; ``"np"``: a dict of numpy arrays; ``"pd"``: one DataFrame indexed
    by global entry number; ``"pa"``: one pyarrow table. Backward compatibility: the older third positional
    argument ``ntuple`` is taken as such when it names no field and is no expression
    (``concatenate(files, fields, "Events")``).

    >>> muons = rntuple.concatenate(["a.root", "b.root"], ["nMuon", "Muon_pt"], ntuple="Events")
    """
    if legacy or (isinstance(cut, str) and ntuple is None and _is_ntuple_name(files, cut)):
        # the older concatenate(sources, fields, ntuple, library)
        if len(legacy) > 1:
            raise TypeError("concatenate(files, expressions=None, cut=None, *, ...): pass the rest by keyword")
        if cut is not None:
            ntuple, cut = cut, None
        if legacy:
            library = legacy[0]
    opened = _open_all(files, ntuple, allow_missing)
    lib = _compat.regularize_library(library)
    plans = [t._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, fields) for _, t in opened]
    typed = [_evolution.pairs(t, types) for _, t in opened]
    _check_fields(opened, plans[0].names, types)
    total = sum(t.num_entries for _, t in opened)
    start, stop = _global_range(total, entry_start, entry_stop)
    parts = []
    offset = 0
    for (_, t), plan, sel in zip(opened, plans, typed):
        n = t.num_entries
        lo, hi = max(start - offset, 0), min(stop - offset, n)
        if lo < hi:
            parts.append(t._compute(plan, lo, hi, lib, None, index_offset=offset, read=t._typed_read(sel)))
        offset += n
    if not parts:
        t, plan, sel = opened[0][1], plans[0], typed[0]
        parts.append(t._compute(plan, 0, 0, lib, None, read=t._typed_read(sel)))
    out = _compat.concatenate(parts, lib)
    if how is not None:
        names = list(out.fields) if lib == "ak" else list(out.keys()) if lib == "np" else list(out.columns)
        out = _compat.group(out, names, how, lib)
    return out


def _is_ntuple_name(files, name: str) -> bool:
    """Whether ``name`` (given where uproot has ``cut``) is rather an RNTuple name (the older positional form)."""
    if not name.isidentifier() and "/" not in name:
        return False
    try:
        path, spec = _expand(files, None)[0]
        return spec is None and name in File(path).ntuple_names()
    except Exception:  # noqa: BLE001
        return False


def _global_range(n, entry_start, entry_stop):
    start = 0 if entry_start is None else int(entry_start)
    stop = n if entry_stop is None else int(entry_stop)
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    start = min(max(start, 0), n)
    return start, min(max(stop, start), n)

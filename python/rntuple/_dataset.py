"""Many files as one dataset: ``rntuple.iterate`` and ``rntuple.concatenate`` over a list of files, globs or
``"file.root:Events"`` specifications, as ``uproot.iterate`` and ``uproot.concatenate`` do."""

from __future__ import annotations

import glob
import os
from typing import Iterator, Sequence

import awkward as ak
import pyarrow as pa

from ._reading import File, _is_url, _names, _progress_bar
from ._rntuple import NotFoundError

_GLOB_CHARS = "*?["


def _split_spec(spec: str) -> tuple[str, str | None]:
    """``"path:name"`` -> (path, name); a colon that belongs to the path (a URL scheme ``s3://``, or a
    path that exists as written) is not a separator."""
    if os.path.exists(spec) or ":" not in spec:
        return spec, None
    path, _, name = spec.rpartition(":")
    if not path or "/" in name or name.startswith("//"):
        return spec, None
    return path, name


def _expand(sources, ntuple: str | None) -> list[tuple[str, str | None]]:
    """The (path, RNTuple name) pairs of ``sources``: a path, ``"path:name"``, a glob, a list of those, or a
    dict {path or glob: name}."""
    if isinstance(sources, (str, os.PathLike)):
        items = [(os.fspath(sources), ntuple)]
    elif isinstance(sources, dict):
        items = [(os.fspath(k), v) for k, v in sources.items()]
    else:
        items = [(os.fspath(s), ntuple) for s in sources]
    out = []
    for spec, name in items:
        path, spec_name = _split_spec(spec)
        name = spec_name or name
        if any(c in path for c in _GLOB_CHARS) and not _is_url(path) and not os.path.exists(path):
            matches = sorted(glob.glob(path))
            if not matches:
                raise FileNotFoundError(f"no file matches {path!r}")
            out.extend((m, name) for m in matches)
        else:
            out.append((path, name))
    if not out:
        raise ValueError("no files given")
    return out


def _open_all(sources, ntuple):
    """Opens every file's RNTuple (the one named, or the only one in the file)."""
    opened = []
    for path, name in _expand(sources, ntuple):
        f = File(path)
        if name is None:
            keys = f.keys()
            if len(keys) != 1:
                raise ValueError(f"{path} holds {len(keys)} RNTuples ({', '.join(keys) or 'none'}): name one with "
                                 f"ntuple=... or {path!r}:NAME")
            name = keys[0]
        opened.append((path, f[name]))
    return opened


def _check_fields(opened, fields):
    """The chosen fields (all of the first file's when ``None``), which every file must have with the same
    types."""
    first_path, first = opened[0]
    names = first.fields if fields is None else _names(fields)
    for n in names:
        if n not in first.schema:
            raise NotFoundError(f"no field {n!r} in {first_path} (fields: {', '.join(first.fields)})")
    for path, t in opened[1:]:
        for n in names:
            if n not in t.schema:
                raise NotFoundError(f"no field {n!r} in {path}, which {first_path} has")
            if t.schema[n] != first.schema[n]:
                raise ValueError(f"field {n!r} is {first.schema[n]} in {first_path} but {t.schema[n]} in {path}")
    return names


def iterate(sources, step_size="100 MB", fields: Sequence[str] | str | None = None, ntuple: str | None = None,
            library: str = "ak", progress: bool | None = None) -> Iterator:
    """Yields chunks of entries of the RNTuples of many files, in order, as awkward arrays (``library="ak"``) or
    pyarrow tables (``library="pa"``); a chunk never spans two files.

    ``sources``: a path, a glob (``"data/*.root"``), ``"file.root:Events"``, a list of those, or a dict
    ``{path or glob: RNTuple name}``; ``ntuple`` names the RNTuple when the sources do not (it may be omitted
    when each file holds exactly one). Every file must have the chosen ``fields`` (all of the first file's
    when ``None``) with the same types. ``step_size`` and ``progress`` as for :meth:`RNTuple.iterate` (one
    bar over all files).

    >>> for chunk in rntuple.iterate("skims/*.root:Events", step_size="200 MB", fields=["Muon_pt"]):
    ...     h.fill(ak.flatten(chunk.Muon_pt))
    """
    opened = _open_all(sources, ntuple)
    names = _check_fields(opened, fields)
    total = sum(t.num_entries for _, t in opened)
    bar = _progress_bar(progress, total, f"{len(opened)} files")
    try:
        for _, t in opened:
            for chunk in t.iterate(step_size, fields=names, library=library, progress=False):
                yield chunk
                if bar is not None:
                    bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()


def concatenate(sources, fields: Sequence[str] | str | None = None, ntuple: str | None = None,
                library: str = "ak"):
    """Reads the RNTuples of many files into one awkward array (``library="ak"``) or pyarrow table
    (``library="pa"``), entries in file order. ``sources``, ``fields`` and ``ntuple`` as for :func:`iterate`.

    >>> muons = rntuple.concatenate(["a.root", "b.root"], fields=["nMuon", "Muon_pt"], ntuple="Events")
    """
    if library not in ("ak", "pa", "awkward", "pyarrow"):
        raise ValueError(f"library must be 'ak' or 'pa', got {library!r}")
    opened = _open_all(sources, ntuple)
    names = _check_fields(opened, fields)
    if library in ("pa", "pyarrow"):
        return pa.concat_tables([t.to_arrow(names) for _, t in opened])
    parts = [t.arrays(names) for _, t in opened]
    return parts[0] if len(parts) == 1 else ak.concatenate(parts)

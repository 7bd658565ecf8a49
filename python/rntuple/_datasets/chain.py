"""Several RNTuples as one dataset, read by the compiled core (``rntuple.chain``): :class:`Chain`, the files one
after the other with global entry numbers; :class:`rntuple.Join` (``join``) extends it with friends. The reading API is
the RNTuple reader's: ``num_entries``, ``keys()``, ``arrays``, ``iterate``, ``to_arrow``."""

from __future__ import annotations

import os
from typing import Iterator, Sequence

import awkward as ak
import numpy as np
import pyarrow as pa

from .._compat import api as _compat
from .._reading.chunks import parse_size
from .._reading.file import File
from .._reading.layout import convert as _convert_column
from .._reading.ntuple import RNTuple
from .._rntuple import NativeProcessor
from .dataset import _expand


def _inputs(sources, ntuple: str | None) -> tuple[list[tuple[str, str | None]], RNTuple]:
    """``sources`` (paths, globs, ``path:ntuple``, URLs, opened :class:`RNTuple` objects, or a list of those) ->
    the core's ``(location, name)`` pairs and the first input's :class:`RNTuple` (its field tree lays out the
    awkward arrays)."""
    items = sources if isinstance(sources, list) else [sources]
    pairs: list[tuple[str, str | None]] = []
    first = None
    for s in items:
        if isinstance(s, RNTuple):
            pairs.append((os.fspath(s._path), s.name))
            first = first or s
        else:
            pairs.extend(_expand(s, ntuple))
    if not pairs:
        raise ValueError("no inputs given")
    if first is None or pairs[0][0] != first._path:
        path, name = pairs[0]
        f = File(path)
        if name is None:
            names = f.ntuple_names()
            if len(names) != 1:
                raise ValueError(f"{path} holds {len(names)} RNTuples ({', '.join(names) or 'none'}): name one with ntuple=... or {path!r}:NAME")
            name = names[0]
        first = f[name]
    return pairs, first


def _first_with(native: NativeProcessor, name: str) -> RNTuple:
    """The first input of a chain (``missing="none"``) that has the top-level field ``name``: its field tree lays
    the field out."""
    for location, ntuple, _ in native.primary_inputs():
        t = File(location)[ntuple]
        if name in t.schema:
            return t
    raise KeyError(f"no input of the chain has a field {name!r}")


def _names(fields) -> list[str] | None:
    if fields is None:
        return None
    return [fields] if isinstance(fields, str) else list(fields)


class Chain:
    """RNTuples with the same fields and types read as one sequence of entries (``rntuple.chain(sources)``);
    inputs whose fields or types differ are refused naming the file and the field. Entry numbers are global."""

    def __init__(self, native: NativeProcessor, protos: dict[str, tuple[RNTuple, str]]):
        self._native = native
        # field name of the dataset -> (RNTuple whose field tree lays it out, its name there)
        self._protos = protos

    @classmethod
    def _open(cls, sources, ntuple=None, threads=None, missing="error") -> "Chain":
        pairs, first = _inputs(sources, ntuple)
        native = NativeProcessor(pairs, [], [], "left", threads, missing)
        protos = {}
        for name, _ in native.fields():
            protos[name] = (first if name in first.schema else _first_with(native, name), name)
        return cls(native, protos)

    @property
    def num_entries(self) -> int:
        """Entries of all inputs (of the primary, for a join)."""
        return self._native.num_entries

    def __len__(self) -> int:
        return self.num_entries

    @property
    def schema(self) -> dict[str, str]:
        """Field name -> ROOT type name."""
        return dict(self._native.fields())

    @property
    def fields(self) -> list[str]:
        """The field names, in order (a friend's as ``FRIEND.field``)."""
        return [n for n, _ in self._native.fields()]

    def keys(self, filter_name=None) -> list[str]:
        """The field names that ``filter_name`` (a glob, ``/regex/``, callable or list; all when ``None``) keeps."""
        keep = _compat.regularize_filter(filter_name)
        return [n for n in self.fields if keep(n)]

    @property
    def inputs(self) -> list[tuple[str, str, int]]:
        """``(location, RNTuple name, entries)`` of each (primary) input."""
        return self._native.primary_inputs()

    def parts(self, min_entries: int = 0) -> list[tuple[int, int]]:
        """Global ``(start, stop)`` ranges of whole clusters, each of at least ``min_entries`` entries within one
        input, for parallel iteration."""
        return self._native.parts(min_entries)

    def _range(self, entry_start, entry_stop) -> tuple[int, int]:
        n = self.num_entries
        start = 0 if entry_start is None else int(entry_start)
        stop = n if entry_stop is None else int(entry_stop)
        start += n if start < 0 else 0
        stop += n if stop < 0 else 0
        start = min(max(start, 0), n)
        return start, min(max(stop, start), n)

    def _select(self, expressions, fields, filter_name) -> list[str] | None:
        names = _names(expressions) if expressions is not None else _names(fields)
        if names is None:
            return None if filter_name is None else self.keys(filter_name)
        return names

    def _to_awkward(self, batch: pa.RecordBatch) -> ak.Array:
        contents = []
        for i, name in enumerate(batch.schema.names):
            proto, inner = self._protos[name]
            fid = next(fid for n, _, fid in proto._top if n == inner)
            col = batch.column(i)
            if col.null_count:
                valid = col.is_valid().to_numpy(zero_copy_only=False)
                content = _convert_column(col.filter(pa.array(valid)), proto._tree[fid], proto._tree)
                index = np.cumsum(valid, dtype=np.int64) - 1
                index[~valid] = -1
                content = ak.contents.IndexedOptionArray.simplified(ak.index.Index64(index), content)
            else:
                content = _convert_column(col, proto._tree[fid], proto._tree)
            contents.append(content)
        return ak.Array(ak.contents.RecordArray(contents, batch.schema.names, length=batch.num_rows))

    def arrays(
        self,
        expressions=None,
        *,
        fields: Sequence[str] | str | None = None,
        filter_name=None,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library="ak",
        how=None,
    ):
        """Reads the chosen fields (names, a friend's as ``FRIEND.field``; or those ``filter_name`` keeps; all when
        neither) of entries ``entry_start:entry_stop`` into an awkward array of records (``library="ak"``, laid out
        as ``RNTuple.arrays``; a friend's missing values are ``None``), a dict of numpy arrays (``"np"``), a pandas
        DataFrame (``"pd"``) or a pyarrow table (``"pa"``)."""
        library = _compat.regularize_library(library)
        start, stop = self._range(entry_start, entry_stop)
        batch = self._native.read(self._select(expressions, fields, filter_name), start, stop)
        if library == "pa":
            return pa.Table.from_batches([batch])
        arr = self._to_awkward(batch)
        return _compat.group(_compat.convert(arr, library, start), list(arr.fields), how, library)

    def to_arrow(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None, entry_stop: int | None = None) -> pa.Table:
        """Reads into a ``pyarrow.Table`` (a friend's missing values are nulls)."""
        start, stop = self._range(entry_start, entry_stop)
        return pa.Table.from_batches([self._native.read(_names(fields), start, stop)])

    def _step(self, step_size, names) -> int:
        if not isinstance(step_size, str):
            step = int(step_size)
            if step <= 0:
                raise ValueError(f"step_size must be positive, got {step_size!r}")
            return step
        # bytes per entry of the chosen fields, from the first inputs' column sizes
        per_entry = 0.0
        for proto in {id(p): p for p, _ in self._protos.values()}.values():
            mine = [inner for name, (p, inner) in self._protos.items() if p is proto and (names is None or name in names)]
            if mine and proto.num_entries:
                per_entry += parse_size("1 MB") / proto.step_entries("1 MB", fields=mine)
        return max(1, int(parse_size(step_size) / per_entry)) if per_entry else max(1, self.num_entries)

    def iterate(
        self,
        expressions=None,
        *,
        fields: Sequence[str] | str | None = None,
        filter_name=None,
        step_size="100 MB",
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library="ak",
        how=None,
    ) -> Iterator:
        """Yields :meth:`arrays` of consecutive ranges of ``step_size`` entries (an int, or a size string such as
        ``"100 MB"`` of the chosen fields in memory)."""
        names = self._select(expressions, fields, filter_name)
        step = self._step(step_size, names)
        start, stop = self._range(entry_start, entry_stop)
        for s in range(start, stop, step):
            yield self.arrays(names, entry_start=s, entry_stop=min(s + step, stop), library=library, how=how)

    def map_clusters(self, fn, fields: Sequence[str] | str | None = None, *, workers: int = 2, library="ak") -> list:
        """Calls ``fn(chunk)`` for every cluster of every input on ``workers`` threads and returns the results in
        chain order. ``chunk`` holds the cluster's entries of the chosen fields (all when ``None``) as
        :meth:`arrays` gives them (``library`` "ak", "np", "pd" or "pa"). The clusters of all inputs are one list,
        taken largest first, so a large file among small ones keeps every worker busy to the end (ROOT's
        RDataFrame hands out whole files); decoding releases the GIL, so the workers decode in parallel while
        ``fn`` runs. The first exception stops the work and is raised.

        >>> sums = rntuple.chain(["a.root", "b.root"]).map_clusters(lambda c: float(ak.sum(c.MET_pt)),
        ...                                                          fields=["MET_pt"], workers=4)  # doctest: +SKIP
        """
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        library = _compat.regularize_library(library)
        names = _names(fields)
        ranges = self.parts(0)
        order = sorted(range(len(ranges)), key=lambda i: ranges[i][0] - ranges[i][1])  # largest first
        results: list = [None] * len(ranges)

        def one(i: int) -> None:
            start, stop = ranges[i]
            results[i] = fn(self.arrays(fields=names, entry_start=start, entry_stop=stop, library=library))

        if workers == 1 or len(ranges) <= 1:
            for i in order:
                one(i)
            return results
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rntuple-map") as pool:
            futures = [pool.submit(one, i) for i in order]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return results

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self.inputs)} input(s), {self.num_entries} entries>"


def chain(sources, ntuple: str | None = None, *, threads: int | None = None, missing: str = "error") -> Chain:
    """RNTuples with the same fields as one dataset: ``sources`` are paths, globs (``"data/*.root"``), URLs,
    ``"file.root:NTUPLE"``, opened :class:`RNTuple` objects, or a list of those; ``ntuple`` names the RNTuple
    where a file has several. ``threads``: decoding threads per input (default: one per core). ``missing``:
    ``"error"`` refuses inputs whose fields differ; ``"none"`` makes the chain's fields those of all inputs, a
    field an input lacks being ``None`` in its entries (types must still agree where a field is present).

    >>> events = rntuple.chain(["a.root", "b.root"], ntuple="Events")
    >>> events.num_entries, events.arrays(["x"], entry_start=10, entry_stop=20)
    """
    return Chain._open(sources, ntuple, threads, missing)

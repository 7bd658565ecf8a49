"""Dask: ``rntuple.dask`` reads RNTuples lazily as a dask-awkward array, one partition per range of whole clusters,
reading only the columns a computation needs; ``rntuple.to_rntuple`` writes a dask-awkward array in parallel.

dask, dask-awkward (and distributed, for a cluster) are imported when these functions are called, not with the
package.
"""

from __future__ import annotations

import collections
import glob
import os
import threading
import uuid
from typing import Any, Sequence

import awkward as ak

from .._datasets.dataset import _check_fields, _open_all
from .._reading.expressions import ExpressionError
from .._reading.file import File, _is_url
from .._reading.layout import batch_to_layout
from .._reading.selection import to_core
from .._rntuple import NotFoundError
from .._tools.merge import merge
from .._writing.data import infer_schema
from .._writing.writers import ParallelWriter, Writer
from .distributed import Coordinator, routable_host, write_partition
from .parts import remove_quietly as _remove_quietly
from .parts import remove_tree as _remove_tree

#: The ways of :func:`to_rntuple` (``None``: chosen from the scheduler).
METHODS = (None, "parallel-writer", "distributed", "merge")

# What the read function of ``rntuple.dask`` read in this process, newest last: one dict per partition read
# (path, ntuple, fields, entry_start, entry_stop, bytes: bytes the file's source returned; with ``where``, also
# where, entries_kept and clusters_skipped). Diagnostics (and the tests):
# ``client.run(lambda: list(rntuple._engines.dask.READ_LOG))`` shows the workers'.
READ_LOG: collections.deque = collections.deque(maxlen=10000)


def _dask_modules():
    try:
        import dask
        import dask_awkward as dak
    except ImportError as e:  # pragma: no cover - the message is the point
        raise ImportError(
            f"rntuple.dask / rntuple.to_rntuple need dask and dask-awkward (pip install dask dask-awkward; distributed for a cluster): {e}"
        ) from None
    return dask, dak


# ----- reading ---------------------------------------------------------------------------------------------


def _cluster_ranges(t, names, step_size) -> list[tuple[int, int]]:
    """Entry ranges of whole clusters of ``t``: consecutive clusters grouped while a group holds at most the
    entries ``step_size`` stands for (an int, or a size string of uncompressed bytes of ``names``); a cluster
    larger than that is a range of its own."""
    bounds = list(t.cluster_boundaries)
    if t.num_entries == 0 or len(bounds) < 2:
        return []
    step = t.step_entries(step_size, names)
    ranges = []
    start = bounds[0]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if lo > start and hi - start > step:
            ranges.append((start, lo))
            start = lo
    ranges.append((start, bounds[-1]))
    return ranges


def _top_level(columns) -> set[str]:
    """dask-awkward's column paths (``"jets.pt"``) -> the top-level RNTuple fields that hold them."""
    return {c.split(".", 1)[0] for c in columns if c}


class _ReadClusters:
    """dask-awkward's IO function of ``rntuple.dask``: called with one partition, (path, ntuple, entry_start,
    entry_stop), it reads ``fields`` of those entries. It takes part in dask-awkward's column projection
    (``ColumnProjectionMixin``: ``mock``, ``prepare_for_projection``, ``necessary_columns``, ``project_columns``):
    before a computation runs, dask-awkward finds which columns it touches and replaces this function by one
    that reads only their top-level fields; the fields left out are given back data-less (dask-awkward's
    ``unproject_layout``), so the partitions keep the type of the collection's ``meta``."""

    def __init__(self, form, fields: list[str], where: str | None = None):
        self.form = form  # the collection's form: every field, also when fewer are read
        self.fields = list(fields)  # the top-level fields read
        self.where = where  # the selection (the core's syntax), applied natively while reading; its fields always read
        self.behavior = None
        self.attrs = None

    def __dask_tokenize__(self):
        return ("rntuple._engines.dask._ReadClusters", tuple(self.fields), str(self.form), self.where)

    def __repr__(self) -> str:
        return f"<rntuple dask read of {self.fields}" + ("" if self.where is None else f" where {self.where!r}") + ">"

    def __call__(self, part):
        path, name, start, stop = part
        f = File(path)
        selected = {}
        try:
            before = f.io_stats()["bytes"]
            t = f[name]
            if self.where is None:
                arr = t.arrays(fields=self.fields, entry_start=start, entry_stop=stop)
            else:
                # The selection's fields read first, cluster by cluster; clusters where none passes not read further;
                # only the kept entries of the fields asked for come out.
                batch, stats, _ = t._read_selected(self.fields, start, stop, self.where)
                arr = ak.Array(batch_to_layout(batch, t._tree, t._ids(self.fields)[1]))
                selected = {"where": self.where, "entries_kept": stats["entries_kept"], "clusters_skipped": stats["clusters_skipped"]}
            nbytes = f.io_stats()["bytes"] - before
        finally:
            f.close()
        READ_LOG.append({"path": path, "ntuple": name, "fields": list(self.fields), "entry_start": start, "entry_stop": stop, "bytes": nbytes,
                         **selected})
        if len(self.fields) != len(self.form.fields):
            arr = ak.Array(_unproject(self.form, arr.layout))
        return arr

    def project_columns(self, columns) -> "_ReadClusters":
        wanted = _top_level(columns)
        keep = [n for n in self.form.fields if n in wanted]
        if not keep:  # nothing but the number of entries is needed: read the first field
            keep = self.form.fields[:1]
        # (The selection's fields are read by the selected read whatever the fields kept here.)
        return self if keep == self.fields else _ReadClusters(self.form, keep, self.where)

    # dask-awkward's column-projection protocol, as its ColumnProjectionMixin implements it (for fields of
    # records: the granularity of reading here). Delegated, so that dask-awkward is imported only when used.
    def mock(self):
        return _mixin().mock(self)

    def mock_empty(self, backend="cpu"):
        return _mixin().mock_empty(self, backend)

    def prepare_for_projection(self):
        return _mixin().prepare_for_projection(self)

    def necessary_columns(self, report, state) -> frozenset:
        return _mixin().necessary_columns(self, report, state)

    def project(self, report, state) -> "_ReadClusters":
        return self.project_columns(self.necessary_columns(report, state))

    def project_manually(self, columns) -> "_ReadClusters":
        return self.project_columns(columns)


def _record_form(form, names: list[str]):
    """The record form of the top-level fields ``names`` of the record form ``form``."""
    return ak.forms.RecordForm([form.content(n) for n in names], list(names))


def _unproject(form, layout):
    """The record ``layout`` of some top-level fields of ``form``, with the others added data-less (placeholders
    of dask-awkward's ``unproject_layout``, whatever their type), so that a partition has the collection's type."""
    from dask_awkward.lib.unproject_layout import unproject_layout

    if not isinstance(layout, ak.contents.RecordArray) or layout.is_tuple:
        return unproject_layout(form, layout)
    n = layout.length
    missing = [f for f in form.fields if not layout.has_field(f)]
    filler = unproject_layout(_record_form(form, missing), ak.contents.RecordArray([], [], length=n)) if missing else None
    contents = [layout.content(f) if layout.has_field(f) else filler.content(f) for f in form.fields]
    return ak.contents.RecordArray(contents, form.fields, length=n, parameters=form.parameters)


def _mixin():
    from dask_awkward.lib.io.columnar import ColumnProjectionMixin

    return ColumnProjectionMixin


def _abs(path: str) -> str:
    return path if _is_url(path) else os.path.abspath(path)


def dask(sources, fields: Sequence[str] | str | None = None, step_size="100 MB", ntuple: str | None = None, where: str | None = None):
    """The RNTuples of many files as one lazy dask-awkward array, as ``uproot.dask`` gives TTrees.

    ``sources``, ``fields`` and ``ntuple`` as for :func:`rntuple.iterate` (a path, a glob, ``"file.root:Events"``,
    a list of those, or ``{path or glob: RNTuple name}``). Each partition is a range of whole clusters of one
    file: consecutive clusters are grouped while a partition holds at most ``step_size`` (a number of entries,
    or a size string such as ``"100 MB"`` of uncompressed data of the chosen fields); ``step_size=1`` gives one
    partition per cluster. Making the array reads each file's metadata, no page: the type (``meta``) comes from
    the schema, the divisions from the cluster boundaries. A computation reads only the top-level fields it
    touches (dask-awkward's column optimization; ``dak.report_necessary_columns(result)`` tells which).

    ``where``: a selection of entries (the language of ``arrays(cut=)``: the core's syntax, ``"nMuon >= 2 &&
    count(Muon_pt > 20) > 0"``, or uproot's spelling, ``"(nMuon >= 2) & (ak.sum(Muon_pt > 20, axis=1) > 0)"``),
    applied natively per partition, cluster by cluster: the fields it names are read first, the clusters where no
    entry passes are not read further, and only the kept entries reach Python. The fields it needs are always
    read, whatever the column optimization keeps, and are in the array only when in ``fields``. The partitions'
    lengths are then unknown until read: the divisions are unknown (``None``).

    >>> events = rntuple.dask("skims/*.root:Events", step_size="200 MB")
    >>> pt = events.Muon_pt[events.nMuon == 2]
    >>> dak.report_necessary_columns(pt)       # {'from-rntuple-…': frozenset({'Muon_pt', 'nMuon'})}
    >>> h = pt.compute()                       # on the current scheduler: threads, or a distributed Client
    >>> dimuons = rntuple.dask("skims/*.root:Events", fields=["Muon_pt", "Muon_eta"], where="nMuon == 2")
    >>> dimuons.Muon_pt.compute()              # only the entries with two muons were read into Python
    """
    dask_, dak = _dask_modules()
    opened = _open_all(sources, ntuple)
    first_path, first = opened[0]
    names = list(first._names) if fields is None else [fields] if isinstance(fields, str) else list(fields)
    for n in names:
        if n not in first.schema:
            raise NotFoundError(f"no field {n!r} in {first_path} (fields: {', '.join(first._names)})")
    core_where = None
    if where is not None:
        try:
            core_where, used = to_core(where, first._uproot_tree.core_name, None, "where")
        except ExpressionError as e:
            raise NotFoundError(f"{e} in RNTuple {first.name!r} of {first_path!r} (fields: {', '.join(first._names)})") from None
        # the selection's fields, too, in every file with the same types
        names_read = list(dict.fromkeys(names + [k.split(".")[0] for k in used]))
    else:
        names_read = names
    _check_fields(opened, names_read)  # the same fields with the same types in every file
    parts = []
    for path, t in opened:
        path = _abs(path)
        parts.extend((path, t.name, lo, hi) for lo, hi in _cluster_ranges(t, names, step_size))
    if not parts:  # no entries at all: one empty partition keeps the type
        parts.append((_abs(first_path), first.name, 0, 0))
    # The type without reading data: a read of no entries decodes no page.
    form = first.arrays(fields=names, entry_start=0, entry_stop=0).layout.form
    io = _ReadClusters(form, names, core_where)
    divisions = [0]
    for _, _, lo, hi in parts:
        divisions.append(divisions[-1] + hi - lo)
    stamps = [(p, os.stat(p).st_mtime_ns if not _is_url(p) and os.path.exists(p) else None) for p in sorted({q for q, *_ in parts})]
    token = dask_.base.tokenize(parts, stamps, names, str(form), core_where)
    return dak.from_map(io, parts, label="from-rntuple", token=token, divisions=None if core_where is not None else tuple(divisions))


# ----- writing ---------------------------------------------------------------------------------------------

# The parallel writers of the to_rntuple calls running in this process, by token: the tasks, run on threads of
# this process, find theirs here.
_SHARED: dict[str, "_SharedWrite"] = {}
_SHARED_LOCK = threading.Lock()

_UNBOUNDED = 1 << 62


class _SharedWrite:
    """One ParallelWriter filled by the partitions' tasks. With ``ordered``, the clusters of partition i are
    committed after those of partition i - 1: each task compresses its partition into fill contexts that commit
    nothing (the writer's cluster sizes are unbounded), then the task that completes the next partitions in
    order finishes their contexts (a finish commits the cluster: reserving space, writing the compressed pages,
    appending the metadata). No task waits for another, so no order of execution can deadlock."""

    def __init__(self, writer: ParallelWriter, ordered: bool, chunk_bytes: int | None):
        self.writer = writer
        self.ordered = ordered
        self.chunk_bytes = chunk_bytes
        self.lock = threading.Lock()
        self.pending: dict[int, list] = {}
        self.next = 0
        self.started: dict[int, int] = {}  # partition -> entries: a task run again writes nothing twice
        self.active = 0  # tasks filling now
        self.idle = threading.Condition(self.lock)
        self.abandoned = False  # set when the computation failed: the tasks still running stop writing

    def abandon(self, timeout: float = 120.0) -> None:
        """Lets no task start filling, and waits for those filling now to end."""
        with self.idle:
            self.abandoned = True
            self.idle.wait_for(lambda: self.active == 0, timeout)

    def fill(self, index: int, data) -> int:
        with self.lock:
            if self.abandoned:
                raise RuntimeError("rntuple.to_rntuple: the computation failed; this partition is not written")
            if index in self.started:
                return self.started[index]
            self.started[index] = len(data)
            self.active += 1
        try:
            return self._fill(index, data)
        finally:
            with self.idle:
                self.active -= 1
                self.idle.notify_all()

    def _fill(self, index: int, data) -> int:
        contexts = []
        n = len(data)
        if n:
            for lo, hi in _chunks(data, self.chunk_bytes):
                ctx = self.writer.fill_context()
                ctx.extend(data[lo:hi] if (lo, hi) != (0, n) else data)
                contexts.append(ctx)
        if not self.ordered:
            for ctx in contexts:
                ctx.finish()
            return n
        with self.lock:
            self.pending[index] = contexts
            while self.next in self.pending:
                for ctx in self.pending.pop(self.next):
                    ctx.finish()
                self.next += 1
        return n


def _chunks(data, chunk_bytes: int | None) -> list[tuple[int, int]]:
    """Entry ranges of ``data`` of about ``chunk_bytes`` in memory each (one range when None)."""
    n = len(data)
    if chunk_bytes is None:
        return [(0, n)]
    try:
        nbytes = ak.Array(data).layout.nbytes
    except Exception:  # noqa: BLE001 - a layout that cannot say is written in one piece
        return [(0, n)]
    pieces = max(1, -(-nbytes // max(1, chunk_bytes)))
    step = max(1, -(-n // pieces))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def _write_shared(data, token: str, index: int) -> dict:
    state = _SHARED.get(token)
    if state is None:
        raise RuntimeError(
            "rntuple.to_rntuple: this task runs in a process other than the one holding the parallel "
            "writer (the workers are separate processes); use method='merge'"
        )
    return {"index": index, "entries": state.fill(index, data)}


def _write_part(data, part_path: str, ntuple: str, schema, options: dict) -> dict:
    w = Writer(part_path, ntuple, schema, **options)
    try:
        if len(data):
            w.extend(data)
    except BaseException:
        w.abort()
        raise
    w.commit()
    return {"path": part_path, "entries": len(data)}


def _scheduler_in_this_process(dask_, collection, scheduler) -> bool:
    """Whether the tasks of ``collection`` would run on threads of this process (the threaded or synchronous
    scheduler, or a distributed cluster whose workers all live in this process, as ``LocalCluster(processes=False)``
    makes)."""
    import dask.local
    import dask.threaded

    get = dask_.base.get_scheduler(scheduler=scheduler, collections=[collection])
    if get is None or get in (dask.threaded.get, dask.local.get_sync):
        return True
    client = _client_of(dask_, collection, scheduler)
    if client is not None and hasattr(client, "run"):
        try:
            pids = client.run(os.getpid)
        except Exception:  # noqa: BLE001 - a cluster that cannot say is taken as remote
            return False
        return bool(pids) and all(p == os.getpid() for p in pids.values())
    return False


def to_rntuple(
    array,
    path,
    ntuple: str = "Events",
    schema=None,
    compression: int = 505,
    *,
    method: str | None = None,
    ordered: bool = True,
    scheduler=None,
    coordinator_host: str | None = None,
    **options,
) -> dict:
    """Writes the dask-awkward ``array`` (of records: one field per top-level RNTuple field) as the RNTuple
    ``ntuple`` of the new file ``path``, computing and writing its partitions in parallel; returns a report:
    ``{"path", "ntuple", "entries", "partitions", "clusters", "method", "file_bytes", "bytes_written"}``
    (``bytes_written``: by all processes together, the merge's part files included) and, for
    ``"distributed"``, ``"wasted_bytes"``.

    ``method``:

    - ``"parallel-writer"`` (chosen when the tasks run in this process: the threaded scheduler, or a distributed
      ``LocalCluster(processes=False)``): every task fills a :class:`rntuple.ParallelWriter` fill context from its
      worker thread, compressing with the GIL released, into ONE file, no merge step;
    - ``"distributed"`` (chosen when the workers are separate processes, e.g. ``LocalCluster(processes=True)``,
      or machines sharing a file system): the papers' protocol, as MPI ranks use it. This process creates the
      file and hands out byte ranges of it over TCP; every task compresses its clusters and writes them straight
      into the ONE file at its ranges, and returns only their metadata; this process then writes the page list
      and footer. No byte is written twice, no merge step. A worker that dies is retried by Dask: its ranges
      stay unreferenced (``wasted_bytes`` in the report), every entry is in the file once. The workers must
      reach this process over TCP (``coordinator_host``: the address they reach it at, found from the
      scheduler's address by default) and see ``path``'s folder;
    - ``"merge"`` (chosen for remote outputs, ``s3://``, ``root://``; for workers with no shared file system):
      each task writes its partition into a file of its own beside ``path``, then :func:`rntuple.merge` copies
      their compressed pages into ``path`` and the parts are removed.

    ``ordered=True`` (the default) keeps the entries in the array's order; the parallel writer then makes each
    partition one cluster (pieces of at most ``max_unzipped_cluster_size`` bytes in memory, or of
    ``approx_zipped_cluster_size`` when given), committed in partition order. ``ordered=False`` lets the clusters
    of different partitions interleave (as :class:`ParallelWriter` does) with the writer's own cluster sizes.
    ``schema`` as for :func:`rntuple.write` (inferred from the array's type when omitted); ``compression`` and
    the other write ``options`` as for :class:`rntuple.Writer`. ``scheduler`` is passed to ``dask.compute``. The
    file at ``path`` is replaced only when everything is written; with ``checkpoint_clusters=K`` and
    ``"distributed"``, it is a complete file from the start on, holding more finished partitions every K clusters
    (in partition order when ``ordered``).

    >>> events = rntuple.dask("nano/*.root:Events")
    >>> skim = events[events.nMuon >= 2][["nMuon", "Muon_pt"]]
    >>> rntuple.to_rntuple(skim, "skim.root")
    {'path': 'skim.root', 'ntuple': 'Events', 'entries': 1204, 'partitions': 8, 'clusters': 8, 'method': 'parallel-writer', ...}
    """
    dask_, dak = _dask_modules()
    if not isinstance(array, dak.Array):
        raise TypeError(f"to_rntuple writes a dask_awkward.Array; got {type(array).__name__} (rntuple.write writes an awkward array)")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if not array.fields:
        raise TypeError(f"to_rntuple writes an array of records (one field per top-level RNTuple field); got type {array.form.type}")
    path = os.fspath(path)
    if schema is None:
        form = array.form
        try:
            schema = infer_schema(ak.Array(form.length_zero_array(highlevel=False)))
        except TypeError as e:
            raise TypeError(f"to_rntuple: cannot infer the schema from the array's type {form.type}: {e}; pass schema=") from None
    options = {**options, "compression": compression}
    if method is None:
        if _scheduler_in_this_process(dask_, array, scheduler):
            method = "parallel-writer"
        else:
            method = "merge" if _is_url(path) else "distributed"
    if method != "parallel-writer" and options.get("update_existing_file"):
        raise ValueError(f"to_rntuple: update_existing_file needs the parallel writer (method='parallel-writer'): method {method!r} makes a new file")
    if method == "distributed" and _is_url(path):
        raise ValueError(f"to_rntuple: method='distributed' writes one file on a file system the workers share; {path!r} is a URL (use method='merge')")
    parts = array.to_delayed(optimize_graph=True)
    token = uuid.uuid4().hex
    compute_kw = {} if scheduler is None else {"scheduler": scheduler}
    if method == "parallel-writer":
        report = _write_parallel(dask_, parts, path, ntuple, schema, options, ordered, token, compute_kw)
    elif method == "distributed":
        report = _write_distributed(dask_, array, parts, path, ntuple, schema, options, ordered, scheduler, coordinator_host)
    else:
        report = _write_merged(dask_, parts, path, ntuple, schema, options, token, compute_kw)
    with File(path) as f:
        clusters = len(f[ntuple].cluster_boundaries) - 1
    return {
        "path": path,
        "ntuple": ntuple,
        "entries": report["entries"],
        "partitions": len(parts),
        "clusters": clusters,
        "method": method,
        "file_bytes": report["file_bytes"],
        "bytes_written": report.get("bytes_written", report["file_bytes"]),
        **({"wasted_bytes": report["wasted_bytes"]} if "wasted_bytes" in report else {}),
    }


def _write_parallel(dask_, parts, path, ntuple, schema, options, ordered, token, compute_kw) -> dict:
    chunk_bytes = None
    wopts = dict(options)
    if ordered:
        # Nothing commits while a task fills: each task's pieces become clusters when their turn comes.
        given = options.get("approx_zipped_cluster_size")
        chunk_bytes = int(given) if given is not None else int(options.get("max_unzipped_cluster_size", 0) or _default_option("max_unzipped_cluster_size"))
        wopts["approx_zipped_cluster_size"] = _UNBOUNDED
        wopts["max_unzipped_cluster_size"] = _UNBOUNDED
    in_place = bool(options.get("update_existing_file"))
    target = path if in_place else os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.to_rntuple-{token[:12]}")
    writer = ParallelWriter(target, ntuple, schema, **wopts)
    state = _SharedWrite(writer, ordered, chunk_bytes)
    with _SHARED_LOCK:
        _SHARED[token] = state
    ok = False
    try:
        tasks = [dask_.delayed(_write_shared, pure=False)(p, token, i) for i, p in enumerate(parts)]
        results = dask_.compute(*tasks, **compute_kw)
        if ordered and state.next != len(parts):
            raise RuntimeError(f"to_rntuple: {len(parts) - state.next} partitions were not committed")
        size = writer.commit()
        ok = True
    finally:
        if not ok:
            # Tasks may still run after the first error: wait for those filling, then (a parallel writer cannot
            # be abandoned) commit the writer and remove what it wrote.
            state.abandon()
            try:
                writer.commit()
            except Exception:  # noqa: BLE001 - the first error is the one to raise
                pass
            if not in_place:
                _remove_quietly(target)
                # and the writer's own temporary file, should its commit have failed (the name has our token)
                folder, base = os.path.split(target)
                for leftover in glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(base)}.tmp-*")):
                    _remove_quietly(leftover)
        with _SHARED_LOCK:
            _SHARED.pop(token, None)
    if not in_place:
        os.replace(target, path)
    return {"entries": sum(r["entries"] for r in results), "file_bytes": size}


def _default_option(name: str) -> Any:
    from .. import _rntuple

    return _rntuple.default_write_options()[name]


def _write_merged(dask_, parts, path, ntuple, schema, options, token, compute_kw) -> dict:
    folder = os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.parts-{token[:12]}")
    os.makedirs(folder)
    try:
        tasks = [dask_.delayed(_write_part, pure=False)(p, os.path.join(folder, f"part-{i:06d}.root"), ntuple, schema, options) for i, p in enumerate(parts)]
        results = dask_.compute(*tasks, **compute_kw)
        entries = sum(r["entries"] for r in results)
        inputs = [r["path"] for r in results if r["entries"]] or [results[0]["path"]]
        part_bytes = sum(os.path.getsize(r["path"]) for r in results)
        merged = merge(path, inputs, ntuple, compression=options["compression"])
    finally:
        _remove_tree(folder)
    return {"entries": entries, "file_bytes": merged["file_bytes"], "bytes_written": part_bytes + merged["file_bytes"]}


def _write_rank(data, ticket) -> dict:
    return write_partition(data, ticket)


def _client_of(dask_, collection, scheduler):
    """The distributed client the tasks of ``collection`` run through, or None (a local scheduler)."""
    get = dask_.base.get_scheduler(scheduler=scheduler, collections=[collection])
    client = get if hasattr(get, "run") else getattr(get, "__self__", None)
    return client if client is not None and hasattr(client, "scheduler_info") and hasattr(client, "compute") else None


def _write_distributed(dask_, array, parts, path, ntuple, schema, options, ordered, scheduler, host) -> dict:
    client = _client_of(dask_, array, scheduler)
    if host is None:
        peer = None
        if client is not None:
            from urllib.parse import urlsplit

            peer = urlsplit(client.scheduler.address).hostname
        host = routable_host(peer)
    coord = Coordinator(path, ntuple, schema, options, host=host)
    ok = False
    try:
        tasks = [dask_.delayed(_write_rank, pure=False)(p, coord.ticket, dask_key_name=f"rntuple-rank-{i}-{coord.ticket.token[:8]}") for i, p in enumerate(parts)]
        if client is not None and coord.checkpoint_clusters:
            results = _gather_with_checkpoints(client, tasks, coord, ordered)
        else:
            results = list(dask_.compute(*tasks, **({} if scheduler is None else {"scheduler": scheduler})))
        rep = coord.commit(results, ordered=ordered)
        ok = True
    finally:
        if not ok:
            coord.abort("a task of rntuple.to_rntuple failed")
    return {"entries": sum(int(r["entries"]) for r in results), **rep}


def _gather_with_checkpoints(client, tasks, coord, ordered) -> list:
    """Results of ``tasks`` as they finish; every finished partition (in partition order when ``ordered``) is
    appended to the file's next checkpoint."""
    from distributed import as_completed

    futures = client.compute(tasks)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list = [None] * len(futures)
    next_in_order = 0
    try:
        for fut in as_completed(futures, loop=client.loop):
            i = index[fut.key]
            results[i] = fut.result()
            if not ordered:
                coord.add_durable(results[i], f"partition {i}")
                continue
            while next_in_order < len(results) and results[next_in_order] is not None:
                coord.add_durable(results[next_in_order], f"partition {next_in_order}")
                next_in_order += 1
    except BaseException:
        client.cancel(futures)
        raise
    return results

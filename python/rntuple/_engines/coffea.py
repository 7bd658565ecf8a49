"""coffea's NanoEvents read through rntuple (public as :mod:`rntuple.coffea`, whose documentation shows its
use): an RNTuple as the column source of ``NanoEventsFactory.from_preloaded``."""

from __future__ import annotations

import os
import uuid

from .._reading.file import File
from .._reading.ntuple import RNTuple


class ArraySource(dict):
    """Field name -> awkward array, with the ``metadata`` (``uuid``, ``num_rows``, ``object_path``) coffea's
    ``from_preloaded`` asks of a column source."""

    def __init__(self, columns: dict, source_uuid: str, num_rows: int, object_path: str):
        super().__init__(columns)
        self.uuid = source_uuid
        self.metadata = {"uuid": source_uuid, "num_rows": num_rows, "object_path": object_path}


def _ntuple(source, name) -> RNTuple:
    if isinstance(source, RNTuple):
        return source
    f = File(source)
    if name is None:
        names = f.ntuple_names()
        if len(names) != 1:
            raise ValueError(f"{f.file_path} holds {len(names)} RNTuples ({', '.join(names) or 'none'}): name one")
        name = names[0]
    return f[name]


def array_source(source, ntuple: str | None = None, *, entry_start: int | None = None, entry_stop: int | None = None,
                 virtual: bool = True, access_log=None, filter_name=None) -> ArraySource:
    """The top-level fields of an RNTuple for entries ``entry_start:entry_stop`` as a column source for coffea's
    ``NanoEventsFactory.from_preloaded``. ``source``: a path or URL (as :func:`rntuple.open`) or an
    :class:`RNTuple`; ``ntuple``: its name (needed when the file holds several). ``virtual=True``: each field is read
    when first touched (``access_log``, a list, records what was read); ``False``: everything is read now.
    ``filter_name`` keeps some fields only (a glob, a ``/regex/``, a list...).

    >>> source = array_source("nano.root", "Events", filter_name=["nMuon", "Muon_*"])
    """
    t = _ntuple(source, ntuple)
    start, stop = t._range(entry_start, entry_stop)
    if virtual:
        arrays = t.arrays(filter_name=filter_name, entry_start=start, entry_stop=stop, virtual=True, access_log=access_log)
    else:
        if access_log is not None:
            raise ValueError("access_log records the reads of virtual arrays: use virtual=True")
        arrays = t.arrays(filter_name=filter_name, entry_start=start, entry_stop=stop)
    where = os.path.abspath(t._path) if os.path.exists(t._path) else t._path
    key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"rntuple:{where}:{t.name}:{start}-{stop}"))
    return ArraySource({name: arrays[name] for name in arrays.fields}, key, stop - start, t.name)


def nanoevents(source, ntuple: str | None = None, *, mode: str = "virtual", schemaclass=None, entry_start: int | None = None,
               entry_stop: int | None = None, metadata: dict | None = None, access_log=None, filter_name=None):
    """coffea NanoEvents of an RNTuple read by rntuple: ``NanoEventsFactory.from_preloaded(array_source(...),
    schemaclass=...).events()``. ``mode``: ``"virtual"`` (fields read when touched) or ``"eager"`` (all read
    now); ``schemaclass`` defaults to coffea's ``NanoAODSchema``.

    >>> events = nanoevents("nano.root", "Events", mode="eager", entry_stop=10_000)
    """
    if mode not in ("virtual", "eager"):
        raise ValueError(f"mode is 'virtual' or 'eager', not {mode!r} (for dask, use rntuple.dask)")
    try:
        from coffea.nanoevents import NanoAODSchema, NanoEventsFactory
    except ImportError as e:
        raise ImportError("rntuple.coffea needs coffea: pip install coffea") from e
    src = array_source(source, ntuple, entry_start=entry_start, entry_stop=entry_stop, virtual=mode == "virtual",
                       access_log=access_log, filter_name=filter_name)
    schemaclass = schemaclass or NanoAODSchema
    if mode == "eager":
        return NanoEventsFactory.from_preloaded(src, schemaclass=schemaclass, metadata=metadata).events()
    # from_preloaded builds eager events, which would touch every field; the same steps with a mapping in coffea's
    # virtual mode leave each field to be read when used (coffea 2026.9's from_preloaded, with mode="virtual").
    from coffea.nanoevents.mapping.base import BaseSourceMapping
    from coffea.nanoevents.mapping.preloaded import PreloadedOpener, PreloadedSourceMapping

    class VirtualSourceMapping(PreloadedSourceMapping):
        def __init__(self, opener, start, stop):
            BaseSourceMapping.__init__(self, opener, start, stop, virtual=True)

    meta = src.metadata
    mapping = VirtualSourceMapping(PreloadedOpener({meta["uuid"]: src}), 0, meta["num_rows"])
    mapping.preload_column_source(meta["uuid"], meta["object_path"], src)
    base_form = mapping._extract_base_form(src)
    key = (meta["uuid"], meta["object_path"], f"0-{meta['num_rows']}")
    return NanoEventsFactory._from_mapping(mapping, key, base_form, schemaclass, metadata, mode="virtual").events()

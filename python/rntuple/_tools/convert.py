"""``rntuple.convert``: Parquet and Arrow IPC files to and from RNTuple (in the Rust core), TTrees into RNTuple
(through uproot, :mod:`rntuple._tools.convert_tree`). The format of each side is chosen by its extension: ``.parquet``,
``.arrow`` / ``.feather`` (the Arrow IPC file format), ``.root``."""

from __future__ import annotations

import os

_PARQUET = (".parquet", ".parq", ".pq")
_ARROW = (".arrow", ".feather", ".ipc")


def _format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext in _PARQUET:
        return "parquet"
    if ext in _ARROW:
        return "arrow"
    if ext == ".root":
        return "root"
    raise ValueError(f"'{path}': unknown file format (extension '{ext}'); convert knows .parquet, .arrow/.feather "
                     "(Arrow IPC) and .root")


def _rntuples(path: str) -> list[str]:
    from .._reading.file import open as open_file

    with open_file(path) as f:
        return f.ntuple_names()


def convert(input, output, ntuple: str | None = None, tree: str | None = None, compression: int = 505,
            progress: bool | None = None, same_page_merging: bool = True) -> dict:
    """Converts ``input`` into ``output``, formats by extension:

    * ``.parquet`` or ``.arrow``/``.feather`` -> ``.root``: an RNTuple ``ntuple`` (default ``Events``), one cluster
      per Parquet row group or IPC record batch; Arrow types become ROOT types (integers ``std::(u)intN_t``,
      ``float``/``double``, ``std::string``, lists ``std::vector``, structs untyped records), ``std::optional``
      where the data hold nulls;
    * ``.root`` -> ``.parquet`` or ``.arrow``/``.feather``: the RNTuple ``ntuple`` (the only one when None), one row
      group or record batch per cluster;
    * ``.root`` -> ``.root`` with a TTree (``tree=``, or a file holding no RNTuple): the TTree through uproot into an
      RNTuple laid out as ROOT's RNTupleImporter does (NanoAOD's ``nX`` + ``X_*`` branches as an untyped
      collection ``_collectionN``, with the projected fields ``X_*`` and ``nX`` over it; see :mod:`rntuple._tools.convert_tree`).

    Streams batch by batch in bounded memory. ``compression`` is ROOT's setting (505: zstd level 5); Parquet and
    Arrow outputs use the nearest codec they have. ``progress``: a tqdm bar on stderr (None: when it is a terminal).
    ``same_page_merging`` (a ``.root`` output): a page equal to an earlier page of its cluster is stored once, as ROOT
    6.40 does by default. Returns a dict: entries, clusters (Parquet/Arrow), or for a TTree: tree, ntuple, entries, fields, collections.

    >>> rntuple.convert("events.parquet", "events.root")  # doctest: +SKIP
    {'entries': 1000000, 'clusters': 1}
    >>> rntuple.convert("nano.root", "nano_rntuple.root", tree="Events")["collections"]  # doctest: +SKIP
    {'nElectron': '_collection0', 'nMuon': '_collection1'}
    """
    src, dst = os.fspath(input), os.fspath(output)
    fin, fout = _format(src), _format(dst)
    if tree is not None or fin == fout == "root":
        if fin != "root" or fout != "root":
            raise ValueError(f"a TTree converts into an RNTuple in a .root file; {src} -> {dst} is not .root -> .root")
        if tree is None:
            held = _rntuples(src)
            if held:
                raise ValueError(f"{src} holds the RNTuple(s) {', '.join(held)}: copy an RNTuple with rntuple.skim or "
                                 "rntuple.merge; convert a TTree of the file with tree=")
        from .convert_tree import convert_tree

        return convert_tree(src, dst, tree=tree, ntuple=ntuple, compression=compression, progress=progress,
                            same_page_merging=same_page_merging)
    from .._rntuple import convert_files
    from .convert_tree import progress_bar

    bar = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = progress_bar(total, progress)
        bar.update(done - getattr(bar, "n", done))

    try:
        return dict(convert_files(src, dst, ntuple, compression, update if progress is not False else None, same_page_merging))
    finally:
        if bar is not None:
            bar.close()

"""``rntuple.merge``: RNTuples of one schema from several files into one new file, by copying compressed pages."""

from __future__ import annotations

from ._file import open
from ._options import compression_setting
from ._rntuple import default_write_options
from ._rntuple import merge as _merge

# The default compression of merge and skim: the write options' default (ROOT's).
_DEFAULT_COMPRESSION = default_write_options()["compression"]


def merge(output, inputs, ntuple=None, compression=_DEFAULT_COMPRESSION, mode="strict") -> dict:
    """Merges the RNTuple ``ntuple`` of every file in ``inputs`` (all of one schema) into the new file ``output`` by
    copying their compressed pages: nothing is decompressed, each input cluster becomes an output cluster, in order.
    ``ntuple`` may be omitted when the first input holds exactly one RNTuple. ``compression`` applies to the output's
    metadata (pages keep theirs). ``mode="filter"`` (ROOT's ``rntuple.MergingMode=Filter``): the output has the first
    input's fields, found by name in the others, which may order them differently and have more (dropped); the
    default ``"strict"`` wants the same schema everywhere. Returns a dict: entries, clusters, pages, page_bytes,
    file_bytes.

    >>> rntuple.merge("all.root", ["part1.root", "part2.root"], "Events")  # doctest: +SKIP
    {'entries': 2000, 'clusters': 2, 'pages': 8, 'page_bytes': 10520, 'file_bytes': 12034}
    """
    inputs = [str(p) for p in inputs]
    if not inputs:
        raise ValueError("merge: no input files")
    if isinstance(compression, str):
        compression = compression_setting(compression)
    ntuple = _only_ntuple(inputs[0], ntuple, "merge")
    return _merge(str(output), inputs, ntuple, compression, mode)


def _only_ntuple(path, ntuple, what):
    if ntuple is not None:
        return ntuple
    with open(path) as f:
        names = f.ntuple_names()
    if len(names) != 1:
        raise ValueError(f"{what}: {path} holds {len(names)} RNTuples ({', '.join(names)}); pass ntuple=")
    return names[0]

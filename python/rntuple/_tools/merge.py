"""``rntuple.merge``: the RNTuple of several files into one new file, as ROOT's ``hadd`` merges it: by copying
compressed pages, recompressing or re-clustering them when asked, with strict, filter or union schemas."""

from __future__ import annotations

from .._reading.file import open
from .._rntuple import merge as _merge
from .._writing.options import compression_setting


def merge(
    output,
    inputs,
    ntuple=None,
    compression=None,
    mode="strict",
    cluster_size=None,
    threads=0,
    ignore_other_objects=False,
) -> dict:
    """Merges the RNTuple ``ntuple`` of every file in ``inputs`` into the new file ``output`` by copying their
    compressed pages: each input cluster becomes an output cluster, in order, on ``threads`` threads (0: one per
    core). ``ntuple`` may be omitted when the first input holds exactly one RNTuple.

    ``compression`` (an int such as 505 or a name such as ``"lz4"``) recompresses the pages stored otherwise (pages
    already so compressed are copied as they are) and compresses the metadata; ``None`` keeps every page's
    compression (metadata 505). ``cluster_size`` (bytes) re-clusters: the entries are decoded and refilled through
    the writer, clusters cut at that many uncompressed bytes.

    ``mode`` (ROOT's ``rntuple.MergingMode``): ``"strict"`` wants the same schema everywhere; ``"filter"`` keeps the
    first input's fields, found by name in the others (which may order them differently and have more, dropped);
    ``"union"`` keeps every input's fields: a field missing from the inputs before is added by late model extension,
    and a field an input lacks reads as its default value (0, empty, false) in that input's entries, as ROOT's union
    merge writes them. A field of one name with another type is an error naming the file and the field.

    Attribute sets (ROOT 6.38+) are merged by name, their ranges moved to where the entries went. An input holding
    other objects beside the RNTuple (a TTree, a histogram, another RNTuple) is refused unless
    ``ignore_other_objects=True`` (they are then left out). Returns a dict: entries, clusters, pages, page_bytes,
    file_bytes, zero_pages, recompressed_pages, attribute_sets.

    >>> rntuple.merge("all.root", ["part1.root", "part2.root"], "Events", mode="union")  # doctest: +SKIP
    {'entries': 2000, 'clusters': 2, 'pages': 8, 'page_bytes': 10520, 'file_bytes': 12034, 'zero_pages': 1, ...}
    """
    inputs = [str(p) for p in inputs]
    if not inputs:
        raise ValueError("merge: no input files")
    if isinstance(compression, str):
        compression = compression_setting(compression)
    ntuple = _only_ntuple(inputs[0], ntuple, "merge")
    return _merge(str(output), inputs, ntuple, compression, mode, cluster_size, int(threads), bool(ignore_other_objects))


def _only_ntuple(path, ntuple, what):
    if ntuple is not None:
        return ntuple
    with open(path) as f:
        names = f.ntuple_names()
    if len(names) != 1:
        raise ValueError(f"{what}: {path} holds {len(names)} RNTuples ({', '.join(names)}); pass ntuple=")
    return names[0]

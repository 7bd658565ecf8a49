"""Read and write ROOT RNTuple files: awkward arrays and pyarrow tables in and out, parallel writing.

Reading::

    import rntuple
    with rntuple.open("events.root") as f:
        events = f["Events"]
        print(events.num_entries, events.schema)
        muons = events.arrays(["nMuon", "Muon_pt"])      # awkward.Array, laid out as uproot does
        pt = events["Muon_pt"].array(entry_stop=100)      # one field, TTree-style
        table = events.to_arrow(["Muon_pt"])              # pyarrow.Table
        for chunk in events.iterate(step_size="100 MB"):  # awkward arrays of ~100 MB each
            ...
    # many files as one dataset
    for chunk in rntuple.iterate("skims/*.root:Events", fields=["Muon_pt"]):
        ...
    muons = rntuple.concatenate(["a.root", "b.root"], fields=["Muon_pt"], ntuple="Events")

Writing::

    rntuple.write("skim.root", "Events", muons)                     # schema inferred from the data
    with rntuple.Writer("out.root", "Events", {"x": "float"}) as w:
        w.extend({"x": numpy.arange(10, dtype="float32")})
    with rntuple.ParallelWriter("out.root", "Events", {"x": "float"}) as w:
        ...  # each thread: with w.fill_context() as ctx: ctx.extend(chunk)
    with rntuple.FileWriter("out.root") as fw:                      # several RNTuples in one file
        events, runs = fw.parallel_writer("Events", {"x": "float"}), fw.writer("Runs", {"run": "std::uint32_t"})

Errors from the library raise :class:`RNTupleError` with its message (what is wrong and where), or rather one
of its subclasses by kind: :class:`NotFoundError` (also a ``KeyError``: a missing RNTuple or field),
:class:`CorruptFileError` (damaged bytes, checksum mismatches), :class:`UnsupportedError`,
:class:`InvalidArgumentError` (also a ``ValueError``: a value that does not fit its field, bad options),
:class:`InternalError` (a bug) and :class:`RNTupleIOError` (also an ``OSError``).
"""

from ._attributes import AttributeSet, AttributeSetWriter
from ._classes import Class, Enum
from ._convert_files import convert as convert
from ._dask import dask as dask
from ._dask import to_rntuple as to_rntuple
from ._dataset import concatenate, iterate
from ._file_writer import FileWriter
from ._reading import Field, File, RNTuple, open, parse_size
from ._rntuple import (
    CorruptFileError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    RNTupleError,
    RNTupleIOError,
    UnsupportedError,
    default_write_options,
    normalize_type,
)
from ._rntuple import merge as _merge
from ._skim import skim
from ._writing import FillContext, ParallelWriter, Writer, infer_schema, root_type_of_arrow, root_type_of_form, write

__version__ = "0.1.0"

__all__ = [
    "AttributeSet",
    "AttributeSetWriter",
    "Class",
    "CorruptFileError",
    "Enum",
    "Field",
    "File",
    "FileWriter",
    "FillContext",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "ParallelWriter",
    "RNTuple",
    "RNTupleError",
    "RNTupleIOError",
    "UnsupportedError",
    "Writer",
    "concatenate",
    "dask",
    "default_write_options",
    "infer_schema",
    "iterate",
    "merge",
    "normalize_type",
    "open",
    "parse_size",
    "root_type_of_arrow",
    "root_type_of_form",
    "skim",
    "to_rntuple",
    "write",
]

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
        from ._writing import compression_setting

        compression = compression_setting(compression)
    ntuple = _only_ntuple(inputs[0], ntuple, "merge")
    return _merge(str(output), inputs, ntuple, compression, mode)


def _only_ntuple(path, ntuple, what):
    if ntuple is not None:
        return ntuple
    with open(path) as f:
        names = f.keys()
    if len(names) != 1:
        raise ValueError(f"{what}: {path} holds {len(names)} RNTuples ({', '.join(names)}); pass ntuple=")
    return names[0]

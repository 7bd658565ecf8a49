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
    events = rntuple.chain("skims/*.root", ntuple="Events")            # one dataset, global entry numbers
    j = rntuple.join("events.root:Events", ("corr", "corr.root"), on=["run", "event"])   # j.arrays(["corr.w"])

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

from ._classes import Class, Enum
from ._compound import Array, Optional, Tuple, Variant
from ._datasets.chain import Chain, chain
from ._datasets.dataset import concatenate, iterate
from ._datasets.join import Join, join
from ._engines.dask import dask as dask
from ._engines.dask import to_rntuple as to_rntuple
from ._reading.attributes import AttributeSet
from ._reading.chunks import parse_size
from ._reading.expressions import NameConflictWarning
from ._reading.field import Field
from ._reading.file import File, open
from ._reading.ntuple import RNTuple
from ._rntuple import (
    CorruptFileError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    RNTupleError,
    RNTupleIOError,
    UnsupportedError,
    default_write_options,
    memory_limit,
    normalize_type,
    remote_options,
    set_memory_limit,
    set_remote_options,
)
from ._rntuple import __version__ as __version__  # the workspace's: as `rntuple --version`, rntuple_version()
from ._tools.convert import convert as convert
from ._tools.merge import merge
from ._tools.skim import skim
from ._writing.attributes import AttributeSetWriter
from ._writing.data import infer_schema
from ._writing.file_writer import FileWriter
from ._writing.schema import root_type_of_arrow, root_type_of_form
from ._writing.writers import FillContext, ParallelWriter, Writer, write

#: uproot's name for a missing key (here: a missing RNTuple or field), so that ``except uproot.KeyInFileError``
#: in a script moved to ``import rntuple as uproot`` keeps working.
KeyInFileError = NotFoundError


__all__ = [
    "Array",
    "AttributeSet",
    "AttributeSetWriter",
    "Chain",
    "Class",
    "CorruptFileError",
    "Enum",
    "Field",
    "File",
    "FileWriter",
    "FillContext",
    "InternalError",
    "InvalidArgumentError",
    "Join",
    "KeyInFileError",
    "NameConflictWarning",
    "NotFoundError",
    "Optional",
    "ParallelWriter",
    "RNTuple",
    "RNTupleError",
    "RNTupleIOError",
    "Tuple",
    "UnsupportedError",
    "Variant",
    "Writer",
    "chain",
    "concatenate",
    "dask",
    "default_write_options",
    "infer_schema",
    "iterate",
    "join",
    "memory_limit",
    "merge",
    "normalize_type",
    "open",
    "parse_size",
    "remote_options",
    "root_type_of_arrow",
    "root_type_of_form",
    "set_memory_limit",
    "set_remote_options",
    "skim",
    "to_rntuple",
    "write",
]

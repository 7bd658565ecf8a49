"""Distributed writing: the ranks of an MPI job (mpi4py) write one RNTuple into one file.

Every rank fills and compresses its own clusters (as a :class:`rntuple.FillContext` of the parallel
writer does); only where a cluster goes in the shared file is coordinated, by the strategy (the paper
"Aggregating Columnar Data on Cluster File Systems"):

==================  ==============================================================================
``send-data``       ranks send whole clusters to an aggregator thread on rank 0, which writes them
``metadata``        ranks send a cluster's size to the aggregator, which reserves its byte range;
                    the rank writes the cluster itself (the default, the paper's best)
``one-sided``       a global offset in an MPI window on rank 0 (``MPI_Fetch_and_op``), no aggregator
``file-lock``       the global offset in a side file under an ``fcntl`` lock (any POSIX file system)
``separate-files``  each rank its own file ``PATH.r<rank>`` (the baseline; merge them afterwards)
==================  ==============================================================================

>>> from mpi4py import MPI
>>> import rntuple.mpi
>>> with rntuple.mpi.Writer("out.root", "Events", {"eventId": "std::uint64_t", "pt": "std::vector<float>"}) as w:
...     w.extend({"eventId": ids_of_this_rank, "pt": pts_of_this_rank})

Run it with ``mpirun -np 4 python script.py``. Creating the writer and committing it (the end of the
``with`` block) are collective: every rank takes part, with the same path, name, schema and options (ranks
that disagree are refused, on every rank). Without a schema, it is inferred from each rank's first data, and
the first :meth:`Writer.extend` (or :meth:`Writer.commit`) is then the collective creation. An exception
inside the ``with`` block aborts the whole job (``MPI_Abort``) naming the failing rank: a half-written file
never looks complete (it has a temporary name until the commit).

Options: ``alignment`` (clusters start at multiples of it, 4096 by default; 1 MiB for a Lustre stripe),
``direct_io`` (``O_DIRECT``), ``write_block`` (largest single write, 4 MiB), and the write options of
:class:`rntuple.Writer` (``compression=505``, cluster and page sizes, ...).
"""

from ._writing.mpi import STRATEGIES, Writer

__all__ = ["Writer", "STRATEGIES"]

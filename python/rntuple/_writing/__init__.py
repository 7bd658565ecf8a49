"""Writing: ``rntuple.write``, :class:`Writer`, :class:`ParallelWriter`, :class:`FileWriter`, the MPI writer
(``mpi``, public as ``rntuple.mpi``), attribute-set writers, the writers' input data, schemas (inferred and
normalized) and the casting rule, write options.

Layers, lowest first: ``_compat`` < ``_reading`` < ``_datasets`` < ``_tools`` < ``_engines``; ``_writing`` beside
``_compat`` and ``_reading``, below ``_tools``. This subpackage uses the extension module (``rntuple._rntuple``)
and the type forms ``rntuple._classes`` and ``rntuple._compound`` (root modules: the extension recognizes their
classes by module path), never ``_compat``, ``_reading`` or anything above.
"""

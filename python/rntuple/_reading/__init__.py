"""Reading: ``rntuple.open`` -> :class:`File` -> :class:`RNTuple` (and :class:`Field`): the field tree, awkward
layouts from the native reader's Arrow batches, expressions, cuts (the core's selection language), schema
evolution, virtual arrays, read-ahead, step sizes and progress bars, attribute sets.

Layers, lowest first: ``_compat`` < ``_reading`` < ``_datasets`` < ``_tools`` < ``_engines``; ``_writing`` beside
``_compat`` and ``_reading``, below ``_tools``. This subpackage uses ``_compat`` and the extension module
(``rntuple._rntuple``), never ``_writing`` or anything above it.
"""

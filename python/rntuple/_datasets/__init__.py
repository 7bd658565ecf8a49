"""Many RNTuples as one dataset: ``rntuple.iterate`` and ``rntuple.concatenate`` over files and globs
(``dataset``), :class:`Chain` (``chain``) and :class:`Join` (``join``), read by the compiled core.

Layers, lowest first: ``_compat`` < ``_reading`` < ``_datasets`` < ``_tools`` < ``_engines``; ``_writing`` beside
``_compat`` and ``_reading``, below ``_tools``. This subpackage uses ``_reading``, ``_compat`` and the extension
module (``rntuple._rntuple``), never ``_writing`` or anything above it.
"""

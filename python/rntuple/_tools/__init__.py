"""Operations from files to files: ``rntuple.skim``, ``rntuple.merge``, ``rntuple.convert`` (Parquet, Arrow IPC,
TTrees through uproot: ``convert_tree``).

Layers, lowest first: ``_compat`` < ``_reading`` < ``_datasets`` < ``_tools`` < ``_engines``; ``_writing`` beside
``_compat`` and ``_reading``, below ``_tools``. This subpackage uses ``_reading``, ``_datasets``, ``_writing`` and
the extension module (``rntuple._rntuple``), never ``_engines``.
"""

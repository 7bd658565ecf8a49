"""uproot's interfaces, as the readers present them (``import rntuple as uproot``): name filters and ``library=``
conversions (``api``), the model-level API an :class:`rntuple.RNTuple` inherits (``model``), uproot's descriptor
records (``descriptors``) and byte ranges of an open file (``byte_source``).

Layers, lowest first: ``_compat`` < ``_reading`` < ``_datasets`` < ``_tools`` < ``_engines``; ``_writing`` beside
``_compat`` and ``_reading``, below ``_tools``. This subpackage is the lowest: it uses only the extension module
(``rntuple._rntuple``). No module of the package imports the package root.
"""

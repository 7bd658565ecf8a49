"""Frameworks that run computations over RNTuples: dask (``rntuple.dask``, ``rntuple.to_rntuple``: ``dask``),
coffea's NanoEvents (``coffea``, public as ``rntuple.coffea``), the Spark data source (``spark``, public as
``rntuple.spark``), and the distributed write over TCP that Dask and Spark share (``distributed``: a coordinator in
the committing process hands out byte ranges of ONE file, the tasks write their clusters there). Each framework
is imported when its functions are called, not with the package.

Layers, lowest first: ``_compat`` < ``_reading`` < ``_datasets`` < ``_tools`` < ``_engines``; ``_writing`` beside
``_compat`` and ``_reading``, below ``_tools``. This subpackage is the highest: it may use every other one and the
extension module (``rntuple._rntuple``); nothing in the package imports it but the root and ``rntuple.coffea``.
"""

"""Apache Spark 4: RNTuples as a Spark data source (pyspark's Python Data Source API).

>>> from rntuple.spark import RNTupleDataSource
>>> spark.dataSource.register(RNTupleDataSource)
>>> events = spark.read.format("rntuple").option("ntuple", "Events").load("nano/*.root")
>>> events.where("nMuon >= 2").write.format("rntuple").option("ntuple", "Events").mode("overwrite").save("skim.root")

Partitions are ranges of whole clusters (from the footers only), batches cross into Spark as Arrow, nested fields
are Spark structs, arrays and maps; the options (``fields``, ``where``, ``pushFilters``, ``clusters_per_partition``,
``uint64``, ...) are described in :mod:`rntuple._engines.spark`. pyspark is not a dependency of rntuple: install it
to use this module (``pip install pyspark``; Spark needs Java 17 or later).
"""

from ._engines.spark import READ_LOG, RNTupleDataSource

__all__ = ["RNTupleDataSource", "READ_LOG"]

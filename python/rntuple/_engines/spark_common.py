"""What the Spark data source's reading and writing share: pyspark's names (imported once, with the message saying
what to install when pyspark is missing) and the options' values (Spark hands every option over as a string)."""

from __future__ import annotations

try:
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, DataSourceReader, InputPartition, WriterCommitMessage
    from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
    from pyspark.sql.types import (
        ArrayType,
        BooleanType,
        ByteType,
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        MapType,
        ShortType,
        StringType,
        StructField,
        StructType,
    )
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(f"rntuple.spark needs pyspark 4 (pip install 'pyspark>=4'), with its Python Data Source API: {e}") from None

__all__ = [
    "ArrayType", "BooleanType", "ByteType", "DataSource", "DataSourceArrowWriter", "DataSourceReader", "DecimalType", "DoubleType",
    "FloatType", "InputPartition", "IntegerType", "LongType", "MapType", "ShortType", "StringType", "StructField", "StructType",
    "WriterCommitMessage", "flag", "to_arrow_schema", "to_arrow_type",
]


def flag(options, key: str, default: bool = False) -> bool:
    """The boolean option ``key`` (``true``/``false``, ``1``/``0``, ``yes``/``no``; ``default`` when not given)."""
    v = options.get(key)
    if v is None:
        return default
    s = str(v).strip().lower()
    if s not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError(f"rntuple data source: option {key!r} is 'true' or 'false', not {v!r}")
    return s in ("true", "1", "yes")

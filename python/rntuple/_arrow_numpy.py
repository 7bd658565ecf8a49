"""The numpy dtype of a fixed-width Arrow type, without pandas: pyarrow's ``DataType.to_pandas_dtype()`` imports
pandas in some releases (pyarrow 21, the last for Python 3.9, does), which the package does not depend on."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_DTYPES = {
    pa.bool_(): np.dtype(np.bool_),
    pa.int8(): np.dtype(np.int8),
    pa.int16(): np.dtype(np.int16),
    pa.int32(): np.dtype(np.int32),
    pa.int64(): np.dtype(np.int64),
    pa.uint8(): np.dtype(np.uint8),
    pa.uint16(): np.dtype(np.uint16),
    pa.uint32(): np.dtype(np.uint32),
    pa.uint64(): np.dtype(np.uint64),
    pa.float16(): np.dtype(np.float16),
    pa.float32(): np.dtype(np.float32),
    pa.float64(): np.dtype(np.float64),
}


def numpy_dtype(t: pa.DataType) -> np.dtype:
    """``np.dtype`` of the Arrow boolean, integer or floating-point type ``t``; TypeError for any other type.

    >>> numpy_dtype(pa.uint16())
    dtype('uint16')
    """
    try:
        return _DTYPES[t]
    except KeyError:
        raise TypeError(f"no numpy dtype for the Arrow type {t}") from None

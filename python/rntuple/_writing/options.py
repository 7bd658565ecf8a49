"""Write options as keyword arguments: their names (the library's table) and ROOT's compression settings by
name (``"zstd"``, ``"lz4:4"``, uproot's compression objects)."""

from __future__ import annotations

import numpy as np

from .. import _rntuple

# ROOT's algorithm numbers and default levels (RCompressionSetting: kDefaultZLIB = 101, kDefaultLZMA = 207,
# kDefaultLZ4 = 404, kDefaultZSTD = 505).
_ALGORITHMS = {"zlib": 1, "lzma": 2, "lz4": 4, "zstd": 5}
_DEFAULT_LEVELS = {1: 1, 2: 7, 4: 4, 5: 5}


def compression_setting(compression) -> int:
    """ROOT's compression setting (algorithm * 100 + level) for ``compression``: an int as it is (``505``); a
    name (``"zstd"``, ``"lz4"``, ``"zlib"``, ``"lzma"``, case-insensitive) at ROOT's default level (505, 404, 101,
    207); ``"zstd:7"`` or ``("zstd", 7)`` at a level (1-9); ``None``, ``"none"`` or 0 for none; or an uproot
    compression object (``uproot.ZSTD(5)``)."""
    if compression is None:
        return 0
    if isinstance(compression, bool):
        raise TypeError("compression must be an int such as 505, a name such as 'zstd', or None; got a bool")
    if isinstance(compression, (int, np.integer)):
        return int(compression)
    level = None
    if isinstance(compression, tuple) and len(compression) == 2:
        name, level = compression
    elif isinstance(compression, str):
        name, _, lv = compression.replace("-", ":").partition(":")
        level = int(lv) if lv.strip() else None
    elif hasattr(compression, "level") and type(compression).__name__.lower() in _ALGORITHMS:
        name, level = type(compression).__name__, compression.level
    else:
        raise TypeError(
            f"compression must be an int (algorithm * 100 + level, e.g. 505), a name ('zstd', 'lz4', "
            f"'zlib', 'lzma', 'none', or 'zstd:7'), or None; got {compression!r}"
        )
    name = str(name).strip().lower()
    if name in ("none", "uncompressed", ""):
        return 0
    algo = _ALGORITHMS.get(name)
    if algo is None:
        raise ValueError(f"unknown compression {name!r}: use 'zstd', 'lz4', 'zlib', 'lzma' or 'none' (ROOT's algorithms), or an int such as 505")
    level = _DEFAULT_LEVELS[algo] if level is None else int(level)
    if not 0 <= level <= 9:
        raise ValueError(f"compression level {level} of {name!r} is not within 0..9")
    return algo * 100 + level


def _options(options: dict) -> dict:
    known = set(_rntuple.WRITE_OPTION_NAMES) | {"columns", "projections"}
    unknown = [k for k in options if k not in known]
    if unknown:
        raise TypeError(f"unknown write option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    if "compression" in options and not isinstance(options["compression"], int):
        options = {**options, "compression": compression_setting(options["compression"])}
    return options

"""Byte ranges of an open file as uproot hands them out: ``File.source.chunk(start, stop)`` and
``.chunks(ranges, notifications)`` give :class:`Chunk` objects with uproot's interface (``raw_data``,
``get``, ``remainder``, ``start``, ``stop``...). The bytes are read when asked for, by the native file."""

from __future__ import annotations

import numpy

from .._rntuple import InvalidArgumentError


class Chunk:
    """Bytes ``start..stop`` of a :class:`Source` (uproot's ``Chunk``), already read. ``raw_data`` is a
    read-only ``numpy.uint8`` array; ``get`` and ``remainder`` take positions in the file's coordinates."""

    def __init__(self, source: Source | None, start: int, stop: int, data: bytes):
        self._source, self._start, self._stop = source, start, stop
        self._raw_data = numpy.frombuffer(data, dtype=numpy.uint8)

    @property
    def source(self) -> Source | None:
        """The source the bytes came from (None for bytes decompressed from it)."""
        return self._source

    @property
    def start(self) -> int:
        """Position of the first byte."""
        return self._start

    @property
    def stop(self) -> int:
        """Position one past the last byte."""
        return self._stop

    @property
    def raw_data(self) -> numpy.ndarray:
        """The bytes, as a ``numpy.uint8`` array."""
        return self._raw_data

    @property
    def future(self) -> None:
        """None: the chunk is filled when made."""
        return None

    @property
    def is_memmap(self) -> bool:
        """False: the bytes are a copy, valid after the file is closed."""
        return False

    def detach_memmap(self) -> Chunk:
        """The chunk itself (its bytes are no memory map)."""
        return self

    def wait(self, insist=True) -> None:
        """Nothing to wait for: the bytes were read when the chunk was made."""

    def __contains__(self, range_) -> bool:
        start, stop = range_
        return self._start <= getattr(start, "index", start) and getattr(stop, "index", stop) <= self._stop

    def get(self, start: int, stop: int, cursor=None, context=None) -> numpy.ndarray:
        """The bytes ``start..stop`` (file positions, within the chunk's)."""
        if not (self._start <= start <= stop <= self._stop):
            raise InvalidArgumentError(f"bytes {start}:{stop} are outside this chunk's {self._start}:{self._stop}")
        return self._raw_data[start - self._start : stop - self._start]

    def remainder(self, start: int, cursor=None, context=None) -> numpy.ndarray:
        """The bytes from ``start`` (a file position within the chunk's) to the chunk's end."""
        if not (self._start <= start <= self._stop):
            raise InvalidArgumentError(f"byte {start} is outside this chunk's {self._start}:{self._stop}")
        return self._raw_data[start - self._start :]

    def __repr__(self) -> str:
        return f"<Chunk {self._start}-{self._stop}>"


class Source:
    """The bytes of an open :class:`rntuple.File` by range (uproot's ``Source``): ``chunk`` and ``chunks``
    read them through the file's own reader (local file, URL or file object), with its request counts."""

    def __init__(self, file):
        self._file = file

    @property
    def file_path(self) -> str:
        """The path the file was opened with."""
        return self._file.file_path

    @property
    def num_bytes(self) -> int:
        """The file's length in bytes."""
        return self._file._native.num_bytes()

    @property
    def num_requests(self) -> int:
        """Read requests the file's source served so far (:meth:`rntuple.File.io_stats`)."""
        return self._file.io_stats()["requests"]

    @property
    def num_requested_bytes(self) -> int:
        """Bytes the file's source returned so far."""
        return self._file.io_stats()["bytes"]

    def chunk(self, start: int, stop: int) -> Chunk:
        """Bytes ``start..stop`` of the file; a range past its end raises :class:`rntuple.CorruptFileError`."""
        if not 0 <= start <= stop:
            raise InvalidArgumentError(f"byte range {start}:{stop} is not a range of the file")
        return Chunk(self, start, stop, self._file._native.read_range(start, stop))

    def chunks(self, ranges, notifications) -> list[Chunk]:
        """:meth:`chunk` of each ``(start, stop)`` in ``ranges``, each also put on the queue
        ``notifications`` (as uproot announces filled chunks); read before returning."""
        out = []
        for start, stop in ranges:
            c = self.chunk(start, stop)
            notifications.put(c)
            out.append(c)
        return out

    @property
    def closed(self) -> bool:
        """Whether the file was closed."""
        return self._file.closed

    def __repr__(self) -> str:
        return f"<rntuple Source {self.file_path!r}>"

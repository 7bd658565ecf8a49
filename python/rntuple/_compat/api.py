"""What makes an uproot 5 script run with ``import rntuple as uproot``: name filters (the field tree of
``keys``/``typenames``/``show`` is ``rntuple._reading.fields``'), projections of nested fields, ``library="np"|"pd"``, ``Report``, and the hints of
errors (a TTree's name, a file that is not a ROOT file)."""

from __future__ import annotations

import fnmatch
import os
import re
import struct
import sys
from collections.abc import Iterable

import awkward as ak
import numpy as np

# ----- filters (uproot._util.regularize_filter) -------------------------------------------------------------

_REGEX = re.compile(r"^/(.*)/([iLmsux]*)$")
_FLAGS = {"i": re.IGNORECASE, "L": re.LOCALE, "m": re.MULTILINE, "s": re.DOTALL, "u": re.UNICODE, "x": re.VERBOSE}


def no_filter(_):
    return True


def regularize_filter(f):
    """None, a callable, a glob (``"Muon_*"``), a regex (``"/^Muon_(pt|eta)$/i"``), a plain name, or an
    iterable of those -> a callable name -> bool (uproot's rules)."""
    if f is None or f is no_filter:
        return no_filter
    if callable(f):
        return f
    if isinstance(f, str):
        m = _REGEX.match(f)
        if m is not None:
            flags = 0
            for c in m.group(2):
                flags |= _FLAGS[c]
            matcher = re.compile(m.group(1), flags)
            return lambda x: matcher.match(x) is not None
        if any(c in f for c in "*?["):
            return lambda x: fnmatch.fnmatchcase(x, f)
        return lambda x: x == f
    if isinstance(f, Iterable) and not isinstance(f, bytes):
        fs = [regularize_filter(x) for x in f]
        return lambda x: any(g(x) for g in fs)
    raise TypeError(f"a filter must be None, a callable, a '/regex/' string, a glob pattern, or a list of those; got {f!r}")


def is_pattern(text: str) -> bool:
    return bool(_REGEX.match(text)) or any(c in text for c in "*?[")


def with_subtrees(keys: list[str], all_keys: list[str]) -> set[str]:
    """``keys`` with every key below one of them (a selected field brings its whole subtree)."""
    sel = set(keys)
    out = set(keys)
    for k in all_keys:
        pos = k.find(".")
        while pos != -1:
            if k[:pos] in sel:
                out.add(k)
                break
            pos = k.find(".", pos + 1)
    return out


def prune(array: ak.Array, top: str, selected: set[str]) -> ak.Array:
    """The top-level field ``array`` (named ``top``) keeping only the record members on a path in ``selected``
    (uproot's arrays of a nested field's key: ``filter_name="mu.pt"`` -> ``{mu: {pt}}``)."""
    if top in selected:
        return array
    form, length, container = ak.to_buffers(array)
    F = ak.forms

    def keep(path):
        return path in selected or any(s.startswith(path + ".") for s in selected)

    def walk(f, path):
        if isinstance(f, F.RecordForm):
            if path in selected:
                return f
            contents, fields = [], []
            for n, c, real in zip(f.fields, f.contents, f.fields):  # a tuple's members are "0", "1" as uproot's keys
                if keep(f"{path}.{n}"):
                    contents.append(walk(c, f"{path}.{n}"))
                    fields.append(real)
            return F.RecordForm(contents, None if f.is_tuple else fields, parameters=f.parameters, form_key=f.form_key)
        if isinstance(f, (F.ListOffsetForm, F.ListForm, F.RegularForm, F.IndexedOptionForm, F.IndexedForm, F.ByteMaskedForm, F.BitMaskedForm, F.UnmaskedForm)):
            return f.copy(content=walk(f.content, path))
        return f

    return ak.from_buffers(walk(form, top), length, container)


def project(array: ak.Array, segments: list[str]) -> ak.Array:
    """A nested field's values from its top-level field's array: record members by name, ``_N`` for tuple
    members; lists are looked through."""
    for seg in segments:
        fields = array.fields
        if seg in fields:
            array = array[seg]
        elif re.fullmatch(r"_[0-9]+", seg) and seg[1:] in fields:
            array = array[seg[1:]]
        else:
            raise KeyError(f"no member {seg!r} (members: {', '.join(fields)})")
    return array


# ----- library="np" / "pd" (as uproot 5 does for RNTuples) ---------------------------------------------------


def jagged(form: ak.forms.Form) -> bool:
    """Whether values of ``form`` have a variable-length dimension (strings aside, which are values): numpy then
    gets an object array of one array per entry, whatever the lengths in the chunk at hand (a chunk whose lists
    all have one length must not turn into a 2-D array: its type decides, as in uproot)."""
    if isinstance(form, (ak.forms.ListOffsetForm, ak.forms.ListForm)):
        return form.parameter("__array__") not in ("string", "bytestring")
    if isinstance(form, ak.forms.UnionForm):
        return True
    if isinstance(form, ak.forms.RecordForm):
        return any(jagged(c) for c in form.contents)
    content = getattr(form, "content", None)
    return content is not None and jagged(content)


def _awkward_to_numpy(data):
    if isinstance(data, str):
        return data
    if isinstance(data, ak.Array) and isinstance(data.layout, ak.contents.RecordArray):
        try:
            if jagged(data.layout.form):
                raise TypeError("jagged members")
            return data.to_numpy()
        except (TypeError, ValueError):
            fields = data.fields
            arrays = [_awkward_to_numpy(data[f]) for f in fields]
            dtypes = [a.dtype if len(a.shape) == 1 else "O" for a in arrays]
            rows = [tuple(a[i] for a in arrays) for i in range(len(data))]
            return np.array(rows, dtype=list(zip(fields, dtypes)))
    if not isinstance(data, Iterable) or len(data) == 0:
        return np.asarray(data)
    converted = [_awkward_to_numpy(x) for x in data]
    shapes = [c.shape if isinstance(c, np.ndarray) else (1,) for c in converted]
    if len(set(shapes)) == 1:
        return np.array(converted)
    out = np.empty(len(converted), dtype=object)
    out[:] = converted
    return out


def to_numpy(array: ak.Array, name: str):
    """One field as numpy: a numeric array when it is rectangular, else an object array of one numpy array per
    entry (uproot's library="np" for jagged data), decided by the type (``jagged``), not by the chunk's values."""
    if not jagged(array.layout.form):
        try:
            return array.to_numpy()
        except (ValueError, TypeError):
            pass
    if array.ndim == 2 and not array.fields:
        try:  # fast path of the common case: a collection of numbers
            content = ak.to_numpy(ak.flatten(array, axis=1))
            out = np.empty(len(array), dtype=object)
            bounds = np.cumsum(ak.to_numpy(ak.num(array, axis=1)))
            out[:] = np.split(content, bounds[:-1]) if len(array) else []
            return out
        except (ValueError, TypeError):
            pass
    try:
        return _awkward_to_numpy(array)
    except Exception:  # noqa: BLE001
        raise ValueError(f"field {name!r} ({ak.type(array)}) cannot be converted to NumPy/Pandas; use library='ak'") from None


def pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("library='pd' needs pandas (pip install pandas)") from None
    return pd


def convert(array: ak.Array, library: str, entry_start: int, index=None):
    """A record array -> ``library``'s form: the awkward array itself, a dict of numpy arrays, or a pandas
    DataFrame indexed by entry number (``index`` overrides)."""
    if library == "ak":
        return array
    data = {f: to_numpy(array[f], f) for f in array.fields}
    if library == "np":
        return data
    pd = pandas()
    if index is None:
        index = pd.RangeIndex(entry_start, entry_start + len(array))
    return pd.DataFrame(data, index=index)


def regularize_library(library) -> str:
    name = getattr(library, "name", library)
    lib = {"ak": "ak", "awkward": "ak", "np": "np", "numpy": "np", "pd": "pd", "pandas": "pd", "pa": "pa", "pyarrow": "pa", "arrow": "pa"}.get(
        name if isinstance(name, str) else None
    )
    if lib is None:
        raise ValueError(f"library must be 'ak' (awkward), 'np' (numpy), 'pd' (pandas) or 'pa' (pyarrow); got {library!r}")
    return lib


def group(arrays, names: list[str], how, library: str):
    """uproot's ``how``: tuple, list or dict of the arrays, or ``"zip"`` (awkward)."""
    if how is None:
        return arrays
    cols = [arrays[n] for n in names] if library != "ak" else [arrays[n] for n in names]
    if how is tuple:
        return tuple(cols)
    if how is list:
        return cols
    if how is dict:
        return dict(zip(names, cols))
    if how == "zip" and library == "ak":
        return ak.zip(dict(zip(names, cols)))
    raise TypeError(f"how must be None, tuple, list, dict or (library='ak') 'zip'; got {how!r}")


def global_index(out, offset: int, library: str):
    """Shifts a DataFrame's entry index by ``offset`` (the entries of the files before)."""
    if library == "pd" and offset:
        out.index = out.index + offset
    return out


def concatenate(parts: list, library: str):
    if library == "ak":
        return parts[0] if len(parts) == 1 else ak.concatenate(parts)
    if library == "np":
        if not parts:
            return {}
        out = {}
        for k in parts[0]:
            vals = [p[k] for p in parts]
            if any(v.dtype == object for v in vals):
                cat = np.empty(sum(len(v) for v in vals), dtype=object)
                pos = 0
                for v in vals:
                    cat[pos : pos + len(v)] = v
                    pos += len(v)
                out[k] = cat
            else:
                out[k] = np.concatenate(vals)
        return out
    if library == "pd":
        return pandas().concat(parts)
    import pyarrow as pa

    return pa.concat_tables(parts)


class Report:
    """What ``iterate(..., report=True)`` yields beside each chunk (uproot's ``Report``): the RNTuple, the
    file and the entry range, local to the file and global over the files iterated."""

    def __init__(self, source, tree_entry_start: int, tree_entry_stop: int, global_offset: int = 0):
        self._source = source
        self._tree_entry_start = tree_entry_start
        self._tree_entry_stop = tree_entry_stop
        self._global_offset = global_offset

    source = property(lambda self: self._source, doc="The RNTuple the chunk came from.")
    tree = source
    file_path = property(lambda self: self._source._path, doc="The path of the file the chunk came from.")
    tree_entry_start = property(lambda self: self._tree_entry_start)
    tree_entry_stop = property(lambda self: self._tree_entry_stop)
    global_entry_start = property(lambda self: self._tree_entry_start + self._global_offset)
    global_entry_stop = property(lambda self: self._tree_entry_stop + self._global_offset)
    start = global_entry_start
    stop = global_entry_stop

    def to_global(self, offset: int) -> "Report":
        return Report(self._source, self._tree_entry_start, self._tree_entry_stop, offset)

    def __repr__(self) -> str:
        return f"<Report start={self.global_entry_start} stop={self.global_entry_stop} source={self.file_path + ':' + self._source.name!r}>"


# ----- hints of errors ---------------------------------------------------------------------------------------


def top_keys(path) -> dict[str, str]:
    """The top directory's keys of a local ROOT file: name -> class name ({} when the file cannot be read so)."""
    try:
        with open(os.fspath(path), "rb") as f:
            head = f.read(64)
            if head[:4] != b"root":
                return {}
            version, begin = struct.unpack(">ii", head[4:12])
            big = version >= 1000000
            # fNbytesName: after fEND, fSeekFree, fNbytesFree, nfree
            off = 12 + (8 + 8 if big else 4 + 4) + 4 + 4
            nbytes_name = struct.unpack(">i", head[off : off + 4])[0]
            f.seek(begin + nbytes_name)
            d = f.read(64)
            dversion = struct.unpack(">h", d[:2])[0]
            pos = 2 + 4 + 4 + 4 + 4
            if dversion > 1000:
                seek_keys = struct.unpack(">q", d[pos + 16 : pos + 24])[0]
            else:
                seek_keys = struct.unpack(">i", d[pos + 8 : pos + 12])[0]
            f.seek(seek_keys)
            data = f.read(1 << 20)
        out = {}
        _, hdr = _key(data, 0)
        nkeys = struct.unpack(">i", data[hdr : hdr + 4])[0]
        pos = hdr + 4
        for _ in range(min(nkeys, 100000)):
            (cls, name), pos = _key(data, pos)
            out.setdefault(name, cls)
        return out
    except Exception:  # noqa: BLE001 - only a hint
        return {}


def _string(data, pos):
    n = data[pos]
    pos += 1
    if n == 255:
        n = struct.unpack(">i", data[pos : pos + 4])[0]
        pos += 4
    return data[pos : pos + n].decode("latin-1"), pos + n


def _key(data, pos):
    """A TKey header at ``pos`` -> ((class name, name), position after the title)."""
    version = struct.unpack(">h", data[pos + 4 : pos + 6])[0]
    p = pos + 4 + 2 + 4 + 4 + 2 + 2 + (16 if version > 1000 else 8)
    cls, p = _string(data, p)
    name, p = _string(data, p)
    _, p = _string(data, p)
    return (cls, name), p


def missing_ntuple_message(path, name: str, ntuples: list[str]) -> str:
    msg = f"no RNTuple {name!r} in {path!r} (RNTuples: {', '.join(ntuples) or 'none'})"
    cls = top_keys(path).get(name) if isinstance(path, str) and os.path.exists(path) else None
    if cls is not None and (cls.startswith("TTree") or cls.startswith("TNtuple")):
        msg += (
            f"; {name!r} is a {cls}, not an RNTuple: read it with uproot (uproot.open(path)[{name!r}]) or "
            f"convert it with rntuple.convert({path!r}, 'out.root', tree={name!r})"
        )
    elif cls is not None:
        msg += f"; {name!r} is a {cls}, not an RNTuple"
    return msg


def stdout():
    return sys.stdout

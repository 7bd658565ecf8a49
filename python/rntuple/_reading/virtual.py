"""``arrays(virtual=True)``: awkward arrays whose buffers are read when first touched (awkward's virtual
arrays), as uproot's ``virtual=True``. Each top-level field is read once, on the first access to any of its
buffers; ``access_log`` (anything with ``+=``, e.g. a list) gets one :class:`Accessed` per node of the
form materialized (a buffer; a union's tags and index together, both read from one switch column)."""

from __future__ import annotations

from typing import NamedTuple

import awkward as ak

from . import query as _query


class Accessed(NamedTuple):
    """One node of a virtual array, materialized: its form key, the top-level field it belongs to and the
    entries read."""

    node: str
    field: str
    entry_start: int
    entry_stop: int


def check(virtual: bool, access_log, how, library: str, expressions, cut, aliases) -> None:
    """uproot's rules: what cannot be combined with ``virtual=True`` (or ``access_log`` without it)."""
    if virtual:
        for name, value, default in (("how", how, None), ("expressions", expressions, None), ("cut", cut, None), ("aliases", aliases, None)):
            if value is not default:
                raise ValueError(f"'{name}' cannot be used with 'virtual=True'")
        if library != "ak":
            raise ValueError("'library' cannot be used with 'virtual=True' (virtual arrays are awkward arrays)")
    elif access_log is not None:
        raise ValueError("'access_log' cannot be used with 'virtual=False'")
    if access_log is not None and not hasattr(access_log, "__iadd__"):
        raise ValueError(f"access_log={access_log!r} needs to implement '__iadd__' (a list will do)")


def arrays(t, plan, start: int, stop: int, access_log) -> ak.Array:
    """The plan's fields of ``t`` for ``start:stop`` as a virtual awkward array."""
    empty = _query.compute(t, plan, start, start, "ak")
    contents, names = [], []
    container = {}
    for i, name in enumerate(empty.fields):
        key = f"f{i}-node{{id}}"
        # The form and the buffer keys of an empty read are those of the full read.
        form, _, keys = ak.to_buffers(empty[name], form_key=key)
        contents.append(form)
        names.append(name)
        loader = _Loader(t, plan, name, key, start, stop)
        container.update({k: _buffer(loader, k, access_log) for k in keys})
    form = ak.forms.RecordForm(contents, names, parameters=empty.layout.parameters or None)
    return ak.from_buffers(form, stop - start, container)


class _Loader:
    """Reads one top-level output once and keeps its buffers."""

    def __init__(self, t, plan, name, key, start, stop):
        self.t, self.plan, self.name, self.key, self.start, self.stop = t, plan, name, key, start, stop
        self.buffers = None
        self.logged: set[str] = set()

    def get(self, k):
        if self.buffers is None:
            sub = _query.sub_plan(self.plan, self.name)
            got = _query.compute(self.t, sub, self.start, self.stop, "ak")[self.name]
            _, _, self.buffers = ak.to_buffers(got, form_key=self.key)
        return self.buffers[k]


def _buffer(loader: _Loader, k: str, access_log):
    def materialize():
        # One entry per node: a union's tags and index come from one switch column, as uproot logs columns.
        node = k.rsplit("-", 1)[0]
        if access_log is not None and node not in loader.logged:
            loader.logged.add(node)
            access_log.__iadd__([Accessed(node, loader.name, loader.start, loader.stop)])
        return loader.get(k)

    return materialize

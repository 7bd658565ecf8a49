"""Joins (``rntuple.join``): a primary RNTuple (or chain) and friends, entry by entry or matched on index fields
(``on=["run", "event"]``), read by the compiled core, which holds the friends' keys in an index and reads only
the friend clusters a batch needs. A friend's fields are named ``FRIEND.field``."""

from __future__ import annotations

from .._rntuple import NativeProcessor
from .chain import Chain, _inputs


class Join(Chain):
    """A primary dataset with friends' fields added (``rntuple.join(primary, *friends, on=..., how=...)``). Entry
    numbers are the primary's; with ``how="inner"`` the entries without a match in every friend are left out of
    what :meth:`arrays` gives (``num_entries`` stays the primary's)."""

    @property
    def friends(self) -> list[str]:
        """The friends' names (the prefixes of their fields)."""
        return self._native.friend_names()

    @property
    def index_bytes(self) -> int:
        """Bytes held by the friends' key indices (0 for an aligned join)."""
        return self._native.index_bytes()

    def __repr__(self) -> str:
        return f"<Join of {len(self.inputs)} input(s) with {', '.join(self.friends) or 'no friends'}, {self.num_entries} entries>"


def _friend(spec, ntuple):
    """A friend: a source, or ``(name, source)``: -> (name or None, pairs, first RNTuple)."""
    if isinstance(spec, tuple):
        if len(spec) != 2 or not isinstance(spec[0], str):
            raise TypeError(f"a named friend is (name, source), got {spec!r}")
        return (spec[0], *_inputs(spec[1], ntuple))
    return (None, *_inputs(spec, ntuple))


def join(primary, *friends, on=None, how: str = "left", ntuple: str | None = None, threads: int | None = None) -> Join:
    """Joins ``friends`` to ``primary``. Each is a path, ``"file.root:NTUPLE"``, a glob, a URL, an opened
    :class:`RNTuple`, or a list of those (a chain); a friend may also be ``(name, source)``, else it is named by its
    RNTuple's name. ``on``: the index field(s) to match on (integers, in every input, each key at most once per
    friend); ``None`` joins entry by entry. ``how``: ``"left"`` (a friend's fields are missing, ``None``, where it
    has no match) or ``"inner"`` (such entries are dropped). Errors name the file and the field: an index field
    missing or not an integer, a duplicate key in a friend.

    >>> j = rntuple.join("events.root:Events", ("corr", "corrections.root"), on=["run", "event"])
    >>> j.arrays(["Muon_pt", "corr.weight"])
    """
    if how not in ("left", "inner"):
        raise ValueError(f'how must be "left" or "inner", not {how!r}')
    on = [] if on is None else [on] if isinstance(on, str) else list(on)
    p_pairs, p_first = _inputs(primary, ntuple)
    specs = [_friend(f, ntuple) for f in friends]
    native = NativeProcessor(p_pairs, [(name, pairs) for name, pairs, _ in specs], on, how, threads)
    protos = {n: (p_first, n) for n, _, _ in p_first._top}
    for fname, (_, _, first) in zip(native.friend_names(), specs):
        protos.update({f"{fname}.{n}": (first, n) for n, _, _ in first._top})
    return Join(native, protos)

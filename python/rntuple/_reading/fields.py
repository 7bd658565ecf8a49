"""The field tree of an RNTuple: its field records (as the native reader describes them) with uproot's names,
for building awkward layouts (nodes) and for listing, filtering and showing fields as uproot does (keys); and the
numpy dtype uproot gives each on-disk column type."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

import numpy as np

from .._compat.api import no_filter, regularize_filter

_TUPLE_MEMBER = re.compile(r"_[0-9]+")
_BASE = re.compile(r":_[0-9]+")

# On-disk column type id -> numpy dtype uproot uses for it (None: index or switch columns).
_COLUMN_DTYPE = {
    0x00: "bool", 0x01: "uint8", 0x02: "uint8", 0x03: "int8", 0x04: "uint8", 0x05: "int16", 0x06: "uint16",
    0x07: "int32", 0x08: "uint32", 0x09: "int64", 0x0A: "uint64", 0x0B: "float16", 0x0C: "float32",
    0x0D: "float64", 0x0E: "int32", 0x0F: "int64", 0x11: "int16", 0x12: "uint16", 0x13: "int32",
    0x14: "uint32", 0x15: "int64", 0x16: "uint64", 0x17: "float16", 0x18: "float32", 0x19: "float64",
    0x1A: "int32", 0x1B: "int64", 0x1C: "float32", 0x1D: "float32",
}
_INDEX32 = {0x0E, 0x1A}
# Offset columns (Index32/64, SplitIndex32/64): a read of n elements gives n + 1 offsets.
INDEX_COLUMNS = {0x0E, 0x0F, 0x1A, 0x1B}


def itemsize(column_type: int) -> int:
    """Bytes per element of a column type once read (a switch column: 8-byte index and 4-byte tag)."""
    name = _COLUMN_DTYPE.get(column_type)
    return 12 if name is None else np.dtype(name).itemsize


# The order of a field row (``NativeReader.field_rows``): the native reader's compact form of a field record.
FIELD_ROW = ("id", "name", "type", "alias", "description", "role", "parent", "children", "repetition", "source",
             "flags", "readable", "kind", "columns")


class FieldNode:
    """One field record of an RNTuple, as the native reader describes it (a row in the order of ``FIELD_ROW``)."""

    __slots__ = (*FIELD_ROW, "uname")

    def __init__(self, row: tuple, shared: dict | None = None):
        if len(row) != len(FIELD_ROW):  # (zip's strict=True is Python 3.10+)
            raise ValueError(f"a field row of {len(row)} values, not {len(FIELD_ROW)}")
        for k, v in zip(FIELD_ROW, row):
            setattr(self, k, v)
        self.uname = self.name
        # (column type, bits) pairs as a tuple, one object for equal ones: most fields have one of a few
        # (a list and a pair per field were a third of a schema's memory).
        cols = tuple(self.columns)
        self.columns = cols if shared is None else shared.setdefault(cols, cols)

    def __repr__(self):
        return f"FieldNode({self.name!r}, {self.type!r}, role={self.role}, kind={self.kind})"

    @property
    def kind_name(self) -> str:
        return (self.kind or "").split("(")[0]

    @property
    def index32(self) -> bool:
        return bool(self.columns) and self.columns[0][0] in _INDEX32


class FieldTree:
    """The field records of an RNTuple, seen two ways.

    As nodes (``tree[fid]``, :meth:`members`): every field record with uproot's member name (``uname``), for
    building awkward layouts. As keys (:attr:`path_of`, :attr:`id_of`, :meth:`items`, :meth:`show`): the visible
    fields as uproot lists them: a collection's item field (``_0``), a variant's alternatives, ``std::array``'s
    item and base classes (``:_0``) are anonymous, their children take their place; a field's key is its dotted
    path of visible names. The keys are found on first use: a read of named top-level fields needs none (a
    schema of tens of thousands of fields makes them cost more than the read)."""

    def __init__(self, rows: Iterable[tuple], top_ids: list[int]):
        shared: dict = {}
        self.nodes = [FieldNode(r, shared) for r in rows]
        if any(n.id != i for i, n in enumerate(self.nodes)):
            raise ValueError("field rows are not in field id order")
        self._uproot_names()
        self.top_ids = list(top_ids)
        self._path_of: dict[int, str] | None = None

    # ----- nodes (layouts)

    def _has(self, fid) -> bool:
        """Whether ``fid`` names a field (a parent or child id out of range names none)."""
        return isinstance(fid, int) and 0 <= fid < len(self.nodes)

    def __getitem__(self, i) -> FieldNode:
        return self.nodes[i]

    def _anonymous_node(self, n: FieldNode) -> bool:
        if n.parent is None:
            return False
        p = self.nodes[n.parent]
        return (p.role in ("collection", "variant") or bool(p.flags & 1)
                or (p.role == "leaf" and n.name == "_0")
                or (p.role == "record" and _BASE.fullmatch(n.uname) is not None))

    def _in_variant(self, n: FieldNode) -> bool:
        while n.parent is not None:
            n = self.nodes[n.parent]
            if n.role == "variant":
                return True
        return False

    def _uproot_names(self):
        """Names as uproot's ``RNTuple.all_fields``: tuple members ``_N`` -> ``N``; members that reach a record
        through different base classes under the same path get ``Class::`` prefixes until unique."""
        for n in self.nodes:
            if n.parent is not None and self.nodes[n.parent].role == "record" and _TUPLE_MEMBER.fullmatch(n.name):
                n.uname = n.name[1:]
        anon = [self._anonymous_node(n) for n in self.nodes]
        # path -> its first node; the paths of several nodes -> all of them (lists only for those: a list per
        # field was most of the memory this takes for a schema of many fields)
        first, shared = {}, {}
        for n in self.nodes:
            if anon[n.id] or self._in_variant(n):
                continue
            parts = [n.uname]
            p = n.parent
            while p is not None:
                if not anon[p]:
                    parts.append(self.nodes[p].uname)
                p = self.nodes[p].parent
            path = parts[0] if len(parts) == 1 else ".".join(reversed(parts))
            seen = first.setdefault(path, n)
            if seen is not n:
                shared.setdefault(path, [seen]).append(n)
        del first
        for group in shared.values():
            stacks = []
            for n in group:
                st = [n]
                while st[-1].parent is not None:
                    st.append(self.nodes[st[-1].parent])
                stacks.append(st)
            while all(len(s) > 0 for s in stacks) and all(s[-1] is stacks[0][-1] for s in stacks[1:]):
                for s in stacks:
                    s.pop()
            name_stacks = [[s[0].uname] + [x.type for x in s[1:]] if s else [""] for s in stacks]

            def make(ns, k):
                if len(ns) < 2:
                    return ns[0]
                k = min(k, len(ns) - 1)
                pre = ns[::-1][:k]
                return "::".join(pre) + "::" + ns[0] if pre else ns[0]

            ks = [0] * len(group)
            names = [make(ns, 0) for ns in name_stacks]
            longest = max(len(ns) for ns in name_stacks)
            guard = 0
            while len(set(names)) != len(names) and guard <= longest:
                c = Counter(names)
                for i in range(len(names)):
                    if c[names[i]] > 1:
                        ks[i] += 1
                        names[i] = make(name_stacks[i], ks[i])
                guard += 1
            for n, nm in zip(group, names):
                n.uname = nm

    def members(self, node: FieldNode) -> list[FieldNode]:
        """Members of a record in uproot's order: own members first, then those of the base classes
        (``:_N`` subfields), taken depth-first from the last base."""
        out, todo = [], [node]
        while todo:
            cur = todo.pop()
            for c in cur.children:
                child = self.nodes[c]
                if _BASE.fullmatch(child.name):
                    todo.append(child)
                else:
                    out.append(child)
        return out

    # ----- keys (uproot's listing)

    def _key_index(self) -> "FieldTree":
        """Finds the keys (once)."""
        if self._path_of is None:
            self._children: dict[int, list[int]] = {}
            self._names: dict[int, str] = {}
            self._path_of = {}
            self._in_variant_of: dict[int, bool] = {}
            for fid in self.top_ids:
                self._names[fid] = self.nodes[fid].name
                self._walk(fid, self.nodes[fid].name, False)
            self._id_of = {p: fid for fid, p in self._path_of.items() if not self._in_variant_of.get(fid)}
        return self

    @property
    def path_of(self) -> dict[int, str]:
        """Field id -> key (dotted path of visible names)."""
        return self._key_index()._path_of

    @property
    def id_of(self) -> dict[str, int]:
        """Key -> field id (fields inside a variant have no key)."""
        return self._key_index()._id_of

    @property
    def in_variant(self) -> dict[int, bool]:
        """Field id -> whether the field is inside a variant's alternative."""
        return self._key_index()._in_variant_of

    def core_name(self, key: str) -> str | None:
        """The name by which the core's expressions know the field of key ``key``: its own names from the
        top (``pair._0`` for uproot's ``pair.0``), anonymous fields left out; None when there is no such key."""
        fid = self.id_of.get(key)
        if fid is None:
            return None
        parts, tops = [], set(self.top_ids)
        while True:
            if fid in tops:
                parts.append(self.nodes[fid].name)
                return ".".join(reversed(parts))
            if not self._anonymous(fid):
                parts.append(self.nodes[fid].name)
            fid = self.nodes[fid].parent
            if fid is None or not self._has(fid):
                return key

    def _anonymous(self, fid) -> bool:
        r = self.nodes[fid]
        p = r.parent
        if p is None or not self._has(p):
            return False
        parent = self.nodes[p]
        role = parent.role
        if role in ("collection", "variant") or parent.repetition is not None:
            return True
        if role == "leaf" and r.name == "_0":
            return True
        return role == "record" and _BASE.fullmatch(r.name) is not None

    def _walk(self, fid, path, in_variant):
        self._path_of[fid] = path
        self._in_variant_of[fid] = in_variant
        kids = []  # (field id, [anonymous ancestors' ids, outermost first])
        below_variant = in_variant or self.nodes[fid].role == "variant"
        stack = [(c, []) for c in self.nodes[fid].children]
        while stack:
            c, via = stack.pop(0)
            if not self._has(c):
                continue
            if self._anonymous(c):
                stack[:0] = [(g, [*via, c]) for g in self.nodes[c].children]
                continue
            kids.append((c, via))
        names = [self._own_name(c) for c, _ in kids]
        # members of several base classes with one name: prefixed by the bases' type names, outermost first,
        # until unique (uproot's names: "Child::base_a1")
        prefixes = [0] * len(kids)
        for _ in range(8):
            dup = {n for n in names if names.count(n) > 1}
            if not dup:
                break
            for i, (c, via) in enumerate(kids):
                if names[i] in dup and prefixes[i] < len(via):
                    prefixes[i] += 1
                    types = [self.nodes[a].type or "" for a in via[: prefixes[i]]]
                    names[i] = "::".join([*types, self._own_name(c)])
        for (c, _), n in zip(kids, names):
            self._names[c] = n
            self._walk(c, f"{path}.{n}", below_variant)
        self._children[fid] = [c for c, _ in kids]

    def _own_name(self, fid) -> str:
        """uproot's name of a field: a tuple's or pair's member ``_0`` is ``0`` (awkward's tuple field)."""
        r = self.nodes[fid]
        name = r.name
        parent = self.nodes[r.parent] if r.parent is not None and self._has(r.parent) else None
        if parent is not None and parent.role == "record" and _TUPLE_MEMBER.fullmatch(name):
            return name[1:]
        return name

    def children(self, fid) -> list[int]:
        return [] if fid is None else self._key_index()._children.get(fid, [])

    def tops(self) -> list[int]:
        return self.top_ids

    def name(self, fid) -> str:
        return self._key_index()._names.get(fid, self.nodes[fid].name)

    def typename(self, fid) -> str:
        return self.nodes[fid].type or ""

    def description(self, fid) -> str:
        return self.nodes[fid].description or ""

    def items(
        self, below, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, full_paths=True, ignore_duplicates=False, make_field=None
    ):
        """(key, field id) pairs below ``below`` (None: the top), in uproot's order and with its filters."""
        filter_name = regularize_filter(filter_name)
        filter_typename = regularize_filter(filter_typename)
        if filter_field is not None and filter_field is not no_filter and not callable(filter_field):
            raise TypeError(f"filter_field must be None or a function: field -> bool, not {filter_field!r}")
        base = "" if below is None else self.path_of[below] + "."
        seen = set()
        kids = self.tops() if below is None else self.children(below)

        def deep_match(fid):
            name = self.name(fid)
            if filter_name(name):
                return True
            rel = self.path_of[fid][len(base) :]
            return (rel != name and filter_name(rel)) or filter_name("." + rel)

        def visit(fids):
            for fid in fids:
                key = self.path_of[fid][len(base) :] if full_paths else self.name(fid)
                if (
                    not self.in_variant.get(fid)
                    and (filter_name is no_filter or deep_match(fid))
                    and (filter_typename is no_filter or filter_typename(self.typename(fid)))
                    and (filter_field is None or filter_field is no_filter or filter_field(make_field(fid)))
                ):
                    if not (ignore_duplicates and key in seen):
                        seen.add(key)
                        yield key, fid
                if recursive:
                    yield from visit(self.children(fid))

        yield from visit(kids)

    def show(
        self,
        root_name,
        root_type,
        below,
        stream,
        *,
        filter_name=None,
        filter_typename=None,
        filter_field=None,
        recursive=True,
        max_width=80,
        make_field=None,
        root_description="",
    ):
        elbow, pipe, tee, blank = "└─ ", "│  ", "├─ ", "   "

        def line(text):
            stream.write(text[:max_width] + "\n")

        def rec(fid, header, first, last):
            name = root_name if fid is below else self.name(fid)
            typ = root_type if fid is below else self.typename(fid)
            line(f"{header}{'' if first else (elbow if last else tee)}{name} ({typ})")
            desc = root_description if fid is None else self.description(fid)
            if desc:
                line(f"{header}{'' if first else (blank if last else pipe)}Description: {desc}")
            if recursive or first:
                subs = [
                    f
                    for _, f in self.items(
                        fid, filter_name=filter_name, filter_typename=filter_typename, filter_field=filter_field, recursive=False, make_field=make_field
                    )
                ]
                for i, s in enumerate(subs):
                    rec(s, f"{header}{'' if first else (blank if last else pipe)}", False, i == len(subs) - 1)

        rec(below, "", True, True)

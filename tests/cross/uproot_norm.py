"""Bringing uproot's values and `rntuple dump`'s values to one form, so they can be compared with rootgen.compare.

uproot 5.7.7 (`ak.to_list(ntuple.arrays())`) differs from the JSON form of DESIGN.md in these ways, all handled
here by walking the field tree that uproot itself read from the file (field records: name, type, structural
role, repetition, parent):

* base classes: uproot flattens the base-class subrecords (fields named `:_0`, `:_1`, ...) into the derived
  record; members whose names then collide get "ClassName::" prefixes (uproot's `all_fields[i].name`). We apply
  the same flattening to our dump, taking the final names from uproot's own field list.
* std::pair / std::tuple (records whose members are all `_0`, `_1`...): awkward tuples, i.e. Python tuples or
  lists; ours are lists. Tuples become lists on uproot's side.
* empty records (an empty struct, or a class whose base classes are all empty): awkward gives them as empty
  tuples, `[]`; ours are `{}` (or `{":_0": {}, ...}`), flattened to `[]`.
* std::unique_ptr: uproot gives a list of zero or one element (it does not special-case it, unlike
  std::optional); ours is null or the value.
* floats: uproot returns float32 values widened to Python floats; a `float` leaf is wrapped as rootgen.F32 so that
  our shortest round-trip decimal compares equal exactly when it denotes the same float32. NaN and infinities
  become the strings "nan", "inf", "-inf" (our convention).
"""

from __future__ import annotations

import math
import re

from rootgen import F32, Unordered

ROLE_LEAF, ROLE_COLLECTION, ROLE_RECORD, ROLE_VARIANT, ROLE_STREAMER = 0, 1, 2, 3, 4
_ANON = re.compile(r":_[0-9]+")
_TUPLE_MEMBER = re.compile(r"_[0-9]+")


class Field:
    def __init__(self, fid, record, uname):
        self.id = fid
        self.name = record.field_name
        self.uname = uname  # uproot's (possibly "Class::" prefixed) name
        self.type = record.type_name
        self.role = record.struct_role
        self.repetition = record.repetition
        self.source = record.source_field_id
        self.children: list[Field] = []

    def __repr__(self):
        return f"Field({self.name!r}, {self.type!r}, role={self.role}, rep={self.repetition})"

    @property
    def is_anonymous_base(self):
        return _ANON.fullmatch(self.name) is not None

    @property
    def is_tuple_like(self):
        return self.role == ROLE_RECORD and bool(self.children) and all(
            _TUPLE_MEMBER.fullmatch(c.name) for c in self.children
        )


def field_tree(ntuple) -> list[Field]:
    """Top-level fields (in field-id order, i.e. schema order) of an uproot RNTuple, with their subfields."""
    records = ntuple.field_records
    all_fields = ntuple.all_fields
    nodes = [Field(i, r, all_fields[i].name) for i, r in enumerate(records)]
    top = []
    for i, r in enumerate(records):
        if r.parent_field_id == i:
            top.append(nodes[i])
        else:
            nodes[r.parent_field_id].children.append(nodes[i])
    return top


def _real(x, is_f32):
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if is_f32 and isinstance(x, (int, float)) and not isinstance(x, bool):
        return F32(x)
    return x


def _leaf_is_f32(field: Field) -> bool:
    return field.type == "float"


def expected_from_uproot(value, field: Field):
    """uproot's ak.to_list value of `field` -> the comparison form (F32 for floats, lists for tuples...)."""
    if value is None:
        return None
    role = field.role
    if role == ROLE_LEAF:
        if field.repetition > 0:  # std::array (one subfield) or std::bitset (none)
            item = field.children[0] if field.children else None
            return [expected_from_uproot(v, item) if item else v for v in value]
        if field.children:  # std::atomic, enums: the value of the only subfield
            return expected_from_uproot(value, field.children[0])
        return _real(value, _leaf_is_f32(field))
    if role == ROLE_COLLECTION:
        if len(field.children) == 1:
            child = field.children[0]
            if field.type.startswith("std::optional<"):
                return expected_from_uproot(value, child)
            items = [expected_from_uproot(v, child) for v in value]
            # the order of an unordered container's elements is unspecified: compared as a multiset
            return Unordered(items) if field.type.startswith("std::unordered_") else items
        # untyped collection of several members: list of records
        return [_record_expected(v, field.children) for v in value]
    if role == ROLE_RECORD:
        if field.is_tuple_like:
            return [expected_from_uproot(v, c) for v, c in zip(value, field.children)]
        if isinstance(value, (list, tuple)) and not value:
            return []  # empty record
        return _record_expected(value, field.children)
    if role == ROLE_VARIANT:
        return _variant_expected(value, field.children)
    raise NotImplementedError(f"uproot normalization: field {field!r}")


def _flat_members(children):
    for c in children:
        if c.is_anonymous_base:
            yield from _flat_members(c.children)
        else:
            yield c


def _record_expected(value, children):
    members = {c.uname: c for c in _flat_members(children)}
    return {k: expected_from_uproot(v, members[k]) if k in members else v for k, v in value.items()}


def _variant_expected(value, alternatives):
    # The alternative is not in ak.to_list's output: pick the one the value fits.
    if isinstance(value, float):
        floats = [a for a in alternatives if a.type == "float"]
        doubles = [a for a in alternatives if a.type in ("double", "Double32_t")]
        return _real(value, bool(floats) and not doubles)
    if isinstance(value, dict):
        for a in alternatives:
            if a.role == ROLE_RECORD and not a.is_tuple_like:
                names = {c.uname for c in _flat_members(a.children)}
                if names == set(value):
                    return _record_expected(value, a.children)
        return value
    if isinstance(value, (list, tuple)):
        for a in alternatives:
            if a.role in (ROLE_COLLECTION, ROLE_RECORD) or a.repetition > 0:
                try:
                    return expected_from_uproot(value, a)
                except Exception:
                    continue
        return [v for v in value]
    return value


def ours_to_uproot(value, field: Field):
    """A value of `field` from `rntuple dump` -> uproot's layout (bases flattened, unique_ptr as a list...)."""
    role = field.role
    if role == ROLE_LEAF:
        if field.repetition > 0 and field.children and isinstance(value, list):
            return [ours_to_uproot(v, field.children[0]) for v in value]
        if field.children and field.repetition == 0:
            return ours_to_uproot(value, field.children[0])
        return value
    if role == ROLE_COLLECTION:
        if len(field.children) == 1:
            child = field.children[0]
            if field.type.startswith("std::optional<"):
                return None if value is None else ours_to_uproot(value, child)
            if field.type.startswith("std::unique_ptr<"):
                return [] if value is None else [ours_to_uproot(value, child)]
            if not isinstance(value, list):
                return value
            return [ours_to_uproot(v, child) for v in value]
        if not isinstance(value, list):
            return value
        return [_record_ours(v, field.children) for v in value]
    if role == ROLE_RECORD:
        if field.is_tuple_like:
            if not isinstance(value, list):
                return value
            return [ours_to_uproot(v, c) for v, c in zip(value, field.children)]
        if isinstance(value, dict) and not list(_flat_members(field.children)):
            # no members once the base classes are flattened (e.g. an empty struct, or a class whose bases are
            # all empty): awkward's empty tuple, [] -- provided ours has nothing but (empty) bases either
            flat = _record_ours(value, field.children)
            return [] if not flat else flat
        return _record_ours(value, field.children)
    if role == ROLE_VARIANT:
        if isinstance(value, dict):
            for a in field.children:
                if a.role == ROLE_RECORD and not a.is_tuple_like and set(value) == {c.name for c in a.children}:
                    return _record_ours(value, a.children)
        return value
    return value


def _record_ours(value, children):
    if not isinstance(value, dict):
        return value
    out = {}
    _merge_record(out, value, children)
    return out


def _merge_record(out, value, children):
    by_name = {c.name: c for c in children}
    for k, v in value.items():
        c = by_name.get(k)
        if c is None:
            out[k] = v  # unknown key: kept, the comparison will report it
        elif c.is_anonymous_base and isinstance(v, dict):
            _merge_record(out, v, c.children)
        else:
            out[c.uname] = ours_to_uproot(v, c)

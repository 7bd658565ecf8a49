"""``ak_add_doc``: field descriptions (or other field attributes) as parameters of the awkward contents, as
uproot adds them: ``True`` puts each field's description in its content's ``__doc__`` parameter (and the
RNTuple's description on the top record); a dict ``{parameter: attribute}`` puts a field attribute there
(``{"typename": "typename"}``)."""

from __future__ import annotations

from .fields import FieldNode

# Field attributes ak_add_doc may name, from a field record (anonymous fields, a collection's item, have no key
# and no Field object, but a record).
_ATTRIBUTES = {
    "description": lambda n: n.description or "",
    "typename": lambda n: n.type or "",
    "name": lambda n: n.uname,
    "field_id": lambda n: n.id,
}


def check(ak_add_doc) -> None:
    if isinstance(ak_add_doc, bool):
        return
    if not isinstance(ak_add_doc, dict):
        raise TypeError(f"ak_add_doc is True, False or a dict {{parameter: field attribute}}, not {ak_add_doc!r}")
    unknown = [v for v in ak_add_doc.values() if v not in _ATTRIBUTES]
    if unknown:
        raise ValueError(f"ak_add_doc names unknown field attributes {unknown} (known: {', '.join(_ATTRIBUTES)})")


def parameters(ak_add_doc, description: str):
    """(a callable field node -> parameters or None, the top record's parameters or None) for ``ak_add_doc``."""
    check(ak_add_doc)
    if ak_add_doc is True:
        return (lambda n: {"__doc__": n.description} if n.description else None), ({"__doc__": description} if description else None)
    if isinstance(ak_add_doc, dict) and ak_add_doc:
        pairs = [(key, _ATTRIBUTES[attr]) for key, attr in ak_add_doc.items()]

        def of(n: FieldNode):
            return {key: get(n) for key, get in pairs}

        return of, None
    return None, None

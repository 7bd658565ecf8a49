"""What ``arrays``/``iterate``/``concatenate`` read and compute: the plan of expressions, aliases, filters and the
cut (the fields they need), and its evaluation on the batch read: expressions in Python on awkward arrays
(``expressions``), the cut by the core (``selection``: uproot's spelling translated)."""

from __future__ import annotations

import copy

import awkward as ak
import numpy as np
import pyarrow as pa

from .._compat import api as _compat
from .._rntuple import InvalidArgumentError, NotFoundError, selection_masks
from . import evolution as _evolution
from . import expressions as _expr
from .layout import batch_to_layout
from .selection import to_core


class _Plan:
    """What to read (``names``, ``ids``: top-level fields; the first ``n_out`` of them those the outputs and
    expressions need, the others the cut's alone) and to compute (``outputs``; ``cut`` as given and ``core_cut``
    in the core's syntax); ``simple``: the fields as read, nothing to compute."""

    __slots__ = ("outputs", "cut", "core_cut", "aliases", "names", "ids", "simple", "doc", "top_parameters", "n_out")

    def __init__(self, outputs, cut, aliases, names, ids, simple, core_cut=None, n_out=None):
        self.outputs, self.cut, self.aliases, self.names, self.ids, self.simple = outputs, cut, aliases, names, ids, simple
        self.core_cut = core_cut
        self.n_out = len(ids) if n_out is None else n_out
        # ak_add_doc: the parameters of each field's content (a callable of its node) and of the top record
        self.doc = None
        self.top_parameters = None


def plan(t, expressions, cut, filter_name, filter_typename, filter_field, aliases, fields) -> "_Plan":
    """What to read and to compute: (output name, expression or None, top-level field, kept keys or None)."""
    if fields is not None:
        if expressions is not None:
            raise TypeError("give the fields as expressions or as fields=, not both")
        expressions = fields
    # Field objects (``t.fields``) stand for their paths
    if isinstance(expressions, (list, tuple)):
        expressions = [getattr(e, "path", e) if not isinstance(e, str) else e for e in expressions]
    elif expressions is not None and not isinstance(expressions, str):
        expressions = getattr(expressions, "path", expressions)
    if aliases is not None and not isinstance(aliases, dict):
        raise TypeError(f"aliases must be a dict {{name: expression}}, not {aliases!r}")
    aliases = dict(aliases or {})
    if aliases:
        aliases = _expr.without_shadowing(aliases, t._uproot_tree.id_of)
    filtering = any(f is not None for f in (filter_name, filter_typename, filter_field))
    if cut is None and not aliases and not filtering:
        # Top-level fields only (all of them, or named): no key tree to build (a schema of tens of
        # thousands of fields makes that tree cost more than the read).
        plain = list(t._names) if expressions is None else ([expressions] if isinstance(expressions, str) else None)
        if plain is None and isinstance(expressions, (list, tuple)) and all(isinstance(e, str) for e in expressions):
            plain = list(expressions)
        known = set(t._names)
        if plain is not None and len(set(plain)) == len(plain) and all(e in known for e in plain):
            names, ids = t._ids(plain)
            if list(names) == plain:
                return _Plan([(e, None, e, None, ()) for e in plain], None, {}, names, ids, True)
    tree = t._uproot_tree
    by_name = t.schema
    outputs: list[tuple[str, str | None, str, set | None, list[str]]] = []

    def select(fn, ftn, ff):
        keys = [k for k, _ in tree.items(None, filter_name=fn, filter_typename=ftn, filter_field=ff, make_field=t._field)]
        sel = _compat.with_subtrees(keys, list(tree.id_of))
        for top in t._names:
            if top in sel:
                outputs.append((top, None, top, None, []))
            elif any(k.startswith(top + ".") for k in sel):
                outputs.append((top, None, top, sel, []))

    if expressions is None:
        if filtering:
            select(filter_name, filter_typename, filter_field)
        else:
            outputs = [(top, None, top, None, []) for top in t._names]
    else:
        exprs = [expressions] if isinstance(expressions, str) else list(expressions)
        paths = [e.replace("/", ".") if isinstance(e, str) else e for e in exprs]
        if any(p not in by_name for p in paths) and all(p in tree.id_of and p not in aliases for p in paths):
            # nested keys: as uproot, each top-level field with only the members named
            exprs = []
            select(paths, filter_typename, filter_field)
        for e in exprs:
            if not isinstance(e, str):
                raise TypeError(f"an expression is a string, not {e!r}")
            if e in by_name:
                outputs.append((e, None, e, None, []))
            elif e in aliases:
                outputs.append((e, aliases[e], "", None, []))
            elif e.replace("/", ".") in tree.id_of:
                path = e.replace("/", ".")
                top, *segments = path.split(".")
                outputs.append((e, None, top, None, segments))
            elif _compat.is_pattern(e) and not _expr.is_python(e):
                before = len(outputs)
                select(e, filter_typename, filter_field)
                if len(outputs) == before:
                    raise NotFoundError(f"no field of RNTuple {t.name!r} matches {e!r} (keys: {', '.join(tree.id_of)})")
            else:
                outputs.append((e, e, "", None, []))
    exprs = [o[1] for o in outputs if o[1] is not None]
    if cut is not None and not isinstance(cut, str):
        raise TypeError(f"cut must be an expression string, not {cut!r}")
    try:
        needed = _expr.needed_fields(exprs, tree.id_of, aliases, lambda k: k.split(".")[0])
        # The cut: in the core's syntax (uproot's spelling translated), evaluated by the core.
        core_cut, cut_keys = (None, []) if cut is None else to_core(cut, tree.core_name, aliases)
    except _expr.ExpressionError as e:
        raise NotFoundError(f"{e} in RNTuple {t.name!r} of {t._path!r} (keys: {', '.join(tree.id_of)})") from None
    out_tops = list(dict.fromkeys([o[2] for o in outputs if o[1] is None] + needed))
    tops = list(dict.fromkeys(out_tops + [k.split(".")[0] for k in cut_keys]))
    names, ids = t._ids(tops)
    simple = cut is None and all(o[1] is None and o[3] is None and not o[4] for o in outputs) and [o[0] for o in outputs] == tops
    return _Plan(outputs, cut, aliases, names, ids, simple, core_cut, len(out_tops))


def sub_plan(plan: "_Plan", name: str) -> "_Plan":
    """The part of a plan without a cut or expressions that gives the output ``name`` alone."""
    out = next(o for o in plan.outputs if o[0] == name)
    i = plan.names.index(out[2])
    sub = _Plan([out], None, {}, [plan.names[i]], [plan.ids[i]], out[3] is None and not out[4] and out[0] == out[2])
    sub.doc = plan.doc
    return sub


def compute(t, plan: "_Plan", start: int, stop: int, library: str, how=None, index_offset: int = 0, read=None):
    """The result of ``plan`` for the entries ``start:stop`` of ``t`` in ``library``'s form (read through ``read``,
    by default ``t._read_batch``).

    With a cut, outputs that are fields (no Python expression: uproot computes expressions on every entry before
    the cut, and one such as ``np.mean(x)`` would differ on the kept entries alone) and a library other than pandas
    (whose index keeps the entry numbers), the read is a selected one (``read.selected``, by default
    ``t._read_selected``: ``rntuple::ops::read_selected``): the cut is evaluated by the core cluster by cluster,
    clusters where no entry passes are not read further, and only the kept entries of the output fields cross into
    Python. Otherwise (or with a ``read`` without ``selected``) every entry is read and masked here."""
    selected = None
    if plan.core_cut is not None and library != "pd" and all(o[1] is None for o in plan.outputs):
        selected = t._read_selected if read is None else getattr(read, "selected", None)
    read = read or t._read_batch
    names, ids = plan.names, plan.ids
    if selected is not None:
        names, ids = plan.names[: plan.n_out], plan.ids[: plan.n_out]
        batch = None
        arr = ak.Array(batch_to_layout(_selected_batch(selected, plan, names, start, stop), t._tree, ids, plan.doc))
    elif plan.core_cut is None and plan.names is not None and len(plan.ids) > FIELD_GROUP and not (plan.simple and library == "pa"):
        batch = None
        arr = ak.Array(_layout_in_groups(t, plan, start, stop, read))
    else:
        batch = read(plan.names, start, stop)
        if plan.simple and library == "pa":
            return pa.Table.from_batches([_evolution.unmarked(batch)])
        arr = ak.Array(batch_to_layout(batch, t._tree, plan.ids, plan.doc))
    if plan.simple:
        result = arr
        mask = None
    else:
        tops = {n: arr[n] for n in names}

        def project(path):
            top, *segments = path.split(".")
            return _compat.project(tops[top], segments)

        ev = _expr.Evaluator(tops, plan.aliases, project)
        out = {}
        for name, expr, top, sel, segments in plan.outputs:
            if expr is not None:
                value = ev.evaluate(expr)
                if not isinstance(value, ak.Array):
                    value = ak.Array(np.broadcast_to(np.asarray(value), (len(arr),))) if np.ndim(value) == 0 else ak.Array(value)
                out[name] = value
            elif segments:
                out[name] = _compat.project(tops[top], segments)
            else:
                out[name] = tops[top] if sel is None else _compat.prune(tops[top], top, sel)
        mask = None if plan.core_cut is None or selected is not None else _cut_mask(batch, plan)
        if out:
            result = ak.zip(out, depth_limit=1)
        else:
            result = ak.Array(ak.contents.RecordArray([], [], length=len(arr)))
        if mask is not None and library != "pd":
            result = result[mask]
    if plan.top_parameters:
        result = ak.Array(result.layout.copy(parameters={**(result.layout.parameters or {}), **plan.top_parameters}))
    if library == "pa":
        return ak.to_arrow_table(result)
    converted = _compat.convert(result, library, start + index_offset)
    if mask is not None and library == "pd":
        converted = converted[mask]
    return _compat.group(converted, list(result.fields), how, library)


# Reads of more top-level fields than this (without a cut, which needs the whole batch) go in groups of this many.
# An Arrow batch costs about 1 KiB per field besides its values (the Arrow C bridge's and pyarrow's records, kept
# while any of its buffers is): a group whose values are small beside that is copied out of its batch, so that
# the batch is freed before the next group is read (100,000 float fields of one entry peaked at 369 MiB read at
# once). Groups of larger values keep their buffers (no copy), the cost per field being small beside them.
FIELD_GROUP = 4096
# A group is copied out of its batch when its values take at most this many bytes per field.
COPY_BYTES_PER_FIELD = 4 << 10


def _layout_in_groups(t, plan: _Plan, start: int, stop: int, read):
    """The top-level RecordArray of ``plan``'s fields, read ``FIELD_GROUP`` fields at a time (see there)."""
    contents, names, length = [], [], None
    for k in range(0, len(plan.ids), FIELD_GROUP):
        batch = read(plan.names[k : k + FIELD_GROUP], start, stop)
        part = batch_to_layout(batch, t._tree, plan.ids[k : k + FIELD_GROUP], plan.doc)
        if batch.nbytes <= COPY_BYTES_PER_FIELD * len(part.contents):
            part = copy.deepcopy(part)  # owns its values: the batch's records go with it
        del batch
        length = part.length
        contents.extend(part.contents)
        names.extend(part.fields)
    return ak.contents.RecordArray(contents, names, length=length)


def _cut_mask(batch: pa.RecordBatch, plan: _Plan) -> np.ndarray:
    """One boolean per entry of ``batch``: the plan's cut, evaluated by the core."""
    try:
        entries, _ = selection_masks(batch, plan.core_cut, [])
    except InvalidArgumentError as e:
        raise _cut_error(plan, e) from None
    return np.frombuffer(entries, dtype=np.uint8).astype(bool)


def _selected_batch(selected, plan: _Plan, names, start: int, stop: int) -> pa.RecordBatch:
    """The kept entries ``start:stop`` of the fields ``names``: ``selected`` (a selected read) with the plan's cut."""
    try:
        batch, _, _ = selected(names, start, stop, plan.core_cut)
    except InvalidArgumentError as e:
        raise _cut_error(plan, e) from None
    return batch


def _cut_error(plan: _Plan, e: Exception) -> InvalidArgumentError:
    if "boolean per entry" in str(e):
        return InvalidArgumentError(
            f"the cut {plan.cut!r} does not give one boolean per entry ({e}); reduce collections with "
            "any/all/sum/count, or ak.any/ak.all/ak.sum/ak.num(..., axis=1)"
        )
    return InvalidArgumentError(f"the cut {plan.cut!r}: {e}")

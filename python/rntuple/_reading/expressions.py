"""uproot-style expressions for ``arrays``/``iterate``: ``expressions`` and ``aliases`` (uproot's
``python_language``, evaluated here on awkward arrays). The ``cut`` is a selection of the core's language, in
uproot's spelling (``selection``).

An expression is one Python expression over field names, as uproot's ``python_language`` evaluates them: names
of fields (a nested field by its dotted path, ``mu.pt``; any name with ``get("name")``), aliases, uproot's
numpy functions (``sqrt``, ``abs``, ``where``...) and the modules ``np``/``numpy``/``ak``/``awkward``. The values
are awkward arrays, so jagged fields broadcast as awkward does. Only the fields an expression names are read.
"""

from __future__ import annotations

import ast
import math
import warnings
from typing import Callable, Iterable

import awkward as ak
import numpy as np


def _vectorized(f):
    return np.vectorize(f, otypes=[np.float64])


def _lgamma(x):
    return _vectorized(math.lgamma)(x)


FUNCTIONS: dict[str, Callable] = {
    "abs": np.absolute,
    "absolute": np.absolute,
    "acos": np.arccos,
    "arccos": np.arccos,
    "acosh": np.arccosh,
    "arccosh": np.arccosh,
    "asin": np.arcsin,
    "arcsin": np.arcsin,
    "asinh": np.arcsinh,
    "arcsinh": np.arcsinh,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "arctan": np.arctan,
    "arctan2": np.arctan2,
    "atanh": np.arctanh,
    "arctanh": np.arctanh,
    "cbrt": np.cbrt,
    "ceil": np.ceil,
    "conj": np.conjugate,
    "conjugate": np.conjugate,
    "copysign": np.copysign,
    "cos": np.cos,
    "cosh": np.cosh,
    "erf": _vectorized(math.erf),
    "erfc": _vectorized(math.erfc),
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "fabs": np.fabs,
    "factorial": lambda x: np.round(np.exp(_lgamma(np.round(x) + 1))),
    "floor": np.floor,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "gamma": _vectorized(math.gamma),
    "hypot": np.hypot,
    "imag": np.imag,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "lgamma": _lgamma,
    "log": np.log,
    "log10": np.log10,
    "log1p": np.log1p,
    "log2": np.log2,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "neg": np.negative,
    "nextafter": np.nextafter,
    "real": np.real,
    "rint": np.rint,
    "round": np.round,
    "signbit": np.signbit,
    "sin": np.sin,
    "sinh": np.sinh,
    "sqrt": np.sqrt,
    "tan": np.tan,
    "tanh": np.tanh,
    "tgamma": lambda x: np.exp(_lgamma(x)),
    "trunc": np.trunc,
    "where": np.where,
}
MODULES = {"np": np, "numpy": np, "ak": ak, "awkward": ak}
GETTER = "get"


class ExpressionError(KeyError):
    """An expression names something that is neither a field, an alias nor a known function."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class NameConflictWarning(Warning):
    """An alias has the name of a field: the field is used, everywhere (as uproot's warning of the same name)."""


def without_shadowing(aliases: dict, keys) -> dict:
    """``aliases`` without those named like a field (a key of ``keys``), with a :class:`NameConflictWarning`
    for each: as in uproot, the field wins in expressions, in the cut and in the output alike."""
    clash = [a for a in aliases if a in keys]
    for a in clash:
        warnings.warn(f"{a!r} is both an alias and a field name; using the field", NameConflictWarning, stacklevel=4)
    return {a: e for a, e in aliases.items() if a not in clash} if clash else aliases


def parse(expression: str) -> ast.Expression:
    try:
        return ast.parse(expression.strip(), mode="eval")
    except SyntaxError as e:
        raise SyntaxError(
            f"cannot parse the expression {expression!r}: {e.msg} (expressions are Python: use '&', '|', '~' with parentheses rather than '&&', '||', '!')"
        ) from None


def is_python(expression: str) -> bool:
    try:
        ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        return False
    return True


def _dotted(node) -> str | None:
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    return None


def symbols(expression: str, keys: Iterable[str], aliases: dict) -> list[str]:
    """The field paths and alias names ``expression`` refers to, in order of appearance."""
    keys = set(keys)
    out: list[str] = []

    def walk(node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == GETTER:
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
                raise TypeError(f"{GETTER}() takes one constant string, the field's name, in {expression!r}")
            name = node.args[0].value
            if name not in keys and name not in aliases:
                raise ExpressionError(_unknown(name, expression, keys))
            out.append(name)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
            for x in [*node.args, *node.keywords]:
                walk(x)
            return
        if isinstance(node, ast.Name):
            if node.id in aliases or node.id in keys:
                out.append(node.id)
            elif node.id not in FUNCTIONS and node.id not in MODULES and node.id not in ("True", "False", "None"):
                raise ExpressionError(_unknown(node.id, expression, keys))
            return
        if isinstance(node, ast.Attribute):
            name = _dotted(node)
            if name is not None and (name in keys or name in aliases):
                out.append(name)
                return
            walk(node.value)
            return
        if isinstance(node, ast.AST):
            for f in node._fields:
                walk(getattr(node, f))
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(parse(expression))
    return list(dict.fromkeys(out))


def _unknown(name, expression, keys) -> str:
    where = "" if name == expression.strip() else f" (named in the expression {expression!r}; not an alias or a function either)"
    return f"no field {name!r}{where}"


def needed_fields(expressions: Iterable[str], keys: Iterable[str], aliases: dict, top_of: Callable[[str], str]) -> list[str]:
    """Top-level fields that evaluating ``expressions`` reads (through aliases, recursively)."""
    keys = list(keys)
    out: list[str] = []
    seen_alias: set[str] = set()

    def visit(expr, stack):
        for s in symbols(expr, keys, aliases):
            if s in aliases:
                if s in stack:
                    raise ValueError(f"the alias {s!r} refers to itself (through {' -> '.join(stack)})")
                if s not in seen_alias:
                    seen_alias.add(s)
                    visit(aliases[s], (*stack, s))
            else:
                out.append(top_of(s))

    for e in expressions:
        visit(e, ())
    return list(dict.fromkeys(out))


class Evaluator:
    """Evaluates expressions over a dict of top-level field arrays (awkward)."""

    def __init__(self, arrays: dict, aliases: dict, project: Callable[[str], object]):
        self._arrays = arrays
        self._aliases = aliases or {}
        self._project = project  # field path -> awkward array
        self._alias_values: dict[str, object] = {}

    def _get(self, name):
        if name in self._aliases:
            if name not in self._alias_values:
                self._alias_values[name] = self.evaluate(self._aliases[name])
            return self._alias_values[name]
        return self._project(name)

    def evaluate(self, expression: str):
        tree = parse(expression)
        scope: dict[str, object] = {**FUNCTIONS, **MODULES, GETTER: self._get}
        for name in [*self._arrays, *self._aliases]:
            if name.isidentifier():
                scope[name] = _Lazy(self, name)
        tree = _Resolve(self).visit(tree)
        ast.fix_missing_locations(tree)
        code = compile(tree, "<expression>", "eval")
        return eval(code, {"__builtins__": {}}, _Scope(scope))  # noqa: S307 - the user's own expression


class _Lazy:
    """A placeholder replaced by the value when an expression is resolved."""

    def __init__(self, ev, name):
        self.ev, self.name = ev, name


class _Scope(dict):
    def __getitem__(self, key):
        v = super().__getitem__(key)
        return v.ev._get(v.name) if isinstance(v, _Lazy) else v


class _Resolve(ast.NodeTransformer):
    """Rewrites dotted names of nested fields or aliases (``mu.pt``) into ``get("mu.pt")``."""

    def __init__(self, ev: Evaluator):
        self.ev = ev

    def visit_Attribute(self, node):
        name = _dotted(node)
        if name is not None and "." in name and (name in self.ev._aliases or self._is_field(name)):
            return ast.copy_location(ast.Call(func=ast.Name(id=GETTER, ctx=ast.Load()), args=[ast.Constant(value=name)], keywords=[]), node)
        return self.generic_visit(node)

    def _is_field(self, name):
        top = name.split(".")[0]
        return top in self.ev._arrays

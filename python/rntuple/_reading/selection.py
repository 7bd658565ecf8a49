"""The one selection language, and its uproot spelling.

Selections (``skim(where=, filters=)``, ``arrays(cut=)``, ``iterate(cut=)``, ``concatenate(cut=)``) are
expressions of the core (crate ``rntuple::expr``), evaluated column-wise in Rust over the Arrow batches read:
``&&`` ``||`` ``!``, comparisons, ``+ - * / % ^``, ``true``/``false``, fields by name (``Jet_pt``; ``Jet.pt`` for a
member of a record or of a collection of records), and the functions ``count sum any all max min abs sqrt exp
log``. uproot's ``cut=`` is Python; it is translated here with :mod:`ast` into the core's syntax:

* ``&`` ``and`` -> ``&&``, ``|`` ``or`` -> ``||``, ``~`` ``not`` -> ``!``, ``**`` -> ``^``, ``True``/``False``;
  chained comparisons (``0 < x < 2``) become ``&&`` of pairs;
* ``abs``/``np.abs``/``np.absolute``/``np.fabs`` -> ``abs``; ``np.sqrt``/``np.exp``/``np.log`` and the bare names;
  ``np.maximum``/``np.fmax``/``fmax`` (two arguments) -> ``max``, likewise ``min``;
* ``ak.num(x)`` / ``ak.num(x, axis=1)`` / ``ak.count(x, axis=1)`` -> ``count(x)``, ``ak.count_nonzero(x, axis=1)``
  -> ``count(x != 0)``, ``ak.sum``/``ak.any``/``ak.all``/``ak.max``/``ak.min`` with ``axis=1`` (or ``-1``) ->
  ``sum``/``any``/``all``/``max``/``min``; the core's own functions by their names;
* names: fields by name or dotted path, ``get("name")``, aliases (substituted, in parentheses).

Anything else (other numpy or awkward calls, subscripts, strings, ``//``, ``^`` as exclusive or...) raises
:class:`InvalidArgumentError` naming the construct. A text in the core's spelling (``&&``, ``||``, ``!``,
``true``, ``^``, or not Python at all) goes to the core as written, so either spelling works everywhere.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

import numpy as np

from .._rntuple import InvalidArgumentError
from .expressions import ExpressionError

#: The core's functions (``rntuple::expr::FUNCTIONS``).
CORE_FUNCTIONS = ("count", "sum", "any", "all", "max", "min", "abs", "sqrt", "exp", "log")

# Calls of uproot's spelling (bare, numpy's or awkward's) -> (core function, how many arguments).
_ELEMENTWISE = {
    "abs": ("abs", 1), "absolute": ("abs", 1), "fabs": ("abs", 1),
    "sqrt": ("sqrt", 1), "exp": ("exp", 1), "log": ("log", 1),
    "maximum": ("max", 2), "fmax": ("max", 2), "minimum": ("min", 2), "fmin": ("min", 2),
}
_REDUCERS = {"num": "count", "count": "count", "count_nonzero": "count", "sum": "sum", "any": "any", "all": "all",
             "max": "max", "min": "min"}
# Bare names the core takes as functions (`len` is its other name of `count`).
_BARE = (*CORE_FUNCTIONS, "len")
_NUMPY = ("np", "numpy")
_AWKWARD = ("ak", "awkward")

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%", ast.Pow: "^",
           ast.BitAnd: "&&", ast.BitOr: "||"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
# What only the core's spelling has: `&&`, `||`, `!` (not `!=`), `^` (power), `true`/`false`.
_CORE_ONLY = re.compile(r"&&|\|\||!(?!=)|\^|\btrue\b|\bfalse\b")
_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)*)(?![\w.])(?!\s*\()")


def is_core_spelling(text: str) -> bool:
    """Whether ``text`` is written in the core's spelling (or is no Python expression at all): it then goes to
    the core as it is."""
    if _CORE_ONLY.search(text):
        return True
    try:
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return True
    return False


def to_core(text: str, resolve: Callable[[str], str | None] | None = None, aliases: dict | None = None,
            what: str = "cut") -> tuple[str, list[str]]:
    """The selection ``text`` in the core's syntax, and the names of fields it reads (as ``resolve`` gives them).

    ``resolve(name)``: a field's name or dotted path (an uproot key) -> the name the core knows it by, or None
    when there is no such field; without it names are taken as written. ``aliases``: ``{name: expression}`` of
    uproot's spelling, substituted. ``what`` names the argument in messages (``"cut"``, ``"where"``)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be an expression string, not {text!r}")
    aliases = aliases or {}
    names: list[str] = []
    if is_core_spelling(text):
        return _core_text(text, resolve, aliases, names, what), list(dict.fromkeys(names))
    tr = _Translator(text, resolve, aliases, names, what)
    out = tr.translate(text, ())
    # A text the translation does not change (same operators, functions, names and numbers) goes to the core as
    # written, so that the core's messages point into the text as the user wrote it.
    return (out if tr.changed else text), list(dict.fromkeys(names))


def _core_text(text, resolve, aliases, names, what) -> str:
    """A text of the core's spelling with aliases substituted and names resolved (left to the core when it is
    no expression at all: its parser names the error)."""

    def sub(m):
        name = m.group(1)
        if name in ("true", "false"):
            return name
        if name in aliases:
            inner, used = to_core(aliases[name], resolve, {k: v for k, v in aliases.items() if k != name}, what)
            names.extend(used)
            return "(" + inner + ")"
        if resolve is None:
            names.append(name)
            return name
        core = resolve(name)
        if core is None:
            raise ExpressionError(f"no field {name!r} (named in the {what} {text!r}; not an alias either)")
        names.append(name)
        return core

    return _IDENT.sub(sub, text)


def _number(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if not np.isfinite(v):
        raise ValueError(f"{v!r}")
    return np.format_float_positional(float(v), trim="-")


def _dotted(node) -> str | None:
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    return None


class _Translator:
    """uproot's (Python) spelling of one selection -> the core's."""

    def __init__(self, text, resolve, aliases, names, what):
        self.text, self.resolve, self.aliases, self.names, self.what = text, resolve, aliases, names, what
        self.changed = False  # whether the core's spelling differs from the text's

    def refuse(self, node, why: str = "is not in the selection language"):
        part = ast.unparse(node) if isinstance(node, ast.AST) else str(node)
        raise InvalidArgumentError(
            f"the {self.what} {self.text!r}: {part!r} {why} (selections are evaluated by the core: fields, "
            "comparisons, arithmetic, & | ~ and or not, and the functions " + ", ".join(CORE_FUNCTIONS)
            + ", with ak.num/ak.sum/ak.any/ak.all/ak.max/ak.min(..., axis=1) and np.abs/sqrt/exp/log as their "
            "uproot spellings; compute anything else with expressions= or aliases= and select in Python)"
        )

    def translate(self, text: str, stack: tuple) -> str:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as e:
            raise SyntaxError(f"cannot parse the {self.what} {text!r}: {e.msg}") from None
        outer, self.source = getattr(self, "source", None), text.strip()
        try:
            return self.visit(tree.body, stack)
        finally:
            self.source = outer

    def name(self, name: str, node, stack: tuple) -> str:
        if name in self.aliases:
            self.changed = True
            if name in stack:
                raise ValueError(f"the alias {name!r} refers to itself (through {' -> '.join((*stack, name))})")
            inner = self.aliases[name]
            if is_core_spelling(inner):
                core, used = to_core(inner, self.resolve, {k: x for k, x in self.aliases.items() if k != name}, self.what)
                self.names.extend(used)
                return "(" + core + ")"
            return "(" + self.translate(inner, (*stack, name)) + ")"
        if self.resolve is None:
            self.names.append(name)
            return name
        core = self.resolve(name)
        if core is None:
            where = "" if name == self.text.strip() else f" (named in the {self.what} {self.text!r}; not an alias either)"
            raise ExpressionError(f"no field {name!r}{where}")
        self.names.append(name)
        self.changed |= core != name
        return core

    def visit(self, node, stack: tuple) -> str:
        v = self.visit
        if isinstance(node, ast.BoolOp):
            self.changed = True
            op = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + op.join(v(x, stack) for x in node.values) + ")"
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                self.refuse(node, f"uses {type(node.op).__name__}, which the selection language has not")
            self.changed |= isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.Pow))
            return f"({v(node.left, stack)} {op} {v(node.right, stack)})"
        if isinstance(node, ast.UnaryOp):
            self.changed |= not isinstance(node.op, ast.USub)
            if isinstance(node.op, (ast.Not, ast.Invert)):
                return f"!({v(node.operand, stack)})"
            if isinstance(node.op, ast.USub):
                return f"(-{v(node.operand, stack)})"
            return v(node.operand, stack)
        if isinstance(node, ast.Compare):
            parts, left = [], node.left
            for op, right in zip(node.ops, node.comparators):
                sym = _COMPARE.get(type(op))
                if sym is None:
                    self.refuse(node, f"uses {type(op).__name__}, which the selection language has not")
                parts.append(f"({v(left, stack)} {sym} {v(right, stack)})")
                left = right
            self.changed |= len(parts) > 1
            return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                try:
                    out = _number(node.value)
                except ValueError:
                    pass
                else:
                    self.changed |= ast.get_source_segment(self.source, node) != out
                    return out
            self.refuse(node, "is not a finite number or a boolean")
        if isinstance(node, ast.Name):
            return self.name(node.id, node, stack)
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted is None or dotted.split(".")[0] in _NUMPY + _AWKWARD:
                self.refuse(node)
            return self.name(dotted, node, stack)
        if isinstance(node, ast.Call):
            return self.call(node, stack)
        self.refuse(node)
        raise AssertionError("unreachable")

    def call(self, node: ast.Call, stack: tuple) -> str:
        func = _dotted(node.func)
        if func is None:
            self.refuse(node)
        module, _, fname = func.rpartition(".")
        if func == "get" and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            self.changed = True
            return self.name(node.args[0].value, node, stack)
        if module in _AWKWARD and fname in _REDUCERS:
            self.changed = True
            axis = [k for k in node.keywords if k.arg == "axis"]
            if len(node.args) != 1 or len(axis) != len(node.keywords) or len(axis) > 1:
                self.refuse(node, "takes one array and axis=1 here")
            try:
                value = ast.literal_eval(axis[0].value) if axis else (1 if fname == "num" else None)
            except ValueError:
                value = None
            if value not in (1, -1):
                self.refuse(node, "reduces per entry only with axis=1 (or -1)")
            arg = self.visit(node.args[0], stack)
            if fname == "count_nonzero":
                return f"count(({arg}) != 0)"
            return f"{_REDUCERS[fname]}({arg})"
        if module in _NUMPY or (not module and fname not in _BARE):
            core = _ELEMENTWISE.get(fname)
            if core is None or core[1] != len(node.args):
                self.refuse(node)
            self.changed |= func != core[0]
        elif not module:
            core = (fname, len(node.args))
        else:
            self.refuse(node)
        if node.keywords:
            self.refuse(node, "takes no keyword arguments here")
        return f"{core[0]}({', '.join(self.visit(a, stack) for a in node.args)})"

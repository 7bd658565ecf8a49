"""The Rust side of the layout checker (`check_layout.py`): a tokenizer, the module paths a file names, and the
files of a crate those paths lead to.

The tokenizer knows comments (line, nested block, doc), string literals (plain, raw `r#"..."#`, byte, C), char
and byte-char literals (told apart from lifetimes and labels), raw identifiers (`r#use`) and numbers, so a path
in a comment or a literal is never read as code. On the tokens, a scan finds

* `use` declarations with their whole tree (`use crate::a::{b, c::{d, e as f}, self};`, `use super::{x, y};`,
  `pub(crate) use ...`, `use self::a::*;`), wherever they stand (module level, in a block, in an inline module);
* paths in code and in attributes that start at `crate::`, `$crate::`, `super::` or `self::` (`crate::x::y::f()`,
  `super::z::T`, `#[arg(value_parser = crate::parse)]`), and paths that start at a child module of the current
  one (`use error::Error;` in lib.rs, `tfile::read(..)`: edges only when the caller asks, `child_paths`);
* inline `mod name { ... }` blocks (the paths inside resolve from `here::name`);
* `mod name;` declarations, with their `#[path = "..."]` attribute when they have one;

and leaves out every item (or statement, field, arm) under `#[cfg(test)]` or `#[cfg(all(test, ...))]`, however
many other attributes stand between the `cfg` and the item, and all of a file or inline module that starts
with `#![cfg(test)]`. A file that only a `#[cfg(test)] mod name;` declaration brings in (a test module in a file
of its own, such as `#[cfg(test)] #[path = "x_tests.rs"] mod tests;`) is test code: it is no node of the graph.

A path leads to the file of its longest module prefix, and on through the `use` that binds the next name there
when there is one: `crate::write::Entry`, which write/mod.rs re-exports (`pub use typed::Entry;`), is an edge to
write/typed.rs, not to write/mod.rs (so that a facade module re-exporting its children makes no circle with them).
"""
import os
import pathlib
import re

_IDENT = re.compile(r"[^\W\d]\w*")
_NUMBER = re.compile(r"\d\w*")
_PUNCT2 = ("::", "->", "=>")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}


class Tok:
    """One token: `kind` is "id" (identifier or keyword; `raw` for `r#name`), "life" (lifetime or label),
    "lit" (string, char or number literal) or "p" (punctuation: one character, or `::`, `->`, `=>`)."""

    __slots__ = ("kind", "text", "line", "raw")

    def __init__(self, kind, text, line, raw=False):
        self.kind, self.text, self.line, self.raw = kind, text, line, raw

    def is_id(self, *names):
        return self.kind == "id" and not self.raw and (not names or self.text in names)

    def is_p(self, *texts):
        return self.kind == "p" and self.text in texts

    def __repr__(self):
        return f"{self.kind}:{self.text}"


def _string_end(text, i):
    """The index after the closing quote of the (escaped) string whose opening quote is at `i`."""
    j, n = i + 1, len(text)
    while j < n and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, n)


def _raw_string_end(text, i):
    """`i` at the `#`s or the quote after `r`: the index after the closing `"##`, or None if this is no raw string."""
    m = re.compile(r'(#*)"').match(text, i)
    if not m:
        return None
    end = text.find('"' + m.group(1), m.end())
    return len(text) if end < 0 else end + 1 + len(m.group(1))


def tokenize(text):
    """The tokens of Rust source `text` (comments and whitespace dropped)."""
    toks, i, n, line = [], 0, len(text), 1

    def add(kind, value, end, raw=False):
        nonlocal i, line
        toks.append(Tok(kind, value, line, raw))
        line += text.count("\n", i, end)
        i = end

    while i < n:
        c = text[i]
        if c.isspace():
            if c == "\n":
                line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            line += text.count("\n", i, j)
            i = j
        elif c == '"':
            end = _string_end(text, i)
            add("lit", text[i + 1:end - 1], end)  # the text is kept: `#[path = "..."]` needs it
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":  # '\n', '\'', '\u{..}'
                j = i + 3
                while j < n and text[j] != "'":
                    j += 1
                add("lit", "' '", min(j + 1, n))
            elif i + 2 < n and text[i + 2] == "'":  # 'x'
                add("lit", "' '", i + 3)
            else:  # 'a, 'static, 'outer:
                m = _IDENT.match(text, i + 1)
                add("life", "'" + (m.group(0) if m else ""), m.end() if m else i + 1)
        elif c.isdigit():
            add("lit", "0", _NUMBER.match(text, i).end())
        elif c == "_" or c.isalpha():
            m = _IDENT.match(text, i)
            word, j = m.group(0), m.end()
            nxt = text[j] if j < n else ""
            if word in ("r", "br", "cr") and nxt in '#"' and (end := _raw_string_end(text, j)) is not None:
                add("lit", '""', end)
            elif word == "r" and nxt == "#" and (m2 := _IDENT.match(text, j + 1)):
                add("id", m2.group(0), m2.end(), raw=True)
            elif word in ("b", "c") and nxt == '"':
                add("lit", '""', _string_end(text, j))
            elif word == "b" and nxt == "'":
                k = j + 2 if j + 1 < n and text[j + 1] != "\\" else j + 3
                while k < n and text[k] != "'":
                    k += 1
                add("lit", "' '", min(k + 1, n))
            else:
                add("id", word, j)
        else:
            two = text[i:i + 2]
            if two in _PUNCT2:
                add("p", two, i + 2)
            else:
                add("p", c, i + 1)
    return toks


def _match(toks, k):
    """The index of the bracket closing the one at `k` (or the last index)."""
    want, depth = [], 0
    for j in range(k, len(toks)):
        t = toks[j]
        if t.kind != "p":
            continue
        if t.text in _OPEN:
            want.append(_OPEN[t.text])
            depth += 1
        elif t.text in _CLOSE:
            if want:
                want.pop()
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _is_cfg_test(attr):
    """Whether attribute tokens (between `#[` and `]`) are `cfg(test)` or `cfg(all(test, ...))`."""
    t = [x.text for x in attr]
    if t[:2] != ["cfg", "("]:
        return False
    if t[2:4] == ["test", ")"]:
        return True
    if t[2:4] == ["all", "("]:
        depth, j = 1, 4
        while j < len(t) and depth:
            if t[j] in "([{":
                depth += 1
            elif t[j] in ")]}":
                depth -= 1
            elif t[j] == "test" and depth == 1 and t[j - 1] in ("(", ",") and t[j + 1] in (",", ")"):
                return True
            j += 1
    return False


def _skip_item(toks, k):
    """The index after the item, statement, field or arm starting at `k` (a `#[cfg(test)]` one, to be left out):
    up to a `;`, a `{...}` block or a `,` at its own level, or up to (not past) the bracket closing its parent."""
    depth, angle, n = 0, 0, len(toks)
    while k < n:
        t = toks[k]
        if t.kind == "p":
            if t.text in _OPEN:
                if t.text == "{" and depth == 0:
                    return _match(toks, k) + 1
                depth += 1
            elif t.text in _CLOSE:
                if depth == 0:
                    return k
                depth -= 1
            elif depth == 0:
                if t.text == ";":
                    return k + 1
                if t.text == "<":
                    angle += 1
                elif t.text == ">":
                    angle = max(angle - 1, 0)
                elif t.text == "," and angle == 0:
                    return k + 1
        k += 1
    return k


def _parse_use_tree(toks, k, prefix, out):
    """Parses the use tree at `k` below `prefix`; appends (path, name bound) for each leaf to `out` (the path a list
    of names; the name None for a glob or `as _`); returns the index after the tree. A leading `::` (an extern
    crate) is kept as the segment "::"."""
    segs, n = list(prefix), len(toks)
    while k < n:
        t = toks[k]
        if t.is_p("::"):
            if not segs:
                segs.append("::")
            k += 1
        elif t.is_p("{"):
            k += 1
            while k < n and not toks[k].is_p("}"):
                before = k
                k = _parse_use_tree(toks, k, segs, out)
                if k < n and toks[k].is_p(","):
                    k += 1
                elif k == before:
                    k += 1  # not a use tree: step over it
                elif k < n and not toks[k].is_p("}"):
                    return k  # malformed: give up here
            return k + 1
        elif t.is_p("*"):
            out.append((segs, None))
            return k + 1
        elif t.is_p("$") and k + 1 < n and toks[k + 1].is_id("crate"):
            segs.append("crate")
            k += 2
        elif t.kind == "id":
            segs.append(t.text)
            k += 1
            if k < n and toks[k].is_p("::"):
                k += 1
                continue
            bound = segs[-2] if t.text == "self" and len(segs) > 1 else t.text
            if k + 1 < n and toks[k].is_id("as"):
                bound = toks[k + 1].text if toks[k + 1].kind == "id" else None
                k += 2
            out.append((segs, None if bound == "_" else bound))
            return k
        else:
            return k
    return k


def _inline_path(toks, k):
    """The names of the path starting at `k` (`crate::a::b`, stopping before a turbofish or a `{`)."""
    segs = [toks[k].text]
    k += 1
    while k + 1 < len(toks) and toks[k].is_p("::") and toks[k + 1].kind == "id":
        segs.append(toks[k + 1].text)
        k += 2
    return segs, k


class Scan:
    """What one file's code names: `refs` [(scope, path, line)] where scope is the inline-module path inside the file
    and path a list of names (head `crate`, `super`, `self`, a name, or "::"); `inline` {scope: inline module
    names declared there}; `mods` [(scope, name, path attribute or None, under cfg(test))] for each `mod name;`;
    `test_only`: the whole file is `#![cfg(test)]`."""

    def __init__(self, text):
        self.refs, self.inline, self.mods, self.test_only = [], {}, [], False
        self.uses = {}  # {scope: {name: path}}: the names the module-level `use`s bind
        self._run(tokenize(text))

    def _run(self, toks):
        n, k = len(toks), 0
        stack = []  # one entry per open bracket: the inline module's name for `mod name {`, else None
        attrs, attr_refs = [], []  # outer attributes waiting for their item, the paths in them
        next_mod = None

        def scope():
            return tuple(s for s in stack if s)

        while k < n:
            t = toks[k]
            if t.is_p("#") and k + 1 < n and (toks[k + 1].is_p("[") or (toks[k + 1].is_p("!") and k + 2 < n and toks[k + 2].is_p("["))):
                inner = toks[k + 1].is_p("!")
                b = k + 2 if inner else k + 1
                end = _match(toks, b)
                attr = toks[b + 1:end]
                k = end + 1
                if inner and _is_cfg_test(attr):
                    if not stack:
                        self.test_only = True
                        return
                    depth = 0  # the rest of this inline module is test code
                    while k < n and not (depth == 0 and toks[k].is_p("}")):
                        depth += 1 if toks[k].is_p("(", "[", "{") else (-1 if toks[k].is_p(")", "]", "}") else 0)
                        k += 1
                else:
                    refs = self.refs if inner else attr_refs
                    if not inner:
                        attrs.append(attr)
                    for j in range(len(attr) - 1):  # `#[arg(value_parser = crate::parse)]` names crate::parse
                        if attr[j].kind == "id" and attr[j + 1].is_p("::") and not (j and attr[j - 1].is_p("::", ".")):
                            refs.append((scope(), _inline_path(attr, j)[0], attr[j].line))
                continue
            if attrs:
                test = any(_is_cfg_test(a) for a in attrs)
                if not test:
                    self.refs += attr_refs
                attr_refs = []
                path = next((a[2].text for a in attrs if len(a) == 3 and a[0].is_id("path") and a[1].is_p("=")
                             and a[2].kind == "lit"), None)
                attrs = []
                j = k
                if toks[j].is_id("pub"):
                    j += 1
                    if j < n and toks[j].is_p("("):
                        j = _match(toks, j) + 1
                if j + 2 < n and toks[j].is_id("mod") and toks[j + 1].kind == "id" and toks[j + 2].is_p(";"):
                    self.mods.append((scope(), toks[j + 1].text, path, test))
                    k = j + 3
                    continue
                if test:
                    k = _skip_item(toks, k)
                    continue
            if t.kind == "p":
                if t.text in _OPEN:
                    stack.append(next_mod if t.text == "{" else None)
                    next_mod = None
                elif t.text in _CLOSE:
                    if stack:
                        stack.pop()
                elif t.text == "$" and k + 2 < n and toks[k + 1].is_id("crate") and toks[k + 2].is_p("::"):
                    line = toks[k].line
                    segs, k = _inline_path(toks, k + 1)
                    self.refs.append((scope(), segs, line))
                    continue
                k += 1
                continue
            if t.kind != "id" or t.raw:
                k += 1
                continue
            word = t.text
            prev = toks[k - 1] if k else None
            if word == "pub" and k + 1 < n and toks[k + 1].is_p("("):
                k = _match(toks, k + 1) + 1  # pub(crate), pub(in crate::x): a visibility, no import
                continue
            if word == "mod" and k + 2 < n and toks[k + 1].kind == "id":
                if toks[k + 2].is_p("{"):
                    next_mod = toks[k + 1].text
                    self.inline.setdefault(scope(), set()).add(next_mod)
                elif toks[k + 2].is_p(";"):
                    self.mods.append((scope(), toks[k + 1].text, None, False))
                k += 2
                continue
            if word == "use" and k + 1 < n and not toks[k + 1].is_p("<"):
                paths, line = [], t.line
                k = _parse_use_tree(toks, k + 1, [], paths)
                self.refs += [(scope(), p, line) for p, _ in paths]
                if all(stack):  # at module level (not in a function's block): names `crate::here::name` reaches
                    for p, name in paths:
                        if name:
                            self.uses.setdefault(scope(), {})[name] = p
                continue
            if k + 1 < n and toks[k + 1].is_p("::") and not (prev is not None and prev.is_p("::", ".")):
                segs, k = _inline_path(toks, k)
                self.refs.append((scope(), segs, t.line))
                continue
            k += 1


class Crate:
    """The files of one crate (its `src`), the module path of each, and what each names."""

    def __init__(self, src):
        self.src = src
        files = sorted(src.rglob("*.rs"))
        self.scans = {f: Scan(f.read_text()) for f in files}
        self.module = {f: self.module_of(f) for f in files}
        self._apply_declarations(files)
        self.files = [f for f in files if f not in self.test_files and not self.scans[f].test_only]
        self.by_module = {m: f for f, m in self.module.items() if f in self.files}
        self.children = {}
        for m in self.by_module:
            if m:
                self.children.setdefault(m[:-1], set()).add(m[-1])
        for f in self.files:
            for scope, names in self.scans[f].inline.items():
                self.children.setdefault(self.module[f] + scope, set()).update(names)

    def module_of(self, path):
        parts = list(path.relative_to(self.src).with_suffix("").parts)
        if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
            parts = parts[:-1]
        return tuple(parts)

    def _mod_rs(self, f):
        return f.name == "mod.rs" or (f.parent == self.src and f.name in ("lib.rs", "main.rs"))

    def _apply_declarations(self, files):
        """A `#[path = "..."] mod name;` gives its file the module path `here::name`; a file that only `#[cfg(test)]`
        declarations bring in is test code (`test_files`)."""
        declared, test_declared = set(), set()
        for f in files:
            for scope, name, path_attr, test in self.scans[f].mods:
                base = f.parent if path_attr is not None or self._mod_rs(f) else f.parent / f.stem
                for part in scope:
                    base = base / part
                if path_attr is not None:
                    targets = [base / path_attr]
                else:
                    targets = [base / f"{name}.rs", base / name / "mod.rs"]
                for t in (pathlib.Path(os.path.normpath(t)) for t in targets):
                    if t not in self.module:
                        continue
                    (test_declared if test else declared).add(t)
                    if path_attr is not None and not test:
                        self.module[t] = self.module[f] + scope + (name,)
        self.test_files = test_declared - declared

    def file_of(self, parts):
        """The file defining the longest prefix of module path `parts`."""
        for k in range(len(parts), -1, -1):
            f = self.by_module.get(tuple(parts[:k]))
            if f:
                return f
        return None

    def resolve(self, module, path, child_paths=True):
        """The module path that `path` (names, as written in module `module`) leads to, or None (another crate, a
        prelude name, a local item). `child_paths`: a path may start at a child module's name (`error::Error`)."""
        head, rest = path[0], list(path[1:])
        if head == "crate":
            base = []
        elif head in ("super", "self"):
            base = list(module)
            names = list(path)
            while names and names[0] in ("super", "self"):
                if names.pop(0) == "super":
                    if not base:
                        return None
                    base = base[:-1]
            rest = names
        elif child_paths and head in self.children.get(tuple(module), ()):
            base, rest = list(module), list(path)
        else:
            return None
        rest = [x for x in rest if x != "self"]
        return base + rest

    def locate(self, parts, depth=0):
        """The file that defines what module path `parts` names: the file of its longest module prefix, unless the
        name after that prefix is one a `use` of that module binds (a re-export such as `pub use typed::Entry;`
        in write/mod.rs, or an import a child reaches by `super::name`): then where that `use` leads (the file
        itself when the `use` names another crate or an item of its own, such as a `macro_rules!` macro)."""
        parts = list(parts)
        for k in range(len(parts), -1, -1):
            f = self.by_module.get(tuple(parts[:k]))
            if f:
                break
        else:
            return None
        rest, scope = parts[k:], ()
        inline = self.scans[f].inline
        while rest and rest[0] in inline.get(scope, ()):
            scope, rest = scope + (rest[0],), rest[1:]
        bound = self.scans[f].uses.get(scope, {}).get(rest[0]) if rest else None
        if bound is None or depth > 16:
            return f
        there = self.resolve(self.module[f] + scope, bound)
        return f if there is None else self.locate(there + rest[1:], depth + 1)


def rust_import_lines(crate, path, child_paths=True):
    """{file of `crate`: first line} of the files that file `path` names (a `use`, a path in code; with
    `child_paths`, also a path starting at a child module's name), re-exports followed to the defining file."""
    targets = {}
    here = crate.module[path]
    for scope, segs, line in crate.scans[path].refs:
        p = crate.resolve(here + scope, segs, child_paths)
        if p is None:
            continue
        f = crate.locate(p)
        if f and f != path:
            targets.setdefault(f, line)
    return targets


def rust_imports(crate, path, child_paths=True):
    """The files of `crate` that file `path` names."""
    return set(rust_import_lines(crate, path, child_paths))

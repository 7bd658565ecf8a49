"""What a notebook shows for a file and an RNTuple (``_repr_html_``): the totals and the schema tree, each field with
its type, its bytes on disk and uncompressed (its own columns' and all its sub-fields', as ``rntuple info`` and
``rntuple report`` count them) and its compression factor, nested fields collapsible (``<details>``: no script, no
style sheet from the network)."""

from __future__ import annotations

import html

#: Top-level fields shown; the rest are counted (a NanoAOD file has about a thousand).
MAX_FIELDS = 300

_STYLE = (
    "<style>.rntuple-repr table{border-collapse:collapse;font-size:90%}"
    ".rntuple-repr td,.rntuple-repr th{padding:1px 8px;text-align:left;vertical-align:top}"
    ".rntuple-repr td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".rntuple-repr details>summary{cursor:pointer}"
    ".rntuple-repr .t{color:#555;font-family:monospace}.rntuple-repr .s{color:#777}</style>"
)


def size(n: float) -> str:
    """Bytes in the largest unit that keeps the number at 1 or more (``1.5 MB``; decimal units, as ``ls -h --si``)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


def _type(r: dict) -> str:
    """A field record's type name; an untyped record or collection says so."""
    return r["type"] or f"(untyped {r['role']})"


def _sizes(sizes: list, fid: int) -> str:
    """``stored (uncompressed uncompressed, factor x)`` of field ``fid``."""
    stored, unzipped, _ = sizes[fid] if fid < len(sizes) else (0, 0, 0)
    factor = f", {unzipped / stored:.2f}x" if stored else ""
    return f"{size(stored)} ({size(unzipped)} uncompressed{factor})"


def _subtree(records: dict, fid: int, sizes: list) -> str:
    """The nested fields of ``fid`` as a list with their sizes, each collapsible when it has children of its own."""
    items = []
    for child in records[fid]["children"]:
        r = records[child]
        label = f"{html.escape(r['name'])} <span class='t'>{html.escape(_type(r))}</span> <span class='s'>{_sizes(sizes, child)}</span>"
        if r["children"]:
            items.append(f"<li><details><summary>{label}</summary>{_subtree(records, child, sizes)}</details></li>")
        else:
            items.append(f"<li>{label}</li>")
    return "<ul style='margin:0;padding-left:1.2em'>" + "".join(items) + "</ul>"


def ntuple_html(t, max_fields: int = MAX_FIELDS) -> str:
    """The HTML of the RNTuple ``t``: its totals and schema tree (see the module)."""
    records = {r["id"]: r for r in t.field_records}
    sizes = t._native.field_sizes()
    tops = [r for r in records.values() if r["parent"] is None]
    total = t.storage_stats()
    ratio = total["uncompressed_bytes"] / total["stored_bytes"] if total["stored_bytes"] else 1.0
    head = (
        f"<b>RNTuple {html.escape(t.name)}</b>: {t.num_entries:,} entries, {len(tops):,} top-level fields, "
        f"{total['clusters']:,} clusters, {total['pages']:,} pages, {size(total['stored_bytes'])} on disk "
        f"({size(total['uncompressed_bytes'])} uncompressed, compression factor {ratio:.2f})"
    )
    rows = []
    for r in tops[:max_fields]:
        name = html.escape(r["name"])
        cell = f"<details><summary>{name}</summary>{_subtree(records, r['id'], sizes)}</details>" if r["children"] else name
        stored, unzipped, _ = sizes[r["id"]] if r["id"] < len(sizes) else (0, 0, 0)
        factor = f"{unzipped / stored:.2f}" if stored else ""
        cells = f"<td class='n'>{size(stored)}</td><td class='n'>{size(unzipped)}</td><td class='n'>{factor}</td>"
        rows.append(f"<tr><td>{cell}</td><td class='t'>{html.escape(_type(r))}</td>{cells}</tr>")
    more = f"<p>... and {len(tops) - max_fields:,} more top-level fields</p>" if len(tops) > max_fields else ""
    table = (
        "<table><tr><th>field</th><th>type</th><th>on disk</th><th>uncompressed</th><th>factor</th></tr>" + "".join(rows) + "</table>"
    )
    return f"<div class='rntuple-repr'>{_STYLE}<p>{head}</p>{table}{more}</div>"


def file_html(f) -> str:
    """The HTML of a file: its path and the HTML of each RNTuple in it, collapsed after the first."""
    names = f.ntuple_names()
    parts = [f"<p><b>{html.escape(str(f._path))}</b>: {len(names)} RNTuple{'s' if len(names) != 1 else ''}</p>"]
    for i, name in enumerate(names):
        try:
            body = ntuple_html(f[name])
        except Exception as e:  # a notebook shows what is wrong instead of a traceback
            body = f"<p>RNTuple {html.escape(name)}: {html.escape(str(e))}</p>"
        parts.append(body if i == 0 else f"<details><summary>RNTuple {html.escape(name)}</summary>{body}</details>")
    return "<div class='rntuple-repr'>" + "".join(parts) + "</div>"

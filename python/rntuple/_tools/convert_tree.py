"""TTree -> RNTuple, read with uproot and written with this package's writer, streamed in steps of bounded size.

The layout follows ROOT's ``RNTupleImporter`` (``tree/ntupleutil/.../RNTupleImporter.cxx``):

* a branch of one value, a fixed-size array, a ``std::vector`` or a string becomes a top-level field of the branch's
  name and type (dots in names become underscores: RNTuple field names have no dots);
* the branches counted by one count leaf (NanoAOD's ``nMuon`` with ``Muon_pt[nMuon]``, ``Muon_eta[nMuon]``) become
  one untyped collection ``_collectionN`` (N numbers the count leaves in sorted order, as the importer's
  ``std::map``) whose item ``_0`` is an untyped record with one member per branch (``Muon_pt``, ``Muon_eta``); the
  count leaf itself is no field; collections come after the other fields;
* the RNTuple takes the tree's name unless ``ntuple`` is given.

As the importer, it also adds *projected* fields onto each collection: ``Muon_pt`` (``ROOT::VecOps::RVec<float>``,
projected from ``_collection0._0.Muon_pt``) and ``nMuon`` (``ROOT::RNTupleCardinality<std::uint32_t>``, from
``_collection0``), so that analyses written for importer files find their branch names. The stored columns are the
same as the importer's.

Run as ``python -m rntuple._tools.convert_tree INPUT OUTPUT [--tree NAME] [--ntuple NAME] [--compression C]
[--no-progress]`` (what ``rntuple convert`` runs): prints one JSON object with what was done.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def _pick_tree(f, tree: str | None) -> str:
    if tree is not None:
        return tree
    names = sorted({k.split(";")[0] for k, c in f.classnames(recursive=True).items() if c in ("TTree", "TNtuple", "TNtupleD")})
    if len(names) != 1:
        raise ValueError(f"{f.file_path} holds {len(names)} TTrees ({', '.join(names) or 'none'}); pass tree=")
    return names[0]


def _field_name(branch_name: str) -> str:
    return branch_name.replace(".", "_")


def _member_type(form, path: str):
    from .._writing.schema import root_type_of_form

    return root_type_of_form(form, path)


def plan(tree) -> tuple[list[tuple[str, Any]], list[str], dict[str, tuple[str, list[str]]]]:
    """The RNTuple schema of a TTree (uproot's TTree object) as ROOT's importer lays it out: (schema as (field, type)
    pairs, the plain branches in order, {count leaf name: (collection field, [counted branches])})."""
    counted: dict[str, list[str]] = {}
    count_names: set[str] = set()
    plain: list[str] = []
    for b in tree.branches:
        cb = getattr(b, "count_branch", None)
        if cb is not None and len(b.branches) == 0:
            counted.setdefault(b.count_leaf.member("fName"), []).append(b.name)
            count_names.add(cb.name)
        else:
            plain.append(b.name)
    plain = [n for n in plain if n not in count_names]
    forms = {}
    names = plain + [n for members in counted.values() for n in members]
    for n in names:
        forms[n] = tree[n].interpretation.awkward_form(tree.file)
    schema: list[tuple[str, Any]] = [(_field_name(n), _member_type(forms[n], _field_name(n))) for n in plain]
    collections: dict[str, tuple[str, list[str]]] = {}
    for i, leaf in enumerate(sorted(counted)):
        field = f"_collection{i}"
        members = counted[leaf]
        record = {}
        for n in members:
            form = forms[n]
            content = getattr(form, "content", None)
            if content is None:
                raise TypeError(f"branch '{n}' counted by '{leaf}' is not read as a jagged array by uproot ({form})")
            record[_field_name(n)] = _member_type(content, f"{field}._0.{_field_name(n)}")
        schema.append((field, [record]))
        collections[leaf] = (field, members)
    return schema, plain, collections


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, progress: bool | None):
    """A tqdm.auto bar on stderr counting entries (None: only when stderr is a terminal), or no bar without tqdm."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit=" entries", disable=None if progress is None else not progress, file=sys.stderr)


def convert_tree(input, output, tree: str | None = None, ntuple: str | None = None, compression: int = 505,
                 step_size: int | str = "100 MB", progress: bool | None = None, same_page_merging: bool = True) -> dict:
    """Converts the TTree ``tree`` of ``input`` (the only one when None) into the RNTuple ``ntuple`` (default: the
    tree's name) of the new file ``output``, as ROOT's RNTupleImporter lays it out (see the module's documentation),
    in steps of ``step_size`` read by uproot. ``progress``: a tqdm bar (None: when stderr is a terminal);
    ``same_page_merging``: store a page equal to an earlier one of its cluster once (ROOT 6.40's default). Returns a
    dict: input, output, tree, ntuple, entries, fields, collections ({count leaf: collection field})."""
    import awkward as ak
    import uproot

    from .._writing.writers import Writer

    with uproot.open(os.fspath(input)) as f:
        name = _pick_tree(f, tree)
        t = f[name]
        schema, plain, collections = plan(t)
        if not schema:
            raise ValueError(f"TTree '{name}' of {input} has no branches to convert")
        ntuple = ntuple or name.split("/")[-1]
        branches = plain + [n for _, members in collections.values() for n in members]
        total = t.num_entries
        entries = 0
        bar = progress_bar(total, progress)
        try:
            projections = {}
            for leaf, (field, members) in collections.items():
                projections.update({_field_name(n): f"{field}.{_field_name(n)}" for n in members})
                projections[_field_name(leaf)] = field
            with Writer(os.fspath(output), ntuple, dict(schema), compression=compression,
                        projections=projections, same_page_merging=same_page_merging) as w:
                for chunk in t.iterate(branches, step_size=step_size, library="ak"):
                    data = {_field_name(n): chunk[n] for n in plain}
                    for field, members in collections.values():
                        data[field] = ak.zip({_field_name(n): chunk[n] for n in members})
                    w.extend(data)
                    entries += len(chunk)
                    bar.update(len(chunk))
        finally:
            bar.close()
    return {"input": os.fspath(input), "output": os.fspath(output), "tree": name, "ntuple": ntuple, "entries": entries,
            "fields": [n for n, _ in schema], "collections": {leaf: c for leaf, (c, _) in collections.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rntuple._tools.convert_tree", description="TTree -> RNTuple (uproot)")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--tree")
    p.add_argument("--ntuple")
    p.add_argument("--compression", type=int, default=505)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-same-page-merging", action="store_true")
    a = p.parse_args(argv)
    try:
        out = convert_tree(a.input, a.output, a.tree, a.ntuple, a.compression, progress=False if a.no_progress else None,
                           same_page_merging=not a.no_same_page_merging)
    except Exception as e:  # one line for the command line, as the Rust commands do
        print(f"rntuple: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

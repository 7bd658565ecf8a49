"""Files written by ROOT 6.40 at test time (rootgen.py), read by our CLI, compared entry by entry with ROOT's own
RNTupleReader (the oracle in root_helpers.cxx).

Comparisons are exact: integers as integers, doubles to the same double, floats to the same float32 (the dump
may print the shortest decimal that reads back to it), NaN/inf as the strings "nan"/"inf"/"-inf", the sign of
zero included. The only normalization: elements of std::unordered_* containers are compared as a multiset (ROOT's
in-memory order after reading is not the order on disk, and the order is unspecified anyway).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import rootgen
from rootgen import compare

MiB = 1024 * 1024

JSON_CASES = [(c, nt) for c, spec in rootgen.CASES.items() if spec["oracle"] == "json" for nt in spec["ntuples"]]
BIGPAGE_CASES = [c for c, spec in rootgen.CASES.items() if spec["oracle"] == "floatvec"]


def _ids(params):
    return [f"{c}-{nt}" for c, nt in params]


def assert_entries_equal(expected: list, actual: list, what: str, first_index=0):
    assert len(actual) == len(expected), f"{what}: expected {len(expected)} entries, got {len(actual)}"
    errors = []
    for k, (e, a) in enumerate(zip(expected, actual)):
        compare(e, a, f"entry[{first_index + k}]", errors, limit=30, check_top_order=True)
        if len(errors) >= 30:
            break
    assert not errors, f"{what}: {len(errors)}+ differences from ROOT:\n  " + "\n  ".join(errors)


def _top_level(generated, case, nt):
    return [f["name"] for f in generated.describe(case, nt)["fields"]]


# ------------------------------------------------------------------------------------------------------------
# The generated files have the properties they were made for (otherwise the comparisons below test less than
# they claim).


def _pages(describe):
    """(cluster index, physical column, compression, n elements, bytes on storage) of every page."""
    out = []
    for k, cl in enumerate(describe["clusters"]):
        for col in cl["columns"]:
            for n, nbytes in col["pages"]:
                out.append((k, col["physical_id"], col["compression"], n, nbytes))
    return out


@pytest.mark.parametrize("case", list(rootgen.CASES))
def test_generated_file_properties(generated, case):
    spec = rootgen.CASES[case]
    c = generated.case(case)
    assert (generated.dir / c["file"]).stat().st_size > 0
    for nt in spec["ntuples"]:
        d = generated.describe(case, nt)
        assert d["name"] == nt
        pages = _pages(d)
        if case.startswith("comp_"):
            assert d["num_entries"] == 5000
            assert d["num_clusters"] >= 3
            assert {p[2] for p in pages} == {spec["compression"]}, "every column range has the requested setting"
            per_column = {}
            for p in pages:
                per_column[p[1]] = per_column.get(p[1], 0) + 1
            assert max(per_column.values()) >= 10, f"several pages per column: {per_column}"
        elif case.startswith("bigpage_"):
            col_bits = {c["physical_id"]: c["bits"] for c in d["columns"]}
            biggest = max(pages, key=lambda p: p[3] * col_bits[p[1]])
            assert biggest[3] * col_bits[biggest[1]] // 8 > 16 * MiB, f"a page above 16 MiB: {biggest}"
            assert biggest[2] == spec["compression"]
            if case.endswith("smallkeys"):
                import uproot

                anchor = uproot.open(generated.file(case))[nt]
                assert anchor.member("fMaxKeySize") == 128 * 1024
                assert biggest[4] > 128 * 1024, "the compressed page exceeds the maximum key size: a chunked blob"
        elif case == "parallel":
            assert d["num_entries"] == 4 * 2500
            assert d["num_clusters"] >= 400
        elif case == "cluster_groups":
            assert d["num_entries"] == 3000 and d["num_clusters"] == 30 and d["num_cluster_groups"] >= 7
        elif case == "extension":
            names = [f["name"] for f in d["fields"]]
            assert names == ["a", "v", "late_i", "late_v", "late_s", "late_opt", "late_pt"]
            assert d["num_clusters"] >= 5
        elif case == "types":
            projected = [f["name"] for f in d["fields"] if f["projected"]]
            assert projected == ["proj_f", "proj_xs", "n_vf64", "n_vpts32"]
            types = {c["type"] for c in d["columns"]}
            for needed in ("Real16", "Real32Trunc", "Real32Quant", "Bit", "Switch", "SplitReal32", "Byte", "Char"):
                assert needed in types, f"column type {needed} present in {sorted(types)}"
        elif case == "empty":
            assert d["num_entries"] == 0


def test_generation_all_cases_succeeded(generated):
    failed = {k: v["error"] for k, v in generated.manifest["cases"].items() if v["error"]}
    assert not failed, f"ROOT could not produce: {failed}"


# ------------------------------------------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("case,nt", JSON_CASES, ids=_ids(JSON_CASES))
def test_dump_all_entries_equal_root(generated, cli, case, nt):
    expected = generated.oracle(case, nt)
    actual = cli.dump(generated.file(case), nt)
    assert_entries_equal(expected, actual, f"rntuple dump {case}.root --ntuple {nt}")


@pytest.mark.parametrize("case,nt", JSON_CASES, ids=_ids(JSON_CASES))
def test_dump_each_field_alone_equals_root(generated, cli, case, nt):
    """`--fields f` for every top-level field (one failure message listing every field that differs)."""
    expected = generated.oracle(case, nt)
    names = _top_level(generated, case, nt)
    if case not in ("types", "extension", "mixed", "two_ntuples"):
        names = names[:1] + names[-1:]  # the other cases have few, simple fields: first and last suffice
    failures = []
    for name in names:
        try:
            actual = cli.dump(generated.file(case), nt, fields=[name])
            assert_entries_equal([{name: e[name]} for e in expected], actual, f"--fields {name}")
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0] + ("\n    " + "\n    ".join(str(exc).splitlines()[1:6])))
    assert not failures, f"{len(failures)} of {len(names)} fields differ:\n" + "\n".join(failures)


@pytest.mark.parametrize("case,nt", JSON_CASES, ids=_ids(JSON_CASES))
def test_dump_field_subsets_keep_schema_order(generated, cli, case, nt):
    names = _top_level(generated, case, nt)
    # one field only: --fields with that field (the order check is then trivial, the subset path still runs)
    subset = names if len(names) < 2 else [names[-1], names[0]] if len(names) < 4 else [names[-1], names[1], names[len(names) // 2]]
    expected_order = [n for n in names if n in subset]
    expected = [{k: e[k] for k in expected_order} for e in generated.oracle(case, nt)]
    actual = cli.dump(generated.file(case), nt, fields=subset)
    # DESIGN.md: "keys = top-level field names in schema order" -- also when --fields lists them in another order
    assert_entries_equal(expected, actual, f"--fields {','.join(subset)} (DESIGN.md: keys in schema order "
                                           f"{expected_order}, not in the order given to --fields)")


def _ranges(n, case):
    r = {(0, min(1, n)), (n, n), (0, n)}
    if n >= 10:
        r |= {(3, 7), (n - 2, n), (n // 2, n // 2)}
    if case == "parallel":
        r |= {(1234, 1789), (9990, 10000), (24, 26)}  # across cluster boundaries (25 entries per cluster)
    if case == "cluster_groups":
        r |= {(390, 410), (1599, 2801)}  # across cluster and cluster-group boundaries
    if case == "extension":
        r |= {(45, 55), (108, 112), (0, 30)}  # around the two model extensions
    if case.startswith("comp_"):
        r |= {(1999, 2001), (4100, 4200)}
    return sorted(r)


@pytest.mark.parametrize("case,nt", JSON_CASES, ids=_ids(JSON_CASES))
def test_dump_entry_ranges_equal_root(generated, cli, case, nt):
    expected = generated.oracle(case, nt)
    n = len(expected)
    names = _top_level(generated, case, nt)
    for start, stop in _ranges(n, case):
        actual = cli.dump(generated.file(case), nt, entries=(start, stop))
        assert_entries_equal(expected[start:stop], actual, f"--entries {start}:{stop}", first_index=start)
    if n >= 3 and len(names) >= 2:
        start, stop = n // 3, n // 3 + 2
        field = names[-1]
        actual = cli.dump(generated.file(case), nt, fields=[field], entries=(start, stop))
        assert_entries_equal([{field: e[field]} for e in expected[start:stop]], actual,
                             f"--fields {field} --entries {start}:{stop}", first_index=start)


# ------------------------------------------------------------------------------------------------------------
# Pages above 16 MiB: the vector column compared with ROOT's values as arrays (20 MB of floats).


@pytest.mark.parametrize("case", BIGPAGE_CASES)
def test_big_page_equals_root(generated, cli, case):
    stem = generated.stem(case, "big")
    sizes = np.fromfile(str(stem) + ".sizes", dtype="<u8")
    values = np.fromfile(str(stem) + ".values", dtype="<f4")
    assert sizes.sum() == values.size and values.size * 4 > 16 * MiB
    actual = cli.dump(generated.file(case), "big")
    assert len(actual) == sizes.size
    expected_n = generated.oracle(case, "big")
    offset = 0
    for i, (entry, n) in enumerate(zip(actual, sizes)):
        assert list(entry) == ["n", "v"], f"entry {i}: keys {list(entry)}"
        assert not compare(expected_n[i]["n"], entry["n"], f"entry[{i}].n")
        v = entry["v"]
        assert isinstance(v, list) and len(v) == n, f"entry {i}: {len(v) if isinstance(v, list) else v!r} " \
                                                    f"elements, ROOT has {n}"
        got = np.asarray(v, dtype=np.float64).astype(np.float32)
        want = values[offset:offset + n]
        bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        assert bad.size == 0, f"entry {i}: {bad.size} of {n} floats differ, first at [{bad[0]}]: " \
                              f"{v[bad[0]]!r} vs ROOT {want[bad[0]]!r}"
        offset += n
    # and a range in the middle of the page
    part = cli.dump(generated.file(case), "big", fields=["v"], entries=(2, 3))
    start = int(sizes[:2].sum())
    got = np.asarray(part[0]["v"], dtype=np.float64).astype(np.float32)
    assert np.array_equal(got.view(np.uint32), values[start:start + int(sizes[2])].view(np.uint32))


# ------------------------------------------------------------------------------------------------------------
# info


@pytest.mark.parametrize("case", list(rootgen.CASES))
def test_info_lists_every_ntuple(generated, cli, case):
    path = generated.file(case)
    text = cli.info(path)
    for nt in rootgen.CASES[case]["ntuples"]:
        d = generated.describe(case, nt)
        assert re.search(rf"(?<![\w.]){re.escape(nt)}(?![\w.])", text), f"`rntuple info` does not name {nt!r}:\n{text}"
        assert re.search(rf"(?<![\d,.]){d['num_entries']}(?![\d,.])", text) or \
            f"{d['num_entries']:,}" in text, f"`rntuple info` does not give {nt}'s {d['num_entries']} entries:\n{text}"
        one = cli.info(path, nt)
        assert nt in one and (str(d["num_entries"]) in one or f"{d['num_entries']:,}" in one), one


def test_info_and_dump_mixed_file_with_other_objects(generated, cli):
    """The TTree, the histogram and the directory beside the RNTuple are not RNTuples."""
    text = cli.info(generated.file("mixed"))
    assert "events" in text
    for other in ("tree", "hist", "subdir"):
        p = cli.run("dump", generated.file("mixed"), "--ntuple", other)
        assert p.returncode != 0, f"`dump --ntuple {other}` (not an RNTuple) succeeded: {p.stdout[:200]!r}"
        assert p.returncode < 128 and p.returncode > 0, f"crashed with {p.returncode}"


def test_dump_unknown_ntuple_is_an_error(generated, cli):
    p = cli.run("dump", generated.file("two_ntuples"), "--ntuple", "third")
    assert 0 < p.returncode < 128, p.returncode
    assert b"third" in p.stderr, p.stderr

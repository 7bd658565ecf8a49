"""Random schemas written by each of our writers, read back by ROOT 6.40 and by uproot value for value (issue 19).

Every seed draws a schema of the types the writer supports, nested up to depth 3 (collections, RVec, optionals,
unique_ptr, variants, maps, sets, bitsets, arrays, pairs, tuples, atomics and every scalar) and random entries,
and writes them three ways: the sequential writer from Python (small pages and clusters: many of each), the
parallel writer from Python (three fill contexts, small clusters) and `rntuple import-json` (the CLI). Each file is
then read by ROOT's RNTupleReader (root_helpers.cxx's oracle, all files in one ROOT process) and by uproot, and
every value of every entry is compared with what was written (rootgen.compare: exact, floats as float32). Merge
(the three files into one), skim with pages copied (a field subset) and skim re-encoded (an entry range inside
clusters), a second RNTuple added in update mode, and the last field added by late model extension half-way
(import-json --late-fields), are checked the same way.

RNTUPLE_RANDOM_SEEDS sets the number of seeds (default 50; `make test-long` runs more). An index field `i` lets
the parallel writer's file be compared whatever the order of its contexts' clusters.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import awkward as ak
import pytest
import uproot
from root_subprocess import compare_entries, root_oracle

import uproot_norm
from rootgen import compare

SEEDS = int(os.environ.get("RNTUPLE_RANDOM_SEEDS", "50"))
WRITERS = ("seq", "par", "cli")

SCALARS = ("bool", "char", "std::int8_t", "std::uint8_t", "std::int16_t", "std::uint16_t", "std::int32_t",
           "std::uint32_t", "std::int64_t", "std::uint64_t", "float", "double", "std::string", "Double32_t")
# Associative instantiations ROOT 6.40 reads without a dictionary, or with the one rootgen builds.
ASSOCIATIVE = ("std::set<std::int32_t>", "std::multiset<std::string>", "std::map<std::string,std::int32_t>",
               "std::multimap<std::int32_t,float>")
VARIANT = "std::variant<std::int32_t,std::string,double>"

# Known uproot 5.7.7 issues, worked around in the uproot comparison only (ROOT is compared on everything):
# * it reads a std::variant's Switch column wrongly after the first cluster (test_oracle_vs_uproot.py,
#   KNOWN_UPROOT_ISSUES): fields holding a variant are compared on the first cluster;
# * it reads `char` (a signed Char column, which ROOT reads as -128..127) as unsigned: -40 comes back as 216;
#   uproot's char values are mapped back to signed before comparing;
# * it cannot build an optional (std::optional, std::unique_ptr) of a std::variant ("IndexedOptionArray cannot
#   contain a union-type"): such fields are left to ROOT. Any other uproot exception is a failure.


def _optional_variant(field) -> bool:
    """Whether an optional (or unique_ptr) of a variant lies in the field's subtree."""
    if field.role == uproot_norm.ROLE_COLLECTION and field.type.startswith(("std::optional<", "std::unique_ptr<")):
        if field.children and field.children[0].role == uproot_norm.ROLE_VARIANT:
            return True
    return any(_optional_variant(c) for c in field.children)


def _holds_variant(field) -> bool:
    return field.role == uproot_norm.ROLE_VARIANT or any(_holds_variant(c) for c in field.children)


def signed_chars(value, field):
    """uproot's value of `field` with its `char` leaves read as signed (the second known issue above)."""
    if value is None:
        return None
    role, kids = field.role, field.children
    if role == uproot_norm.ROLE_LEAF:
        if field.repetition > 0 and kids:
            return [signed_chars(v, kids[0]) for v in value]
        if kids:
            return signed_chars(value, kids[0])
        return value - 256 if field.type == "char" and isinstance(value, int) and value > 127 else value
    if role == uproot_norm.ROLE_COLLECTION and len(kids) == 1:
        if field.type.startswith("std::optional<"):
            return signed_chars(value, kids[0])
        return [signed_chars(v, kids[0]) for v in value]
    if role == uproot_norm.ROLE_RECORD and isinstance(value, (list, tuple)):
        return [signed_chars(v, c) for v, c in zip(value, kids)]
    if role == uproot_norm.ROLE_RECORD and isinstance(value, dict):
        by_name = {c.uname: c for c in kids}
        return {k: signed_chars(v, by_name[k]) if k in by_name else v for k, v in value.items()}
    return value


def random_type(r: random.Random, depth: int) -> str:
    if depth == 0 or r.randrange(3) == 0:
        return r.choice(SCALARS)
    inner = lambda: random_type(r, depth - 1)  # noqa: E731
    k = r.randrange(11)
    return [
        lambda: f"std::vector<{inner()}>",
        lambda: f"ROOT::VecOps::RVec<{inner()}>",
        lambda: f"std::array<{inner()},{1 + r.randrange(3)}>",
        lambda: f"std::optional<{inner()}>",
        lambda: f"std::unique_ptr<{inner()}>",
        lambda: f"std::pair<{inner()},{inner()}>",
        lambda: f"std::tuple<{inner()},{inner()},{inner()}>",
        lambda: r.choice(ASSOCIATIVE),
        lambda: VARIANT,
        lambda: f"std::bitset<{1 + r.randrange(70)}>",
        lambda: "std::atomic<std::uint16_t>",
    ][k]()


def _args(t: str) -> list[str]:
    body, out, depth, cur = t[t.index("<") + 1:-1], [], 0, ""
    for c in body:
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += c
    return out + [cur]


def random_value(r: random.Random, t: str):
    """A random value of type t in the JSON form of `rntuple dump`; reals exactly representable (as float32 for
    float and Double32_t), so that every reader must give them back exactly."""
    if isinstance(t, dict):
        return {m: random_value(r, mt) for m, mt in t.items()}
    if isinstance(t, list):
        return [random_value(r, t[0]) for _ in range(r.randrange(4))]
    ints = {"char": (-128, 127), "std::int8_t": (-128, 127), "std::uint8_t": (0, 255), "std::int16_t": (-2**15, 2**15 - 1),
            "std::uint16_t": (0, 2**16 - 1), "std::int32_t": (-2**31, 2**31 - 1), "std::uint32_t": (0, 2**32 - 1),
            "std::int64_t": (-2**63, 2**63 - 1), "std::uint64_t": (0, 2**64 - 1)}
    if t in ints:
        return r.randint(*ints[t])
    if t == "bool":
        return r.random() < 0.5
    if t in ("float", "Double32_t"):
        return r.randint(-2**20, 2**20) / 64.0
    if t == "double":
        return r.randint(-2**50, 2**50) / 1024.0
    if t == "std::string":
        return "".join(r.choice("aé€z0 ") for _ in range(r.randrange(12)))
    if t.startswith(("std::vector<", "ROOT::VecOps::RVec<")):
        return [random_value(r, _args(t)[0]) for _ in range(r.randrange(4))]
    if t.startswith("std::array<"):
        item, n = _args(t)
        return [random_value(r, item) for _ in range(int(n))]
    if t.startswith(("std::optional<", "std::unique_ptr<")):
        return None if r.randrange(3) == 0 else random_value(r, _args(t)[0])
    if t.startswith(("std::pair<", "std::tuple<")):
        return [random_value(r, a) for a in _args(t)]
    if t == "std::set<std::int32_t>":
        return sorted({r.randint(-2**31, 2**31 - 1) for _ in range(r.randrange(5))})
    if t == "std::multiset<std::string>":
        return sorted(r.choice(["", "a", "b", "ab"]) for _ in range(r.randrange(5)))
    if t == "std::map<std::string,std::int32_t>":
        return [[k, r.randint(-2**31, 2**31 - 1)] for k in sorted({r.choice("abcdef") * r.randrange(1, 3) for _ in range(r.randrange(4))})]
    if t == "std::multimap<std::int32_t,float>":
        return sorted([[r.randrange(5), r.randint(-1000, 1000) / 8.0] for _ in range(r.randrange(4))], key=lambda kv: kv[0])
    if t == VARIANT:
        k = r.randrange(3)
        return [r.randint(-2**31, 2**31 - 1), "v" * r.randrange(5), r.randint(-8000, 8000) / 8.0 + 0.5][k]
    if t.startswith("std::bitset<"):
        return [r.random() < 0.5 for _ in range(int(_args(t)[0]))]
    if t == "std::atomic<std::uint16_t>":
        return r.randrange(2**16)
    raise AssertionError(f"no generator for {t}")


def random_py_type(r: random.Random, depth: int):
    """A C++ type name, or (Python writers only) an untyped record `{member: type}` or an untyped collection
    `[item type]`, nested the same way."""
    k = r.randrange(4) if depth > 0 else 0
    if k == 1:
        return {f"m{j}": random_py_type(r, depth - 1) for j in range(1 + r.randrange(3))}
    if k == 2:
        return [random_py_type(r, depth - 1)]
    return random_type(r, depth)


def default_value(t: str):
    """What ROOT (and we) read for a field before it was added by late model extension: the type's
    default-constructed value (a std::variant reads as valueless)."""
    if t == "bool":
        return False
    if t in ("float", "double", "Double32_t"):
        return 0.0
    if t == "std::string":
        return ""
    if t.startswith(("std::vector<", "ROOT::VecOps::RVec<", "std::set<", "std::multiset<", "std::map<", "std::multimap<")):
        return []
    if t.startswith("std::array<"):
        item, n = _args(t)
        return [default_value(item) for _ in range(int(n))]
    if t.startswith(("std::optional<", "std::unique_ptr<")) or t == VARIANT:
        return None
    if t.startswith(("std::pair<", "std::tuple<")):
        return [default_value(a) for a in _args(t)]
    if t.startswith("std::bitset<"):
        return [False] * int(_args(t)[0])
    return 0  # the integers, char, std::atomic<std::uint16_t>


def draw(seed: int):
    """Schema (list of (name, type); `i` first) and entries of one seed. Every third seed also has untyped
    records and collections (which only the Python writers take)."""
    r = random.Random(seed)
    pick = random_py_type if seed % 3 == 0 else random_type
    schema = [("i", "std::uint64_t")] + [(f"f{k}", pick(r, 3)) for k in range(1 + r.randrange(5))]
    n = 1 + r.randrange(300)
    entries = [{"i": e, **{name: random_value(r, t) for name, t in schema[1:]}} for e in range(n)]
    return schema, entries


SMALL = dict(max_unzipped_page_size=256, approx_zipped_cluster_size=2048)


def write_all(cli, out: Path, seed: int, schema, entries) -> dict[str, Path]:
    import rntuple

    r = random.Random(seed + 10_000)
    compression = r.choice([0, 101, 207, 404, 505])
    files = {w: out / f"s{seed}_{w}.root" for w in WRITERS}
    with rntuple.Writer(files["seq"], "T", dict(schema), compression=compression, **SMALL) as w:
        for e in entries:
            w.fill(e)
    with rntuple.ParallelWriter(files["par"], "T", dict(schema), compression=compression, **SMALL) as w:
        third = max(1, len(entries) // 3)
        for chunk in (entries[:third], entries[third:2 * third], entries[2 * third:]):
            with w.fill_context() as ctx:
                for e in chunk:
                    ctx.fill(e)
    if not all(isinstance(t, str) for _, t in schema):
        del files["cli"]  # import-json takes type names only
        return files
    src = out / f"s{seed}.json"
    src.write_text(json.dumps(entries))
    p = cli.run("import-json", files["cli"], "--ntuple", "T", "--schema", json.dumps(dict(schema)), "--input", src,
                "--compression", str(compression))
    assert p.returncode == 0, p.stderr.decode()
    return files


def check_uproot(path: Path, ntuple: str, entries: list, n: int, what: str) -> list[str]:
    """uproot's reading of every field of the `n` entries of a file against what was written: row k must hold
    `entries[i]`, `i` being the row's index field (so the parallel writer's cluster order does not matter)."""
    errors = []
    with uproot.open(path) as f:
        t = f[ntuple]
        if t.num_entries != n:
            return [f"{what}: uproot reads {t.num_entries} entries, {n} written"]
        ids = ak.to_list(t.arrays(["i"])["i"])
        first_cluster = int(t.cluster_summaries[0].num_entries) if t.cluster_summaries else len(entries)
        for field in uproot_norm.field_tree(t):
            try:
                values = ak.to_list(t.arrays([field.name])[field.name])
            except TypeError as exc:
                if "union-type" in str(exc) and _optional_variant(field):
                    continue
                raise
            # the known uproot 5.7.7 variant bug (module docstring): first cluster only
            rows = range(first_cluster) if _holds_variant(field) else range(len(values))
            for k in rows:
                want = uproot_norm.ours_to_uproot(entries[ids[k]][field.name], field)
                compare(uproot_norm.expected_from_uproot(signed_chars(values[k], field), field), want, f"{what} entry[{k}].{field.name}", errors,
                        limit=20)
    return errors


@pytest.fixture(scope="module")
def random_files(cli, tmp_path_factory):
    """Every seed written three ways, plus merge, skims and an update; ROOT's reading of all of it."""
    import rntuple

    out = tmp_path_factory.mktemp("random")
    cases = {}
    targets = []
    for seed in range(SEEDS):
        schema, entries = draw(seed)
        files = write_all(cli, out, seed, schema, entries)
        merged = out / f"s{seed}_merged.root"
        rntuple.merge(merged, list(files.values()))
        # The parallel file's order is its contexts' cluster order: what the merge must hold is each input's
        # entries in its own order, which the index field tells.
        r = random.Random(seed + 20_000)
        keep = ["i"] + r.sample([n for n, _ in schema[1:]], k=max(1, (len(schema) - 1) // 2))
        copied = out / f"s{seed}_skim_copied.root"
        rntuple.skim(files["seq"], copied, fields=keep)
        lo, hi = len(entries) // 3, len(entries) - len(entries) // 4
        reenc = out / f"s{seed}_skim_reencoded.root"
        rntuple.skim(files["seq"], reenc, entry_start=lo, entry_stop=hi, reencode=True, compression=r.choice([0, 505, 404]))
        # A second RNTuple, of the next seed's schema, added to the CLI's file in update mode.
        schema2, entries2 = draw(seed + 1000)
        updated = files.get("cli", files["seq"])
        with rntuple.Writer(updated, "U", dict(schema2), update_existing_file=True, **SMALL) as w:
            for e in entries2:
                w.fill(e)
        cases[seed] = dict(schema=schema, entries=entries, files=files, merged=merged, copied=copied, keep=keep,
                           reenc=reenc, range=(lo, hi), entries2=entries2, updated=updated)
        targets += [("T", f) for f in files.values()] + [("T", merged), ("T", copied), ("T", reenc), ("U", updated)]
        # The late-field path: the last field joins by late model extension half-way (import-json).
        if "cli" in files and len(schema) > 2 and len(entries) >= 2:
            name, t = schema[-1]
            at = len(entries) // 2
            late = out / f"s{seed}_late.root"
            p = cli.run("import-json", late, "--ntuple", "T", "--schema", json.dumps(dict(schema)), "--input",
                        out / f"s{seed}.json", "--late-fields", name, "--late-at", at)
            assert p.returncode == 0, p.stderr.decode()
            # Late fields come after the header's fields in the file's schema.
            want = [{**{k: v for k, v in e.items() if k != name}, name: default_value(t) if k < at else e[name]}
                    for k, e in enumerate(entries)]
            cases[seed].update(late=late, late_entries=want, late_at=at)
            targets.append(("T", late))
    # The test of the test: a file written with one value of one entry changed (of a type every reader reads in
    # full), compared with what should have been written.
    r = random.Random(7)
    schema = [("i", "std::uint64_t"), ("v", "std::vector<std::pair<std::int32_t,float>>")]
    entries = [{"i": e, "v": random_value(r, schema[1][1])} for e in range(200)]
    k, name = 150, "v"
    bad = [dict(e) for e in entries]
    bad[k][name] = entries[k][name] + [[7, 0.5]]
    tampered = out / "tampered.root"
    with rntuple.Writer(tampered, "T", dict(schema), **SMALL) as w:
        for e in bad:
            w.fill(e)
    cases["tampered"] = dict(file=tampered, entries=entries, entry=k, field=name)
    targets.append(("T", tampered))
    oracle = {key: reading.entries for key, reading in root_oracle(out, targets, timeout=1800).items()}  # one ROOT process
    return cases, oracle


def test_the_comparison_finds_one_changed_value(random_files):
    """A file whose one value of one entry differs from what the comparison expects fails both checks, naming that
    entry and field: the checks below would catch such a bug of the writer."""
    cases, oracle = random_files
    t = cases["tampered"]
    errors = compare_entries(oracle[("T", t["file"])], t["entries"], "tampered")
    assert errors and all(f"entry[{t['entry']}]" in e for e in errors), errors
    errors = check_uproot(t["file"], "T", t["entries"], len(t["entries"]), "tampered")
    assert errors and all(f"entry[{t['entry']}].{t['field']}" in e for e in errors), errors


def _seeds(cases):
    seeds = {k: v for k, v in cases.items() if k != "tampered"}
    assert len(seeds) == SEEDS
    assert sum("cli" in c["files"] for c in seeds.values()) >= SEEDS // 2
    assert sum(not isinstance(t, str) for c in seeds.values() for _, t in c["schema"]) >= SEEDS // 10
    return seeds


@pytest.mark.parametrize("writer", WRITERS)
def test_root_reads_every_value_of_random_schemas(random_files, writer):
    cases, oracle = random_files
    errors = []
    for seed, c in _seeds(cases).items():
        if writer not in c["files"]:
            continue  # a seed with untyped records: import-json takes type names only
        o = oracle[("T", c["files"][writer])]
        if writer == "par":
            o = sorted(o, key=lambda e: e["i"])
        errors += compare_entries(o, c["entries"], f"seed {seed} ({dict(c['schema'])})")
    assert not errors, f"{len(errors)} differences:\n  " + "\n  ".join(errors[:40])


@pytest.mark.parametrize("writer", WRITERS)
def test_uproot_reads_every_value_of_random_schemas(random_files, writer):
    cases, _ = random_files
    errors = []
    for seed, c in _seeds(cases).items():
        if writer not in c["files"]:
            continue
        errors += check_uproot(c["files"][writer], "T", c["entries"], len(c["entries"]), f"seed {seed} ({dict(c['schema'])})")
    assert not errors, f"{len(errors)} differences:\n  " + "\n  ".join(errors[:40])


def test_merge_skim_and_update_of_random_schemas(random_files):
    cases, oracle = random_files
    errors = []
    for seed, c in _seeds(cases).items():
        what = f"seed {seed} ({dict(c['schema'])})"
        # merge: each input's entries, in that input's order (ROOT's order of the parallel file)
        want = []
        for f in c["files"].values():
            want += [c["entries"][e["i"]] for e in oracle[("T", f)]]
        errors += compare_entries(oracle[("T", c["merged"])], want, what + " merged")
        errors += check_uproot(c["merged"], "T", c["entries"], len(want), what + " merged")
        kept = [{k: e[k] for k in c["keep"]} for e in c["entries"]]
        errors += compare_entries(oracle[("T", c["copied"])], kept, what + " skim (pages copied)")
        lo, hi = c["range"]
        part = c["entries"][lo:hi]
        errors += compare_entries(oracle[("T", c["reenc"])], part, what + f" skim {lo}:{hi} (re-encoded)")
        errors += check_uproot(c["reenc"], "T", c["entries"], len(part), what + " re-encoded")
        errors += compare_entries(oracle[("U", c["updated"])], c["entries2"], what + " update-mode RNTuple U")
        t_after = oracle[("T", c["updated"])]
        errors += compare_entries(sorted(t_after, key=lambda e: e["i"]), c["entries"], what + " T after the update")
        if "late" in c:
            late_what = what + f" late field from entry {c['late_at']}"
            errors += compare_entries(oracle[("T", c["late"])], c["late_entries"], late_what)
            errors += check_uproot(c["late"], "T", c["late_entries"], len(c["late_entries"]), late_what)
    assert sum("late" in c for c in _seeds(cases).values()) >= SEEDS // 5
    assert not errors, f"{len(errors)} differences:\n  " + "\n  ".join(errors[:40])

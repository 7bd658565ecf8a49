"""Every field type our writer supports, written by us (`rntuple import-json`) with each compression setting,
read back by ROOT 6.40's RNTupleReader (the oracle of root_helpers.cxx), by uproot 5.7.7 and by us: all equal
to what we wrote, entry by entry."""

from __future__ import annotations

import json

import awkward as ak
import pytest
import uproot
from root_subprocess import compare_entries, root_oracle

SETTINGS = (0, 101, 207, 404, 505)

# field -> (type, values of the 6 entries, in the JSON form of `rntuple dump`)
FIELDS = {
    "b": ("bool", [True, False, True, True, False, True]),
    "c": ("char", [65, 0, 127, 66, 1, 90]),
    "i8": ("std::int8_t", [-128, 0, 127, -1, 5, 6]),
    "u8": ("std::uint8_t", [0, 255, 1, 2, 3, 4]),
    "i16": ("std::int16_t", [-32768, 32767, 0, -5, 5, 1]),
    "u16": ("std::uint16_t", [0, 65535, 7, 8, 9, 10]),
    "i32": ("std::int32_t", [-2147483648, 2147483647, 0, -1, 1, 42]),
    "u32": ("std::uint32_t", [0, 4294967295, 3, 4, 5, 6]),
    "i64": ("std::int64_t", [-9223372036854775808, 9223372036854775807, 0, -7, 7, 1]),
    "u64": ("std::uint64_t", [0, 18446744073709551615, 1, 2, 3, 4]),
    "f": ("float", [1.5, -0.0, "nan", "inf", "-inf", 3.25]),
    "d": ("double", [0.1, -1e300, 2.5, "nan", 1e-300, -0.0]),
    "d32": ("Double32_t", [1.5, 2.25, -3.0, 0.0, 1024.0, -0.5]),
    "s": ("std::string", ["", "x", "héllo €", "a" * 300, "tab\there", "z"]),
    "vf": ("std::vector<float>", [[], [1.0], [1.5, 2.5], [], [-1.0, 0.0, 1.0], [7.0]]),
    "rv": ("ROOT::RVec<std::int32_t>", [[1, 2], [], [3], [4, 5, 6], [], [7]]),
    "vvs": ("std::vector<std::vector<std::string>>", [[["a"], []], [], [["b", "c"]], [[]], [["d"]], []]),
    "arr": ("std::array<double,3>", [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.5, 2.5, 3.5]]),
    "bits": ("std::bitset<10>", [[i % (k + 2) == 0 for i in range(10)] for k in range(6)]),
    "pair": ("std::pair<std::int32_t,std::string>", [[1, "a"], [2, ""], [3, "c"], [4, "d"], [5, "e"], [6, "f"]]),
    "tup": ("std::tuple<bool,float,std::int64_t>", [[True, 1.0, 1], [False, 2.0, 2], [True, 3.0, 3], [False, 4.0, 4], [True, 5.0, 5], [False, 6.0, 6]]),
    "opt": ("std::optional<std::int32_t>", [None, 1, None, 3, 4, None]),
    "uptr": ("std::unique_ptr<std::string>", ["p", None, "q", None, "", "r"]),
    "var": ("std::variant<std::int32_t,std::string,double>", [1, "two", 3.5, -4, "five", 6.25]),
    # (ROOT 6.40 reads some associative instantiations only with a compiled dictionary; these need none, or
    # have one built by rootgen.)
    "set": ("std::set<std::int32_t>", [[1, 2, 3], [], [-5], [7, 8], [], [9]]),
    "mset": ("std::multiset<std::string>", [["a", "a", "b"], [], ["c"], ["d", "d"], [], ["e"]]),
    "map": ("std::map<std::string,std::int32_t>", [[["a", 1], ["b", 2]], [], [["c", 3]], [], [["d", 4]], [["", 5]]]),
    "mmap": ("std::multimap<std::int32_t,float>", [[[1, 1.0], [1, 2.0]], [], [[3, 3.0]], [], [[4, 4.0]], [[5, 5.0]]]),
    "atom": ("std::atomic<std::uint32_t>", [1, 2, 3, 4, 5, 6]),
    "nest": ("std::vector<std::pair<std::int32_t,std::vector<std::optional<float>>>>", [[[1, [1.0, None]]], [], [[2, []], [3, [None]]], [], [[4, [2.5]]], []]),
}

ENTRIES = [{name: vals[i] for name, (_, vals) in FIELDS.items()} for i in range(6)]
SCHEMA = {name: t for name, (t, _) in FIELDS.items()}

@pytest.fixture(scope="module")
def written(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("ourtypes")
    src = out / "entries.json"
    src.write_text(json.dumps(ENTRIES))
    files = {}
    for c in SETTINGS:
        path = out / f"types_{c}.root"
        p = cli.run("import-json", str(path), "--ntuple", "T", "--schema", json.dumps(SCHEMA), "--input", str(src), "--compression", str(c))
        assert p.returncode == 0, p.stderr.decode()
        files[c] = path
    return files


@pytest.fixture(scope="module")
def root_reads(written, tmp_path_factory) -> dict:
    """ROOT's reading of every file of `written` (one ROOT process): {setting: entries}."""
    readings = root_oracle(tmp_path_factory.mktemp("ourtypes_root"), [("T", path) for path in written.values()])
    return {c: readings[("T", path)].entries for c, path in written.items()}


@pytest.mark.parametrize("setting", SETTINGS)
def test_we_read_back_what_we_wrote(cli, written, setting):
    assert cli.dump(written[setting], "T") == ENTRIES


@pytest.mark.parametrize("setting", SETTINGS)
def test_root_reads_what_we_wrote(root_reads, setting):
    oracle = root_reads[setting]
    assert len(oracle) == len(ENTRIES)
    errors = compare_entries(oracle, ENTRIES)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("setting", SETTINGS)
def test_uproot_reads_what_we_wrote(cli, written, setting):
    with uproot.open(written[setting]) as f:
        t = f["T"]
        ours = cli.dump(written[setting], "T")
        for name in FIELDS:
            theirs = ak.to_list(t.arrays([name])[name])
            want = theirs
            if FIELDS[name][0].startswith("std::unique_ptr<"):
                # uproot 5.7.7 gives std::unique_ptr as a list of 0 or 1 elements
                want = [v[0] if v else None for v in theirs]
            mine = [e[name] for e in ours]
            assert _loose(want) == _loose(mine), f"field {name} ({FIELDS[name][0]})"


def _loose(v):
    """uproot gives tuples/pairs as records or lists, NaN as float, maps as records: bring both to one form."""
    import math

    if isinstance(v, dict):
        vals = list(v.values())
        return [_loose(x) for x in vals]
    if isinstance(v, (list, tuple)):
        return [_loose(x) for x in v]
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return float(v)
    return v


LATE = ("vf", "s", "opt", "var", "arr", "map")


@pytest.mark.parametrize("setting", (0, 505))
def test_root_reads_our_late_model_extension(cli, tmp_path, setting):
    """Fields added by late model extension at entry 3: ROOT reads the earlier entries' values of those fields
    as defaults, exactly as we do."""
    src = tmp_path / "entries.json"
    src.write_text(json.dumps(ENTRIES))
    path = tmp_path / f"late_{setting}.root"
    p = cli.run("import-json", str(path), "--ntuple", "T", "--schema", json.dumps(SCHEMA), "--input", str(src),
                "--compression", str(setting), "--late-fields", ",".join(LATE), "--late-at", "3")
    assert p.returncode == 0, p.stderr.decode()
    ours = cli.dump(path, "T")
    defaults = {"vf": [], "s": "", "opt": None, "var": None, "arr": [0.0, 0.0, 0.0], "map": []}
    for i, e in enumerate(ours):
        for name in LATE:
            assert e[name] == (defaults[name] if i < 3 else ENTRIES[i][name]), (i, name)
    # Late fields come after the header's fields, in the order they were added (schema order here).
    assert list(ours[0]) == [n for n in FIELDS if n not in LATE] + [n for n in FIELDS if n in LATE]
    oracle = root_oracle(tmp_path, [("T", path)])[("T", path)].entries
    assert len(oracle) == len(ours)
    errors = compare_entries(oracle, ours)
    assert not errors, "\n".join(errors)

"""One selection language: ``cut=`` (uproot's Python spelling) is translated into the core's expressions and
evaluated by the core, and ``skim(where=)`` takes either spelling; both select the same entries, checked against
numpy on the data written. Also the package's layout: no import cycle among its modules, subpackages included
(imports inside functions too), no module importing the package root, the subpackages' layers, no module over
800 lines."""

import ast
from pathlib import Path

import awkward as ak
import numpy as np
import pytest

import rntuple
from rntuple._reading.selection import to_core

N = 300


def _data():
    rng = np.random.default_rng(5)
    n_jet = rng.integers(0, 5, N)
    jets = ak.zip({"pt": ak.unflatten(rng.uniform(0, 80, n_jet.sum()), n_jet),
                   "eta": ak.unflatten(rng.uniform(-3, 3, n_jet.sum()), n_jet)})
    n_mu = rng.integers(0, 4, N)
    return ak.zip({
        "run": np.arange(N, dtype=np.int32),
        "met": rng.uniform(0, 100, N).astype(np.float32),
        "nMuon": n_mu.astype(np.uint32),
        "Muon_pt": ak.unflatten(rng.uniform(0, 50, n_mu.sum()).astype(np.float32), n_mu),
        "jets": jets,
        "mu": ak.zip({"pt": rng.uniform(0, 40, N), "q": rng.choice([-1, 1], N).astype(np.int32)}),
    }, depth_limit=1)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    p = tmp_path_factory.mktemp("selection") / "in.root"
    rntuple.write(p, "Events", _data())
    return str(p)


def _expected(a):
    """Masks computed with numpy/awkward on the data, for each pair of spellings below."""
    run, met, n_mu = a.run.to_numpy(), a.met.to_numpy(), a.nMuon.to_numpy()
    jet_pt, jet_eta = a.jets.pt, a.jets.eta
    n_good = ak.to_numpy(ak.sum((jet_pt > 30) & (abs(jet_eta) < 2.4), axis=1))
    max_mu = ak.to_numpy(ak.fill_none(ak.max(a.Muon_pt, axis=1), np.nan))
    return [
        ("(run > 4) & (met < 30)", "run > 4 && met < 30", (run > 4) & (met < 30)),
        ("~(met >= 50) | (nMuon == 2)", "!(met >= 50) || nMuon == 2", ~(met >= 50) | (n_mu == 2)),
        ("not run % 3 == 0 and met > 10", "!(run % 3 == 0) && met > 10", ~(run % 3 == 0) & (met > 10)),
        ("10 <= run < 20", "10 <= run && run < 20", (run >= 10) & (run < 20)),
        ("np.abs(mu.q * mu.pt) > 20", "abs(mu.q * mu.pt) > 20", np.abs(a.mu.q.to_numpy() * a.mu.pt.to_numpy()) > 20),
        ("sqrt(met) ** 2 > 64", "sqrt(met) ^ 2 > 64", np.sqrt(met) ** 2 > 64),
        ("ak.num(Muon_pt) >= 2", "count(Muon_pt) >= 2", n_mu >= 2),
        ("ak.sum((jets.pt > 30) & (np.absolute(jets.eta) < 2.4), axis=1) >= 2",
         "count(jets.pt > 30 && abs(jets.eta) < 2.4) >= 2", n_good >= 2),
        ("ak.any(Muon_pt > 25, axis=-1)", "any(Muon_pt > 25)", ak.to_numpy(ak.any(a.Muon_pt > 25, axis=1))),
        ("ak.max(Muon_pt, axis=1) > 30", "max(Muon_pt) > 30", max_mu > 30),
        ("ak.count_nonzero(Muon_pt > 25, axis=1) >= 2", "count(Muon_pt > 25) >= 2",
         ak.to_numpy(ak.sum(a.Muon_pt > 25, axis=1)) >= 2),
    ]


def test_translation_into_the_core_syntax():
    assert to_core("(run > 4) & (met < 30)")[0] == "((run > 4) && (met < 30))"
    assert to_core("~flag | (x ** 2 >= 1.5)")[0] == "(!(flag) || ((x ^ 2) >= 1.5))"
    assert to_core("0 < x < 2")[0] == "((0 < x) && (x < 2))"
    assert to_core("ak.num(Jet_pt, axis=1) > 1 and np.abs(eta) < 2.4")[0] == "((count(Jet_pt) > 1) && (abs(eta) < 2.4))"
    assert to_core("ak.count_nonzero(Jet.pt > 25, axis=1) > 1")[0] == "(count(((Jet.pt > 25)) != 0) > 1)"
    assert to_core("x > True")[0] == "(x > true)"
    # an alias is substituted, in parentheses; the names read are those of the fields
    assert to_core("ht > 200", aliases={"ht": "ak.sum(Jet_pt, axis=1)"}) == ("((sum(Jet_pt)) > 200)", ["Jet_pt"])
    # texts in the core's spelling, or that the translation does not change, go to the core as written
    for text in ["nMuon >= 1 && count(Jet_pt > 25) >= 4", "count(Jet_pt > 25) >= 4", "x ^ 2 > 1", "(a > 1"]:
        assert to_core(text)[0] == text
    # names resolve through the reader's tree (uproot's keys -> the core's names)
    assert to_core('get("pair.0") > 1', resolve={"pair.0": "pair._0"}.get) == ("(pair._0 > 1)", ["pair.0"])


@pytest.mark.parametrize("cut", ["np.log10(met) > 1", "met // 2 > 1", "ak.sum(Muon_pt) > 3", "met ^ run > 1 and run > 0",
                                 "Muon_pt[0] > 3", "ak.flatten(Muon_pt) > 1", "met > 'a'"])
def test_what_the_core_cannot_express_is_refused_by_name(source, cut):
    t = rntuple.open(source)["Events"]
    if "^" in cut:  # `^` is the core's power: a text holding it is of the core's spelling, and not an expression there
        with pytest.raises(rntuple.RNTupleError):
            t.arrays(["run"], cut=cut)
        return
    with pytest.raises(rntuple.InvalidArgumentError, match="is not in the selection language|has not|axis=1|finite number") as e:
        t.arrays(["run"], cut=cut)
    part = {"np.log10(met) > 1": "np.log10(met)", "met // 2 > 1": "met // 2", "ak.sum(Muon_pt) > 3": "ak.sum(Muon_pt)",
            "Muon_pt[0] > 3": "Muon_pt[0]", "ak.flatten(Muon_pt) > 1": "ak.flatten(Muon_pt)", "met > 'a'": "'a'"}[cut]
    assert repr(part) in str(e.value)


def test_both_spellings_select_the_same_entries(source, tmp_path):
    t = rntuple.open(source)["Events"]
    a = t.arrays()
    run = a.run.to_numpy()
    for k, (uproot_cut, core_cut, mask) in enumerate(_expected(a)):
        want = run[mask].tolist()
        assert want and len(want) < N, uproot_cut  # the cut selects something, not everything
        assert t.arrays(["run"], cut=uproot_cut).run.tolist() == want, uproot_cut
        assert t.arrays(["run"], cut=core_cut).run.tolist() == want, core_cut
        assert [x for c in t.iterate(["run"], cut=uproot_cut, step_size=70) for x in c.run.tolist()] == want
        for i, where in enumerate((uproot_cut, core_cut)):
            out = tmp_path / f"skim{k}_{i}.root"
            rep = rntuple.skim(source, out, fields=["run"], where=where, threads=1)
            assert rep["entries"] == len(want), where
            assert rntuple.open(out)["Events"].arrays()["run"].tolist() == want, where


def test_cut_with_aliases_pandas_and_errors(source):
    t = rntuple.open(source)["Events"]
    a = t.arrays()
    run, met = a.run.to_numpy(), a.met.to_numpy()
    got = t.arrays(["run", "met2"], cut="met2 > 100", aliases={"met2": "met * 2"})
    assert got.run.tolist() == run[met * 2 > 100].tolist()
    df = t.arrays(["run"], cut="(run >= 290) | (run < 2)", library="pd")
    assert list(df.index) == [0, 1, *range(290, N)]
    with pytest.raises(KeyError, match="no field 'nope'"):
        t.arrays(["run"], cut="nope > 1")
    with pytest.raises(ValueError, match="one boolean per entry"):
        t.arrays(["run"], cut="Muon_pt > 2")


def test_skim_filters_take_the_uproot_spelling(source, tmp_path):
    a = rntuple.open(source)["Events"].arrays()
    keep = (a.Muon_pt > 20) & (a.Muon_pt < 40)
    out = tmp_path / "filtered.root"
    rntuple.skim(source, out, fields=["run", "nMuon", "Muon_pt"], where="ak.num(Muon_pt) > 0",
                 filters={"Muon": "(Muon_pt > 20) & (Muon_pt < 40)"}, threads=1)
    b = rntuple.open(out)["Events"].arrays()
    has = ak.to_numpy(ak.num(a.Muon_pt) > 0)
    assert b.run.tolist() == a.run.to_numpy()[has].tolist()
    assert b.Muon_pt.tolist() == a.Muon_pt[keep][has].tolist()
    assert b.nMuon.tolist() == ak.sum(keep, axis=1)[has].tolist()


# ----- the package's layout ------------------------------------------------------------------------------------

PACKAGE = Path(rntuple.__file__).parent
# the package's subpackages, lowest first; each may import only those before it (``_writing`` none of them)
LAYERS = {"_compat": set(), "_reading": {"_compat"}, "_writing": set(), "_datasets": {"_compat", "_reading"},
          "_tools": {"_reading", "_datasets", "_writing"}, "_engines": {"_reading", "_datasets", "_writing", "_tools"}}


def _modules() -> dict:
    """Dotted module name (``rntuple._reading.query``; a package by its ``__init__.py``) -> file."""
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = ["rntuple", *p.relative_to(PACKAGE).with_suffix("").parts]
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _imports(name: str, path: Path, modules: dict) -> tuple[set, set]:
    """The package's modules that module ``name`` imports, anywhere (inside functions too), and the names it takes
    from the package root (``from .. import X`` with X no module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out, from_root = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "rntuple" and not target.startswith("rntuple."):
                continue
            out.add(target)
            for a in node.names:
                if f"{target}.{a.name}" in modules or f"{target}.{a.name}" == "rntuple._rntuple":
                    out.add(f"{target}.{a.name}")
                elif target == "rntuple":
                    from_root.add(a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "rntuple":
                    from_root.add("rntuple")
                elif a.name.startswith("rntuple."):
                    out.add(a.name)
    return {m for m in out if m in modules and m not in (name, "rntuple")}, from_root


def test_no_import_cycle_no_root_import_and_no_long_module():
    modules = _modules()
    graph = {}
    for m, p in modules.items():
        graph[m], from_root = _imports(m, p, modules)
        assert m == "rntuple" or not from_root, f"{m} imports the package root: {sorted(from_root)}"
    graph.pop("rntuple")
    state = {}

    def visit(m, stack):
        state[m] = "open"
        for n in sorted(graph[m]):
            assert state.get(n) != "open", f"import cycle: {' -> '.join([*stack, m, n])}"
            if n not in state:
                visit(n, [*stack, m])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    # the subpackages' layers: reading does not import writing, nothing below engines imports engines...
    assert set(LAYERS) <= {m.split(".")[1] for m in modules if m.count(".") == 1}
    for m, deps in graph.items():
        room = m.split(".")[1]
        if room in LAYERS:
            used = {d.split(".")[1] for d in deps} & set(LAYERS) - {room}
            assert used <= LAYERS[room], f"{m} imports {sorted(used - LAYERS[room])}"
    for m, p in modules.items():
        assert len(p.read_text().splitlines()) <= 800, m

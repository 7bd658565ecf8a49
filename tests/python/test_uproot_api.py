"""uproot 5's RNTuple API, name by name, run against uproot and against rntuple on the same files: the file's keys
(cycles, directories, filters), fields as objects (the same object however reached, ``len`` as subfields),
``to_akform``, ``ak_add_doc``, virtual arrays with an access log, and step sizes in bytes."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest
import uproot

import rntuple
from conftest import need, testdata_dir

DATA = testdata_dir() / "rntuple"
MUONS = DATA / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
STL = DATA / "test_stl_containers_rntuple_v1-0-0-0.root"
NESTED = DATA / "test_nested_structs_rntuple_v1-0-0-0.root"
FORM_FILES = [
    (MUONS, "Events"),
    (STL, "ntuple"),
    (NESTED, "ntuple"),
    (DATA / "test_int_float_rntuple_v1-0-0-0.root", "ntuple"),
    (DATA / "ntpl001_staff_rntuple_v1-0-0-0.root", "Staff"),
]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """TTrees and RNTuples, some in directories, two cycles of one name: what keys() must list."""
    path = tmp_path_factory.mktemp("keys") / "mixed.root"
    with uproot.recreate(path) as f:
        f.mkrntuple("top", {"x": np.arange(3, dtype=np.int32)})
        f.mkrntuple("dir/inner", {"y": np.arange(4.0)})
        f.mktree("tree", {"a": np.arange(5)})
        f.mktree("dir/sub/t2", {"b": np.arange(2.0)})
        f["h"] = np.histogram(np.arange(10.0), bins=3)
    return str(path)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"cycle": False},
        {"recursive": False},
        {"recursive": False, "cycle": False},
        {"filter_name": "t*"},
        {"filter_classname": "ROOT::RNTuple"},
        {"filter_classname": ["TTree", "TDirectory"], "cycle": False},
        {"filter_name": "/^(inner|b)$/"},
    ],
)
def test_file_keys_and_classnames_as_uproot(mixed, kwargs):
    with uproot.open(mixed) as theirs, rntuple.open(mixed) as ours:
        assert ours.keys(**kwargs) == theirs.keys(**kwargs)
        assert ours.classnames(**kwargs) == theirs.classnames(**kwargs)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        assert ours.ntuple_names() == ["top", "dir/inner"]
        assert "dir/inner;1" in ours and "dir" in ours and "nothing" not in ours


def test_fields_are_objects_as_in_uproot():
    with uproot.open(need(NESTED)) as uf, rntuple.open(NESTED) as f:
        theirs, ours = uf["ntuple"], f["ntuple"]
        assert len(ours) == len(theirs) == 1
        assert [x.name for x in ours.fields] == [x.name for x in theirs.fields]
        assert ours.fields == [x.name for x in theirs.fields]  # a Field equals its name
        s = ours["my_struct"]
        assert s is f["ntuple/my_struct"] is f["ntuple"]["my_struct"] is ours.fields[0]
        assert s["sub_struct"] is ours["my_struct.sub_struct"] is ours["my_struct/sub_struct"]
        for key in theirs.keys():
            assert len(ours[key]) == len(theirs[key]), key
            assert [x.name for x in ours[key].fields] == [x.name for x in theirs[key].fields], key
            assert ours[key].record.struct_role == int(theirs[key].record.struct_role), key
        assert list(ours) == ours.fields
        assert ours.arrays(ours.fields).fields == ["my_struct"]


@pytest.mark.parametrize("path, name", FORM_FILES, ids=lambda x: getattr(x, "name", x))
def test_to_akform_is_the_form_of_the_arrays_and_uproots(path, name):
    with uproot.open(need(path)) as uf, rntuple.open(path) as f:
        theirs, ours = uf[name], f[name]
        form, where = ours.to_akform()
        assert where is None
        assert form == ours.arrays().layout.form
        assert form == theirs.to_akform()[0]
        for key in ours.keys(recursive=False):
            got = ours[key].to_akform()
            want = theirs[key].to_akform()
            assert got[1] == want[1] and got[0] == want[0], key
        first = ours.keys()[-1]
        assert ours.to_akform(filter_name=first)[0] == theirs.to_akform(filter_name=first)[0]


def test_subfield_to_akform_inside_a_collection_as_uproot():
    with uproot.open(need(MUONS)) as uf, rntuple.open(MUONS) as f:
        for key in ("_collection0", "_collection0.Muon_pt"):
            got, want = f["Events"][key].to_akform(), uf["Events"][key].to_akform()
            assert got[1] == want[1] and got[0] == want[0], key


@pytest.fixture(scope="module")
def documented(tmp_path_factory):
    """A file whose fields carry descriptions (written by uproot from ``__doc__`` parameters)."""
    path = tmp_path_factory.mktemp("docs") / "docs.root"
    data = ak.Array({"flag": [True, False, True], "jets": [[{"pt": 1.0}], [], [{"pt": 2.0}, {"pt": 3.0}]]})
    layout = data.layout
    jets = layout.content("jets")
    jets = jets.copy(content=jets.content.copy(contents=[c.copy(parameters={"__doc__": "transverse momentum"}) for c in jets.content.contents],
                                               parameters={"__doc__": "one jet"}), parameters={"__doc__": "the jets"})
    flag = layout.content("flag").copy(parameters={"__doc__": "a flag"})
    data = ak.Array(ak.contents.RecordArray([flag, jets], ["flag", "jets"], parameters={"__doc__": "events"}))
    with uproot.recreate(path) as f:
        f.mkrntuple("ntuple", data)
    return str(path)


def _parameters(form, out, path=""):
    """Every (path, parameters) of a form, lists and records walked."""
    params = {k: v for k, v in (form.parameters or {}).items() if not k.startswith("__array__") and k != "__array__"}
    if params:
        out[path or "."] = params
    if isinstance(form, ak.forms.RecordForm):
        for name, c in zip(form.fields, form.contents):
            _parameters(c, out, f"{path}/{name}")
    elif hasattr(form, "content"):
        _parameters(form.content, out, f"{path}[]")
    return out


@pytest.mark.parametrize("ak_add_doc", [True, {"typename": "typename"}, {"doc": "description", "type": "typename"}])
def test_ak_add_doc_as_uproot(documented, ak_add_doc):
    with uproot.open(documented) as uf, rntuple.open(documented) as f:
        theirs = uf["ntuple"].arrays(ak_add_doc=ak_add_doc)
        ours = f["ntuple"].arrays(ak_add_doc=ak_add_doc)
        assert _parameters(ours.layout.form, {}) == _parameters(theirs.layout.form, {})
        assert ours.to_list() == theirs.to_list()
        if ak_add_doc is True:
            assert ours.layout.parameters["__doc__"] == "events"
            assert ours.layout.content("flag").parameters["__doc__"] == "a flag"
            assert _parameters(f["ntuple"].to_akform(ak_add_doc=True)[0], {}) == _parameters(ours.layout.form, {})
    with pytest.raises(ValueError, match="unknown field attributes"):
        rntuple.open(documented)["ntuple"].arrays(ak_add_doc={"x": "no_such_attribute"})


def test_virtual_arrays_read_on_touch_as_uproot():
    with uproot.open(need(STL)) as uf, rntuple.open(STL) as f:
        theirs_log, ours_log = [], []
        eager = f["ntuple"].arrays()
        virtual = f["ntuple"].arrays(virtual=True, access_log=ours_log)
        their_virtual = uf["ntuple"].arrays(virtual=True, access_log=theirs_log)
        assert ours_log == [] and theirs_log == []
        assert ak.to_packed(virtual).layout.is_equal_to(ak.to_packed(eager).layout)
        ak.materialize(their_virtual)
        assert len(ours_log) == len(theirs_log) > 0
        ak.materialize(virtual)
        assert len(ours_log) == len(theirs_log)  # each buffer once
        assert {a.field for a in ours_log} == set(eager.fields)

        one, their_one = [], []
        s = f["ntuple"]["string"].array(virtual=True, access_log=one)
        uf["ntuple"]["string"].array(virtual=True, access_log=their_one)
        assert one == []
        assert s.to_list() == eager["string"].to_list()
        assert len(one) == 2 and {a.field for a in one} == {"string"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"virtual": True, "how": "zip"}, "'how' cannot be used with 'virtual=True'"),
        ({"virtual": True, "library": "np"}, "'library' cannot be used with 'virtual=True'"),
        ({"virtual": True, "expressions": "string"}, "'expressions' cannot be used with 'virtual=True'"),
        ({"virtual": True, "cut": "x > 0"}, "'cut' cannot be used with 'virtual=True'"),
        ({"virtual": True, "aliases": {"a": "string"}}, "'aliases' cannot be used with 'virtual=True'"),
        ({"virtual": False, "access_log": []}, "'access_log' cannot be used with 'virtual=False'"),
    ],
)
def test_virtual_refuses_what_uproot_refuses(kwargs, message):
    with rntuple.open(need(STL)) as f, pytest.raises(ValueError, match=message):
        f["ntuple"].arrays(**kwargs)


@pytest.mark.parametrize("step", ["10 kB", "5 kB", "1 kB", "50 kB", 100])
def test_step_sizes_in_bytes_give_uprootss_chunks(step):
    with uproot.open(need(MUONS)) as uf, rntuple.open(MUONS) as f:
        theirs = [len(c) for c in uf["Events"].iterate(step_size=step)]
        ours = [len(c) for c in f["Events"].iterate(step_size=step)]
        assert ours == theirs
        theirs = [len(c) for c in uf["Events"]["Muon_pt"].iterate(step_size=step)]
        ours = list(f["Events"]["Muon_pt"].iterate(step_size=step))
        assert [len(c) for c in ours] == theirs
        assert ours[0].fields == ["Muon_pt"] and ours[0]["Muon_pt"][0].to_list() == [10.763696670532227, 15.736522674560547]


@pytest.mark.parametrize("start, stop", [(None, None), (3, 6)])
def test_field_array_as_pandas_series_as_uproot(start, stop):
    path = DATA / "test_int_float_rntuple_v1-0-0-0.root"
    with uproot.open(need(path)) as uf, rntuple.open(path) as f:
        theirs = uf["ntuple"]["one_integers"].array(library="pd", entry_start=start, entry_stop=stop)
        ours = f["ntuple"]["one_integers"].array(library="pd", entry_start=start, entry_stop=stop)
        assert ours.name == theirs.name
        assert ours.index.tolist() == theirs.index.tolist() and ours.tolist() == theirs.tolist()


def test_field_names_with_glob_characters_select_themselves(tmp_path):
    # A name may hold '[' or '*' (ROOT allows them): a field reads itself, not the fields its name matches as a glob.
    path = str(tmp_path / "glob.root")
    rntuple.write(path, "nt", {"a[b]": np.arange(3, dtype="int32"), "ab": np.arange(3, dtype="int32") + 10, "r": [{"x*": 1, "x1": 2}] * 3})
    t = rntuple.open(path)["nt"]
    assert t["a[b]"].array(virtual=True).tolist() == [0, 1, 2]
    assert t["a[b]"].array(ak_add_doc=True).tolist() == [0, 1, 2]
    assert t["r"].arrays(filter_name="x[*]").tolist() == [{"r": {"x*": 1}}] * 3
    log = []
    assert t["r"].array(virtual=True, access_log=log).tolist() == [{"x*": 1, "x1": 2}] * 3
    assert len(log) == 2

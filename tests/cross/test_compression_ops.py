"""Compression through merge and skim (issue 19): `merge --compression` (the output's pages and envelopes), merging inputs
of different compression (pages of another compression recompressed, the others copied; 505, 207 and 404: ROOT writes uncompressed files
with other column encodings, a schema difference), `skim --compression` with pages copied (they
keep theirs) and re-encoded (they get the new one), `skim --reencode` of whole clusters. Inputs: the ROOT-written
comp_* files (3 clusters each, settings 0, 207, 404, 505). Checked by ROOT 6.40 (its descriptor's compression
settings per cluster and column, every entry through the oracle), by uproot (every entry) and by the envelopes'
bytes (ROOT's compression block magic: ZS zstd, XZ lzma, L4 lz4, ZL zlib; none when stored uncompressed).
About 30 s (one ROOT process)."""

from __future__ import annotations

import json
from pathlib import Path

import awkward as ak
import pytest
import uproot
from root_subprocess import root_oracle
from test_merge import _nan_safe

MAGIC = {1: b"ZL", 2: b"XZ", 4: b"L4", 5: b"ZS"}


def envelope_algorithms(path: Path, name: str = "comp") -> dict:
    """{envelope: algorithm digit or 0 when stored uncompressed} for the header, the footer and every page list,
    from the anchor (read by uproot) and the envelopes' first bytes."""
    with uproot.open(path) as f:
        nt = f[name]
        anchor = {k: nt.member(k) for k in ("fSeekHeader", "fNBytesHeader", "fLenHeader", "fSeekFooter",
                                            "fNBytesFooter", "fLenFooter")}
        links = [(g.page_list_link.locator.offset, g.page_list_link.locator.num_bytes, g.page_list_link.env_uncomp_size)
                 for g in nt.footer.cluster_group_records]
    data = path.read_bytes()
    out = {}
    todo = [("header", anchor["fSeekHeader"], anchor["fNBytesHeader"], anchor["fLenHeader"]),
            ("footer", anchor["fSeekFooter"], anchor["fNBytesFooter"], anchor["fLenFooter"])]
    todo += [(f"page list {k}", *link) for k, link in enumerate(links)]
    for what, seek, nbytes, length in todo:
        if nbytes == length:
            out[what] = 0
            continue
        magic = data[seek:seek + 2]
        algos = [a for a, m in MAGIC.items() if m == magic]
        assert algos, f"{path.name}: {what} at {seek}: {nbytes} of {length} bytes, but no compression block magic ({magic!r})"
        out[what] = algos[0]
    return out


def column_settings(describe: dict) -> list[set]:
    """Per cluster, the set of compression settings of its (unsuppressed) columns, as ROOT reports them."""
    return [{c["compression"] for c in cl["columns"] if not c["suppressed"]} for cl in describe["clusters"]]


@pytest.fixture(scope="module")
def ops(cli, generated, tmp_path_factory):
    out = tmp_path_factory.mktemp("compression_ops")
    src = {c: generated.file(f"comp_{c}") for c in (0, 207, 404, 505)}
    runs = {}

    def run(key, *args):
        p = cli.run(*args)
        assert p.returncode == 0, f"{args}: {p.stderr.decode()[-2000:]}"
        runs[key] = json.loads(p.stdout)

    files = {
        "merge_mixed_207": out / "merge_mixed_207.root",
        "merge_505_0": out / "merge_505_0.root",
        "skim_copy_0": out / "skim_copy_0.root",
        "skim_reencode_404": out / "skim_reencode_404.root",
        "skim_range_207": out / "skim_range_207.root",
    }
    run("merge_mixed_207", "merge", files["merge_mixed_207"], src[505], src[207], src[404], "--compression", "207")
    run("merge_505_0", "merge", files["merge_505_0"], src[505], src[505], "--compression", "0")
    run("skim_copy_0", "skim", src[505], files["skim_copy_0"], "--compression", "0")
    run("skim_reencode_404", "skim", src[505], files["skim_reencode_404"], "--reencode", "--compression", "404")
    run("skim_range_207", "skim", src[0], files["skim_range_207"], "--entries", "1000:4321", "--compression", "207")
    pairs = [("comp", p) for p in [*src.values(), *files.values()]]
    readings = root_oracle(out, pairs, describe=True, timeout=1200)  # ROOT reads and describes every file
    oracle = {str(path): readings[(name, path)].entries for name, path in pairs}
    describe = {str(path): readings[(name, path)].describe for name, path in pairs}
    return src, files, runs, oracle, describe


def _uproot_rows(path, start=None, stop=None):
    with uproot.open(path) as f:
        return _nan_safe(ak.to_list(f["comp"].arrays(entry_start=start, entry_stop=stop)))


def test_merge_of_inputs_of_different_compression(ops):
    src, files, runs, oracle, describe = ops
    out = files["merge_mixed_207"]
    d = describe[str(out)]
    # --compression 207 recompresses the pages stored otherwise: every column range is 207 now
    assert column_settings(d) == [{207}] * 9, column_settings(d)
    assert runs["merge_mixed_207"]["recompressed_pages"] == runs["merge_mixed_207"]["pages"] - sum(
        len(c["pages"]) for cl in describe[str(src[207])]["clusters"] for c in cl["columns"])
    # the 207 input's pages copied byte for byte: the same sizes as the input's
    pages = [[c["pages"] for c in cl["columns"]] for cl in d["clusters"]]
    assert pages[3:6] == [[c["pages"] for c in cl["columns"]] for cl in describe[str(src[207])]["clusters"]]
    # the envelopes are compressed with lzma (2), as --compression 207 asks
    assert set(envelope_algorithms(out).values()) == {2}, envelope_algorithms(out)
    # ROOT and uproot read the inputs' entries one after the other
    want_rows = [e for c in (505, 207, 404) for e in oracle[str(src[c])]]
    assert len(oracle[str(out)]) == len(want_rows) == runs["merge_mixed_207"]["entries"] == 15000
    for i, (g, w) in enumerate(zip(oracle[str(out)], want_rows)):
        assert repr(g) == repr(w), f"entry {i}: {g!r} != {w!r}"
    assert _uproot_rows(out) == [e for c in (505, 207, 404) for e in _uproot_rows(src[c])]


def test_merge_compression_recompresses_pages_and_envelopes(ops):
    src, files, runs, oracle, describe = ops
    out = files["merge_505_0"]
    assert column_settings(describe[str(out)]) == [{0}] * 6
    assert set(envelope_algorithms(out).values()) == {0}, envelope_algorithms(out)
    assert set(envelope_algorithms(src[505]).values()) == {5}  # the input's were zstd
    assert [repr(e) for e in oracle[str(out)]] == [repr(e) for e in oracle[str(src[505])] * 2]
    assert _uproot_rows(out) == _uproot_rows(src[505]) * 2


def test_skim_compression_with_copied_pages(ops):
    src, files, runs, oracle, describe = ops
    out = files["skim_copy_0"]
    assert runs["skim_copy_0"]["method"] == "copied pages", runs["skim_copy_0"]
    assert column_settings(describe[str(out)]) == [{505}] * 3  # copied pages keep theirs
    assert set(envelope_algorithms(out).values()) == {0}, envelope_algorithms(out)
    assert [repr(e) for e in oracle[str(out)]] == [repr(e) for e in oracle[str(src[505])]]
    assert _uproot_rows(out) == _uproot_rows(src[505])


def test_skim_reencode_recompresses_whole_clusters(ops):
    src, files, runs, oracle, describe = ops
    out = files["skim_reencode_404"]
    stats = runs["skim_reencode_404"]
    assert stats["method"] == "re-encoded" and stats["pages_copied"] == 0, stats
    d = describe[str(out)]
    assert column_settings(d) and all(s == {404} for s in column_settings(d)), column_settings(d)
    assert set(envelope_algorithms(out).values()) == {4}, envelope_algorithms(out)
    assert [repr(e) for e in oracle[str(out)]] == [repr(e) for e in oracle[str(src[505])]]
    assert _uproot_rows(out) == _uproot_rows(src[505])


def test_skim_compression_of_reencoded_ranges(ops):
    src, files, runs, oracle, describe = ops
    out = files["skim_range_207"]
    stats = runs["skim_range_207"]
    assert stats["method"] == "re-encoded" and (stats["entry_start"], stats["entry_stop"]) == (1000, 4321), stats
    d = describe[str(out)]
    assert column_settings(d) and all(s == {207} for s in column_settings(d)), column_settings(d)
    assert set(envelope_algorithms(out).values()) == {2}, envelope_algorithms(out)
    assert [repr(e) for e in oracle[str(out)]] == [repr(e) for e in oracle[str(src[0])][1000:4321]]
    assert _uproot_rows(out) == _uproot_rows(src[0], 1000, 4321)


def test_envelope_reader_of_this_test(ops):
    """Self-check of envelope_algorithms: ROOT's own files, whose settings are known."""
    src = ops[0]
    for c, algo in ((0, 0), (207, 2), (404, 4), (505, 5)):
        got = envelope_algorithms(src[c])
        assert set(got.values()) == {algo}, (c, got)

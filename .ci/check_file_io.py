"""Nothing outside `storage::local::file_io` changes an output file (issue 54): every write, size change,
sync, rename and removal of an output goes through it, so that `io_record` sees it and the crash explorer
(crates/rntuple-crash) can rebuild what a power loss leaves. This check reads the Rust sources (test code
cut off) for the system calls that change files; the few other files that make them say why below.
The explorer checks the rest at run time: replaying a workload's record must give the file on disk.

    python3 .ci/check_file_io.py           # exit 1 naming each call outside the allowed places
    python3 .ci/check_file_io.py --self-test
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("crates", "python/src")
# Calls that change a file or a directory's names (`out.sync_data()` is `OutputFile`'s, which goes through
# file_io; `OutputFile::create` and XrdCl's `NewFile::create` are not `File::create`).
CALLS = re.compile(
    r"write_all_at\s*\(|\bpwritev?\s*\(|(?<!out)\.sync_data\s*\(|(?<!out)\.sync_all\s*\(|fs::rename\s*\(|fs::remove_file\s*\("
    r"|(?<![A-Za-z_])File::create\s*\(|create_new\s*\(\s*true|\.write\s*\(\s*true\s*\)|\.append\s*\(\s*true|fs::write\s*\("
    r"|fs::copy\s*\(|libc::fallocate\s*\(|libc::ftruncate\s*\("
)
# Files allowed to make them, and why.
ALLOWED = {
    "crates/rntuple/src/storage/local/file_io.rs": "the one place",
    "crates/rntuple/src/storage/local/io_record.rs": "writes the record itself (not an output)",
    "crates/rntuple/src/storage/local/interrupt.rs": "removes temporary names during an interrupt's clean-up, where no lock may be taken",
    "crates/rntuple-mpi/src/file_lock.rs": "the file-lock strategy's offset counter, a side file beside the output",
    "crates/rntuple-mpi/src/writer.rs": "removes the temporary file of an aborted MPI job (MPI_Abort follows)",
    "crates/rntuple-cli/src/cmd/hist.rs": "a histogram's image (SVG, PNG), not an RNTuple output",
    "crates/rntuple-cli/src/report/mod.rs": "the report's HTML page, not an RNTuple output",
    "crates/rntuple-xrootd/src/loader.rs": "the XrdCl shim in a temporary file for the loader (where memfd is refused), not an output",
}
# Directories that are not the library's output paths: build scripts, examples, tests (and unit-test modules in
# a file of their own, `mod tests;` under `#[cfg(test)]`: `tests.rs`), benchmarks, the explorer itself (it saves
# crash states).
SKIPPED = ("/tests/", "/tests.rs", "/examples/", "/benches/", "/fuzz/", "crates/rntuple-crash/", "/build.rs")


def code_of(text: str) -> str:
    """The text without `#[cfg(test)]` modules (cut at the first one: they close every file here) and comments."""
    cut = text.find("#[cfg(test)]")
    body = text if cut < 0 else text[:cut]
    return "\n".join(line.split("//", 1)[0] if not line.lstrip().startswith("//") else "" for line in body.splitlines())


def offences(root: Path = ROOT) -> list:
    found = []
    for top in SCANNED:
        for p in sorted((root / top).rglob("*.rs")):
            rel = p.relative_to(root).as_posix()
            if rel in ALLOWED or any(s in "/" + rel for s in SKIPPED) or "/target/" in rel:
                continue
            for n, line in enumerate(code_of(p.read_text(encoding="utf-8")).splitlines(), 1):
                m = CALLS.search(line)
                if m:
                    found.append(f"{rel}:{n}: {m.group(0).strip()} outside storage::local::file_io: {line.strip()[:120]}")
    return found


def self_test() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "crates" / "x" / "src"
        src.mkdir(parents=True)
        (src / "bad.rs").write_text("fn f(f: &File) { f.sync_data().ok(); }\n// f.sync_all()\n#[cfg(test)]\nmod t { fn g() { std::fs::rename(a, b); } }\n")
        (src / "good.rs").write_text("fn f(f: &File) { file_io::sync_data(f).ok(); }\n")
        got = offences(Path(d))
        assert len(got) == 1 and "bad.rs:1: .sync_data(" in got[0], got
    print("check_file_io self-test: a planted sync outside file_io is found, comments and tests are not")


if __name__ == "__main__":
    if "--self-test" in sys.argv:
        self_test()
        sys.exit(0)
    bad = offences()
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} output-changing call(s) outside crates/rntuple/src/storage/local/file_io.rs (see .ci/check_file_io.py)")
        sys.exit(1)
    print("check_file_io: every output-changing call goes through storage::local::file_io")

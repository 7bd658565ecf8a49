//! What a crash state's file at the final path reads as, and whether that is allowed.

use rntuple::arrow::array::RecordBatch;
use rntuple::storage::MemSource;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How an output is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A ROOT file with RNTuples: read by the reader (every entry of every RNTuple) and checked.
    RNTuple,
    /// Any other file (Parquet, Arrow IPC): compared byte for byte.
    Bytes,
}

/// What a file at the final path turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// No file there.
    Absent,
    /// Its RNTuples by name: every entry read.
    Read(BTreeMap<String, RecordBatch>),
    /// Its bytes (a hash and the length).
    Bytes(u64, usize),
    /// The reader refused it with this error.
    Refused(String),
    /// The reader read it, but `check` found damage.
    Damaged(String),
    /// The reader panicked.
    Panicked(String),
}

impl Outcome {
    /// A one-line summary.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Absent => "absent".into(),
            Outcome::Read(m) => {
                let parts: Vec<String> = m.iter().map(|(n, b)| format!("{n}: {} entries", b.num_rows())).collect();
                format!("read ({})", if parts.is_empty() { "no RNTuple".into() } else { parts.join(", ") })
            }
            Outcome::Bytes(h, n) => format!("{n} bytes (hash {h:016x})"),
            Outcome::Refused(e) => format!("refused: {e}"),
            Outcome::Damaged(e) => format!("read, but check found damage: {e}"),
            Outcome::Panicked(e) => format!("PANIC: {e}"),
        }
    }

    /// Entries per RNTuple, for the uproot manifest.
    pub fn entries(&self) -> Option<BTreeMap<String, usize>> {
        match self {
            Outcome::Read(m) => Some(m.iter().map(|(n, b)| (n.clone(), b.num_rows())).collect()),
            _ => None,
        }
    }
}

fn read_all(bytes: &[u8]) -> Outcome {
    let src = Arc::new(MemSource(Arc::new(bytes.to_vec())));
    let file = match rntuple::RNTupleFile::from_source(src) {
        Ok(f) => f,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let mut out = BTreeMap::new();
    for name in file.names() {
        let r = match file.reader(&name) {
            Ok(r) => r,
            Err(e) => return Outcome::Refused(format!("{name}: {e}")),
        };
        let batch = match r.read_batch(None, 0, r.num_entries()) {
            Ok(b) => b,
            Err(e) => return Outcome::Refused(format!("{name}: {e}")),
        };
        let report = r.check(|_, _| {});
        if let Some(p) = report.problems.first() {
            return Outcome::Damaged(format!("{name}: {p:?}"));
        }
        out.insert(name, batch);
    }
    Outcome::Read(out)
}

/// Judges the file `bytes` (None: absent) as `kind`.
pub fn judge(kind: Kind, bytes: Option<&[u8]>) -> Outcome {
    let Some(b) = bytes else { return Outcome::Absent };
    match kind {
        Kind::Bytes => Outcome::Bytes(xxhash_rust::xxh3::xxh3_64(b), b.len()),
        Kind::RNTuple => match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_all(b))) {
            Ok(o) => o,
            Err(p) => {
                let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                Outcome::Panicked(msg)
            }
        },
    }
}

/// Whether `got` is allowed when `durable` (the outcomes of the durable points, oldest first)
/// and the last durable point made before the crash is `from` (an index into `durable`): the
/// state must read as that one or a later one.
pub fn allowed(got: &Outcome, durable: &[Outcome], from: usize) -> bool {
    durable.iter().skip(from).any(|d| d == got)
}

//! The index of a join's auxiliary RNTuple: its key (the values of the index fields, such as run
//! and event) to its entry number, in a hash map built from the index columns alone (ROOT's
//! `RNTupleJoinTable`). Keys are compared as 64-bit integers; a key found twice is refused.

use super::chain::Chain;
use crate::error::{Error, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// Entries read at once while the index is built.
const BUILD_STEP: u64 = 1 << 20;

/// A fast seeded hasher for integer keys (a multiply-rotate mix with a random seed per map, so
/// that keys chosen by a file cannot be made to collide without knowing the seed).
#[derive(Clone, Copy)]
pub(crate) struct KeyHashBuilder(u64);

impl KeyHashBuilder {
    fn new() -> Self {
        KeyHashBuilder(std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1)
    }
}

pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl BuildHasher for KeyHashBuilder {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(self.0)
    }
}

enum Keys {
    One(HashMap<i64, u64, KeyHashBuilder>),
    Two(HashMap<(i64, i64), u64, KeyHashBuilder>),
    Many(HashMap<Box<[i64]>, u64, KeyHashBuilder>),
}

/// The auxiliary RNTuple's key -> entry map of a join on index fields.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-index-{}.root", std::process::id())).display().to_string();
/// # let mut w = Writer::create(&path, "Aux", &[("run", "std::uint32_t"), ("event", "std::uint64_t")], WriteOptions::default())?;
/// # for (run, event) in [(1, 7), (1, 3), (2, 7)] {
/// #     w.fill(&Value::Record(vec![("run".into(), Value::UInt(run)), ("event".into(), Value::UInt(event))]))?;
/// # }
/// # w.commit()?;
/// use rntuple::dataset::{Chain, JoinIndex};
/// let aux = Chain::open(&[path.clone()], None)?;
/// let index = JoinIndex::build(&aux, &["run", "event"])?;
/// assert_eq!(index.len(), 3);
/// assert_eq!(index.get(&[2, 7]), Some(2));
/// assert_eq!(index.get(&[2, 3]), None);
/// assert!(JoinIndex::build(&aux, &["run"]).is_err()); // (run=1) twice: duplicate keys
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct JoinIndex {
    keys: Keys,
    fields: Vec<String>,
}

/// The values of an integer column as `i64` (unsigned 64-bit values above `i64::MAX` wrap, on
/// both sides of a join alike); any other type is refused naming the field and where it is.
pub(crate) fn key_values(a: &ArrayRef, field: &str, place: &str) -> Result<Vec<i64>> {
    if a.null_count() > 0 {
        return Err(Error::Invalid(format!("join: index field '{field}' of {place} has missing values")));
    }
    Ok(match a.data_type() {
        DataType::Int8 => a.as_primitive::<Int8Type>().values().iter().map(|&v| i64::from(v)).collect(),
        DataType::Int16 => a.as_primitive::<Int16Type>().values().iter().map(|&v| i64::from(v)).collect(),
        DataType::Int32 => a.as_primitive::<Int32Type>().values().iter().map(|&v| i64::from(v)).collect(),
        DataType::Int64 => a.as_primitive::<Int64Type>().values().to_vec(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().values().iter().map(|&v| i64::from(v)).collect(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().values().iter().map(|&v| i64::from(v)).collect(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().values().iter().map(|&v| i64::from(v)).collect(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().values().iter().map(|&v| v as i64).collect(),
        t => return Err(Error::Invalid(format!("join: index field '{field}' of {place} is of type {t}, not an integer"))),
    })
}

/// Checks that `chain` has every index field `on`, naming the field and the file when not.
pub(crate) fn check_index_fields(chain: &Chain, on: &[&str], role: &str) -> Result<()> {
    let fields = chain.fields();
    for f in on {
        if !fields.iter().any(|(n, _)| n == f) {
            let all: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            return Err(Error::NotFound(format!(
                "join: index field '{f}' is not in the {role} RNTuple '{}' of {} (fields: {})",
                chain.name(),
                chain.location(),
                all.join(", ")
            )));
        }
    }
    let empty = chain.read_batch(Some(on), 0, 0)?;
    for (i, f) in on.iter().enumerate() {
        key_values(empty.column(i), f, &format!("the {role} RNTuple '{}' of {}", chain.name(), chain.location()))?;
    }
    Ok(())
}

impl JoinIndex {
    /// Reads the index fields `on` of every entry of `aux` (and nothing else) into the map.
    pub fn build(aux: &Chain, on: &[&str]) -> Result<JoinIndex> {
        if on.is_empty() {
            return Err(Error::Invalid("join: an index needs at least one index field".into()));
        }
        check_index_fields(aux, on, "auxiliary")?;
        let n = usize::try_from(aux.num_entries()).unwrap_or(usize::MAX).min(1 << 26);
        let h = KeyHashBuilder::new();
        let mut keys = match on.len() {
            1 => Keys::One(HashMap::with_capacity_and_hasher(n, h)),
            2 => Keys::Two(HashMap::with_capacity_and_hasher(n, h)),
            _ => Keys::Many(HashMap::with_capacity_and_hasher(n, h)),
        };
        let fields: Vec<String> = on.iter().map(|s| s.to_string()).collect();
        for range in aux.parts(BUILD_STEP) {
            let mut start = range.start;
            while start < range.end {
                let stop = range.end.min(start + BUILD_STEP);
                let batch = aux.read_batch(Some(on), start, stop)?;
                let cols = (0..on.len()).map(|i| key_values(batch.column(i), on[i], &place(aux, start))).collect::<Result<Vec<_>>>()?;
                for row in 0..(stop - start) as usize {
                    let entry = start + row as u64;
                    let old = match &mut keys {
                        Keys::One(m) => m.insert(cols[0][row], entry),
                        Keys::Two(m) => m.insert((cols[0][row], cols[1][row]), entry),
                        Keys::Many(m) => m.insert(cols.iter().map(|c| c[row]).collect(), entry),
                    };
                    if let Some(old) = old {
                        let key: Vec<String> = on.iter().zip(&cols).map(|(f, c)| format!("{f}={}", c[row])).collect();
                        return Err(Error::Invalid(format!(
                            "join: duplicate key ({}) in the auxiliary RNTuple '{}': entry {old} of {} and entry {entry} of {} \
                             (index fields {}); a join needs each key once",
                            key.join(", "),
                            aux.name(),
                            place(aux, old),
                            place(aux, entry),
                            on.join(", ")
                        )));
                    }
                }
                start = stop;
            }
        }
        Ok(JoinIndex { keys, fields })
    }

    /// The index fields.
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        match &self.keys {
            Keys::One(m) => m.len(),
            Keys::Two(m) => m.len(),
            Keys::Many(m) => m.len(),
        }
    }

    /// Whether the index holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the map holds (its slots, control bytes and, for more than two fields, the keys).
    pub fn bytes(&self) -> u64 {
        let slots = |cap: usize, slot: usize| (cap as u64) * (slot as u64 + 1);
        match &self.keys {
            Keys::One(m) => slots(m.capacity(), 16),
            Keys::Two(m) => slots(m.capacity(), 24),
            Keys::Many(m) => slots(m.capacity(), 24) + (m.len() * self.fields.len() * 8) as u64,
        }
    }

    /// The auxiliary entry of a key (one value per index field, in order).
    pub fn get(&self, key: &[i64]) -> Option<u64> {
        match (&self.keys, key) {
            (Keys::One(m), [a]) => m.get(a).copied(),
            (Keys::Two(m), [a, b]) => m.get(&(*a, *b)).copied(),
            (Keys::Many(m), k) if k.len() == self.fields.len() => m.get(k).copied(),
            _ => None,
        }
    }

    /// The auxiliary entry of each row of the key columns (one column per index field).
    pub(crate) fn lookup(&self, cols: &[Vec<i64>]) -> Vec<Option<u64>> {
        let rows = cols.first().map_or(0, Vec::len);
        match &self.keys {
            Keys::One(m) => cols[0].iter().map(|k| m.get(k).copied()).collect(),
            Keys::Two(m) => cols[0].iter().zip(&cols[1]).map(|(&a, &b)| m.get(&(a, b)).copied()).collect(),
            Keys::Many(m) => (0..rows).map(|r| m.get(cols.iter().map(|c| c[r]).collect::<Vec<_>>().as_slice()).copied()).collect(),
        }
    }
}

/// "entry E of FILE" -> the file holding a chain's entry, for messages.
fn place(chain: &Chain, entry: u64) -> String {
    match chain.locate(entry) {
        Some((k, _)) => chain.parts_inner()[k].location.clone(),
        None => chain.location().to_string(),
    }
}

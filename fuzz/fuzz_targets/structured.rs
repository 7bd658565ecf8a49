//! Fuzz target: structurally valid files around arbitrary descriptors. The fuzzer's bytes choose a
//! field tree (roles, type names, repetition counts, schema-extension fields), columns (types, bit
//! widths, deferred first elements), clusters (entry counts, column element offsets, compression),
//! pages (element counts, stored bytes, compressed or not, with or without checksums) and cluster
//! groups; `rntuple_testkit` serializes them with valid envelopes, checksums, anchor and keys, so
//! every input reaches the descriptor checks and the readers behind them (the classes of hostile
//! files of issue 14: lying element counts, offsets, entry counts, deferred columns, huge fixed-size
//! types, cross products). Each file is then opened and read: every RNTuple, values and Arrow
//! batches of bounded entry ranges, and skimmed (pages copied, and a re-encoded range). Must never
//! panic, abort, hang or allocate beyond the fuzzer's limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::format::descriptor::*;
use rntuple::primitives::column_type::ColumnType;
use rntuple::RNTupleFile;
use rntuple_testkit::{column_range, compress, push_column, push_field, FileForge, NTupleOptions, TOP};

/// The fuzzer's bytes as a stream of choices; zeros once they run out.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn below(&mut self, n: usize) -> usize {
        self.u8() as usize % n.max(1)
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |v, i| v | (self.u8() as u64) << (8 * i))
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.0.len());
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        b.to_vec()
    }
    /// A count: small most of the time, else one of the values that break things, else any.
    fn count(&mut self) -> u64 {
        match self.u8() {
            0..=159 => self.u8() as u64 % 8,
            160..=223 => self.pick(&[0, 1, 255, 256, 4096, 1 << 20, 1 << 28, (1 << 31) - 1, 1 << 31, 1 << 32, 1 << 40, 1 << 56, 1 << 62, u64::MAX]),
            _ => self.u64(),
        }
    }
}

const TYPES: &[&str] = &[
    "float",
    "double",
    "std::int32_t",
    "std::uint64_t",
    "bool",
    "char",
    "std::string",
    "std::vector<float>",
    "std::vector<std::vector<double>>",
    "ROOT::VecOps::RVec<std::int32_t>",
    "std::array<float,3>",
    "std::array<float,1099511627776>",
    "std::bitset<8>",
    "std::bitset<1099511627776>",
    "std::variant<float,std::int32_t>",
    "std::optional<float>",
    "std::pair<float,std::string>",
    "std::map<std::string,float>",
    "std::atomic<float>",
    "ROOT::RNTupleCardinality<std::uint32_t>",
    "",
    "MyClass",
    "std::vector<std::vector<std::vector<std::vector<std::vector<std::vector<std::vector<std::vector<float>>>>>>>>",
];

fn descriptor(c: &mut Choices) -> Descriptor {
    let mut d = Descriptor { name: "Events".into(), ..Default::default() };
    let n_fields = 1 + c.below(8);
    for id in 0..n_fields as u32 {
        let parent = if id > 0 && c.u8() & 1 == 1 { Some(c.below(id as usize) as u32) } else { None };
        let role = Role::from_u16(c.pick(&[0, 0, 0, 1, 1, 2, 3, 4, 7]));
        let type_name = if c.u8() < 240 {
            c.pick(TYPES).to_string()
        } else {
            {
                let n = c.below(24);
                String::from_utf8_lossy(&c.bytes(n)).into_owned()
            }
        };
        let repetition = (c.u8() < 48).then(|| c.count());
        let from_extension = id > 0 && c.u8() < 32;
        d.fields.push(FieldDescriptor {
            id,
            field_version: 0,
            type_version: 0,
            parent,
            role,
            flags: 0,
            name: format!("f{id}"),
            type_name,
            extras: None,
            repetition,
            projection_source: None,
            type_checksum: None,
            children: Vec::new(),
            columns: Vec::new(),
            from_extension,
        });
        if let Some(p) = parent {
            d.fields[p as usize].children.push(id);
        }
        for _ in 0..c.below(3) {
            let raw = c.u8();
            let ty = ColumnType::from_u16(raw as u16 % 0x1E).map(|t| t.to_u16()).unwrap_or(raw as u16);
            let bits = match ColumnType::from_u16(ty).and_then(|t| t.fixed_bits()) {
                Some(b) if c.u8() < 240 => b,
                _ => c.u8() as u16 % 70,
            };
            let first_element = if c.u8() < 40 { c.count() } else { 0 };
            let col = ColumnDescriptor {
                id: d.columns.len() as u32,
                column_type: ty,
                bits_on_storage: bits,
                field_id: id,
                flags: 0,
                representation: 0,
                first_element,
                suppressed_deferred: first_element > 0 && c.u8() < 16,
                value_range: (ty == 0x1D).then(|| (-(c.u8() as f64), c.u8() as f64)),
                from_extension: from_extension || (first_element > 0 && c.u8() & 1 == 1),
            };
            d.fields[id as usize].columns.push(col.id);
            d.columns.push(col);
        }
    }
    // Extension fields must follow the header's in id order for the envelopes to say the same.
    if d.fields.iter().skip_while(|f| !f.from_extension).any(|f| !f.from_extension) {
        for f in &mut d.fields {
            f.from_extension = false;
        }
    }
    if c.u8() == 255 {
        // Many deferred float fields from the schema extension: one side of a cross product.
        let first_element = c.count();
        for _ in 0..1 + c.u8() as usize * 16 {
            let name = format!("w{}", d.fields.len());
            let id = push_field(&mut d, None, Role::Leaf, &name, "float");
            d.fields[id as usize].from_extension = true;
            let col = push_column(&mut d, id, ColumnType::SplitReal32);
            let col = &mut d.columns[col as usize];
            (col.from_extension, col.flags, col.first_element) = (true, 1, first_element);
        }
    }
    d.n_header_fields = d.fields.iter().filter(|f| !f.from_extension).count();
    d
}

/// A valid zstd block of ROOT's framing holding 16 MiB - 1 of zeros (computed once).
fn zero_block() -> &'static [u8] {
    static BLOCK: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BLOCK.get_or_init(|| compress(&vec![0u8; 0xFF_FFFF], 505).unwrap_or_default())
}

fn pages(c: &mut Choices, f: &mut FileForge, d: &mut Descriptor) {
    // Usually a few clusters; sometimes thousands (the other side of a cross product).
    let n_clusters = if c.u8() == 255 { 1 + c.u8() as usize * 16 } else { 1 + c.below(4) };
    let mut first_entry = 0u64;
    let mut col_first = vec![0u64; d.columns.len()];
    for id in 0..n_clusters {
        let n_entries = c.count();
        let listed = if c.u8() < 200 { d.columns.len() } else { c.below(d.columns.len() + 1) }.min(32);
        // (Columns past the first 32, the wide extension ones, are never listed: no cross product here.)
        let mut columns = Vec::new();
        for (col, first) in col_first.iter_mut().enumerate().take(listed) {
            if c.u8() < 8 {
                columns.push(None);
                continue;
            }
            let mut list = Vec::new();
            for _ in 0..c.below(3) {
                let n = match c.u8() {
                    0..=199 => c.u8() as u32 % 64,
                    _ => c.count().min(i32::MAX as u64) as u32,
                };
                let stored = if c.u8() == 255 {
                    // Valid compression blocks of 16 MiB each, as many as the fuzzer says: a page
                    // can claim far more than they hold and still pass a ratio check.
                    zero_block().repeat(1 + c.below(64))
                } else {
                    let len = c.below(200);
                    let raw = c.bytes(len);
                    if c.u8() & 1 == 1 {
                        compress(&raw, 505).unwrap_or(raw)
                    } else {
                        raw
                    }
                };
                list.push(f.page(&stored, n, c.u8() < 230));
            }
            let compression = c.pick(&[0, 505, 505, 101, 207, 404, 9999]);
            let start = if c.u8() < 230 { *first } else { c.count() };
            let r = column_range(start, compression, list);
            *first = first.wrapping_add(r.n_elements);
            columns.push(Some(r));
            let _ = col;
        }
        d.clusters.push(ClusterDescriptor { id, first_entry, n_entries, columns });
        first_entry = if c.u8() < 240 { first_entry.wrapping_add(n_entries) } else { c.count() };
    }
    let span = d.clusters.iter().map(|c| c.first_entry.wrapping_add(c.n_entries)).max().unwrap_or(0);
    let split = if n_clusters > 1 && c.u8() & 1 == 1 { 1 + c.below(n_clusters - 1) } else { n_clusters };
    let link = EnvelopeLink::default();
    d.cluster_groups.push(ClusterGroupDescriptor {
        min_entry: 0,
        entry_span: if c.u8() < 240 { span } else { c.count() },
        n_clusters: split as u32,
        page_list: link,
    });
    if split < n_clusters {
        let min = d.clusters[split].first_entry;
        d.cluster_groups[0].entry_span = min;
        d.cluster_groups.push(ClusterGroupDescriptor {
            min_entry: min,
            entry_span: span.wrapping_sub(min),
            n_clusters: (n_clusters - split) as u32,
            page_list: link,
        });
    }
}

fn read(bytes: Vec<u8>) {
    let Ok(f) = RNTupleFile::from_bytes(bytes) else { return };
    for name in f.names() {
        let Ok(r) = f.reader(&name) else { continue };
        let n = r.num_entries();
        let stop = n.min(64);
        let _ = r.read_values(None, 0, stop);
        let _ = r.read_batch(None, stop / 2, stop);
        let _ = r.read_batch(None, n.saturating_sub(3), n);
        for field in r.fields() {
            let _ = r.read_batch(Some(&[field.name.as_str()]), 0, n.min(1));
        }
        skim(&r, n);
    }
}

/// The skim path: all fields with pages copied, then a range re-encoded. The output is /dev/null
/// (written directly, without a sync): the writing side is not what this target explores.
fn skim(r: &rntuple::Reader, n: u64) {
    use rntuple::ops::skim::{skim_reader, Skim};
    let out = std::path::Path::new("/dev/null");
    let opts = rntuple::write::WriteOptions::default;
    let _ = skim_reader(r, out, &Skim::default(), opts(), |_, _| {});
    let _ = skim_reader(r, out, &Skim { entries: Some((n / 3, n.min(64).max(n / 3))), reencode: true, ..Default::default() }, opts(), |_, _| {});
}

fuzz_target!(|data: &[u8]| {
    let mut c = Choices(data);
    let mut d = descriptor(&mut c);
    let mut f = FileForge::new("fuzz.root");
    pages(&mut c, &mut f, &mut d);
    let opts = NTupleOptions { compression: c.pick(&[0, 505]), ..Default::default() };
    if f.add_ntuple(TOP, &mut d, &opts).is_err() {
        return;
    }
    if let Ok(bytes) = f.finish() {
        read(bytes);
    }
});

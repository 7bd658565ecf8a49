//! Serialization: descriptors to envelope bytes (header, footer, page list), the inverse of
//! [`super::envelope`]. Pure functions; no I/O.

use super::cursor::Locator;
use super::descriptor::*;
use super::envelope::{ENVELOPE_FOOTER, ENVELOPE_HEADER, ENVELOPE_PAGE_LIST};

/// A little-endian byte builder with RNTuple frames.
#[derive(Default)]
pub struct ByteWriter {
    buf: Vec<u8>,
}

/// An open frame: where its size field is, and whether it is a list.
#[must_use]
pub struct OpenFrame {
    at: usize,
    list: bool,
}

impl ByteWriter {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }
    /// The bytes written so far.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// u16.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// u32.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// i32.
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// u64.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// i64.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// f64.
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    /// A string: u32 length and UTF-8 bytes.
    pub fn string(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.bytes(s.as_bytes());
    }
    /// A locator: standard (12 bytes) when the size fits in 31 bits, else the large form.
    pub fn locator(&mut self, l: &Locator) {
        if l.size <= i32::MAX as u64 {
            self.i32(l.size as i32);
            self.u64(l.offset);
        } else {
            self.i32(-(20 | (1 << 24)));
            self.u64(l.size);
            self.u64(l.offset);
        }
    }
    /// Opens a record frame.
    pub fn record(&mut self) -> OpenFrame {
        let at = self.buf.len();
        self.i64(1);
        OpenFrame { at, list: false }
    }
    /// Opens a list frame of `n` items.
    pub fn list(&mut self, n: u32) -> OpenFrame {
        let at = self.buf.len();
        self.i64(-1);
        self.u32(n);
        OpenFrame { at, list: true }
    }
    /// Closes a frame: writes its size.
    pub fn close(&mut self, f: OpenFrame) {
        let size = (self.buf.len() - f.at) as i64;
        let v = if f.list { -size } else { size };
        self.buf[f.at..f.at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// Wraps a payload into an envelope: type and length preamble, XXH3 trailer. Returns the
/// envelope and its checksum.
pub fn envelope(ty: u16, payload: &[u8]) -> (Vec<u8>, u64) {
    let len = (payload.len() + 16) as u64;
    let mut v = Vec::with_capacity(len as usize);
    v.extend_from_slice(&(ty as u64 | (len << 16)).to_le_bytes());
    v.extend_from_slice(payload);
    let sum = crate::format::checksum::xxh3(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    (v, sum)
}

fn schema(w: &mut ByteWriter, fields: &[FieldDescriptor], columns: &[ColumnDescriptor], aliases: &[AliasColumn], extra: &[ExtraTypeInfo]) {
    let l = w.list(fields.len() as u32);
    for f in fields {
        let r = w.record();
        w.u32(f.field_version);
        w.u32(f.type_version);
        w.u32(f.parent.unwrap_or(f.id));
        w.u16(f.role.to_u16());
        let mut flags = 0u16;
        if f.repetition.is_some() {
            flags |= FIELD_FLAG_REPETITIVE;
        }
        if f.projection_source.is_some() {
            flags |= FIELD_FLAG_PROJECTED;
        }
        if f.type_checksum.is_some() {
            flags |= FIELD_FLAG_TYPE_CHECKSUM;
        }
        w.u16(flags);
        w.string(&f.name);
        w.string(&f.type_name);
        w.string(f.type_alias());
        w.string(f.description());
        if let Some(n) = f.repetition {
            w.u64(n);
        }
        if let Some(p) = f.projection_source {
            w.u32(p);
        }
        if let Some(c) = f.type_checksum {
            w.u32(c);
        }
        w.close(r);
    }
    w.close(l);
    let l = w.list(columns.len() as u32);
    for c in columns {
        let r = w.record();
        w.u16(c.column_type);
        w.u16(c.bits_on_storage);
        w.u32(c.field_id);
        let mut flags = 0u16;
        let deferred = c.first_element > 0 || c.suppressed_deferred;
        if deferred {
            flags |= COLUMN_FLAG_DEFERRED;
        }
        if c.value_range.is_some() {
            flags |= COLUMN_FLAG_VALUE_RANGE;
        }
        w.u16(flags);
        w.u16(c.representation);
        if deferred {
            let v = c.first_element as i64;
            w.i64(if c.suppressed_deferred { -v } else { v });
        }
        if let Some((lo, hi)) = c.value_range {
            w.f64(lo);
            w.f64(hi);
        }
        w.close(r);
    }
    w.close(l);
    let l = w.list(aliases.len() as u32);
    for a in aliases {
        let r = w.record();
        w.u32(a.physical);
        w.u32(a.field_id);
        w.close(r);
    }
    w.close(l);
    let l = w.list(extra.len() as u32);
    for e in extra {
        let r = w.record();
        w.u32(e.content_id);
        w.u32(e.type_version);
        w.string(&e.type_name);
        w.u32(e.content.len() as u32);
        w.bytes(&e.content);
        w.close(r);
    }
    w.close(l);
}

/// The records of a list that are not from the schema extension: borrowed when they are its
/// first ones, as writers append them (a copy of 100,000 fields was 27 MB), else copied.
fn header_part<T: Clone>(all: &[T], from_extension: impl Fn(&T) -> bool) -> std::borrow::Cow<'_, [T]> {
    let n = all.iter().position(&from_extension).unwrap_or(all.len());
    if all[n..].iter().all(&from_extension) {
        std::borrow::Cow::Borrowed(&all[..n])
    } else {
        std::borrow::Cow::Owned(all.iter().filter(|x| !from_extension(x)).cloned().collect())
    }
}

/// The header envelope of `d` (its header fields and columns: those not from the schema
/// extension). Returns the envelope and its checksum.
pub fn header(d: &Descriptor) -> (Vec<u8>, u64) {
    let mut w = ByteWriter::new();
    w.u64(0); // feature flags
    w.string(&d.name);
    w.string(&d.description);
    w.string(&d.writer);
    let fields = header_part(&d.fields, |f| f.from_extension);
    let columns = header_part(&d.columns, |c| c.from_extension);
    let n_fields = fields.len() as u32;
    let aliases: Vec<AliasColumn> = d.aliases.iter().filter(|a| a.field_id < n_fields).copied().collect();
    schema(&mut w, &fields, &columns, &aliases, &[]);
    envelope(ENVELOPE_HEADER, &w.into_inner())
}

/// The footer envelope: schema extension (always the four lists), cluster groups.
pub fn footer(d: &Descriptor) -> Vec<u8> {
    let mut w = ByteWriter::new();
    w.u64(0);
    w.u64(d.header_checksum);
    let ext = w.record();
    let fields: Vec<FieldDescriptor> = d.fields.iter().filter(|f| f.from_extension).cloned().collect();
    let columns: Vec<ColumnDescriptor> = d.columns.iter().filter(|c| c.from_extension).cloned().collect();
    let first_ext = d.fields.iter().filter(|f| !f.from_extension).count() as u32;
    let aliases: Vec<AliasColumn> = d.aliases.iter().filter(|a| a.field_id >= first_ext).copied().collect();
    schema(&mut w, &fields, &columns, &aliases, &d.extra_type_info);
    w.close(ext);
    let l = w.list(d.cluster_groups.len() as u32);
    for g in &d.cluster_groups {
        let r = w.record();
        w.u64(g.min_entry);
        w.u64(g.entry_span);
        w.u32(g.n_clusters);
        w.u64(g.page_list.length);
        w.locator(&g.page_list.locator);
        w.close(r);
    }
    w.close(l);
    // Linked attribute sets (format 1.0.1.0+): only when there are some, so that a footer without
    // them stays readable by readers that predate the list (uproot before 5.7).
    if !d.attribute_sets.is_empty() {
        let l = w.list(d.attribute_sets.len() as u32);
        for a in &d.attribute_sets {
            let r = w.record();
            w.u16(a.schema_major);
            w.u16(a.schema_minor);
            w.u32(a.anchor_length);
            w.locator(&a.anchor);
            w.string(&a.name);
            w.close(r);
        }
        w.close(l);
    }
    envelope(ENVELOPE_FOOTER, &w.into_inner()).0
}

/// The page list envelope of the given clusters (one cluster group).
pub fn page_list(header_checksum: u64, clusters: &[ClusterDescriptor]) -> Vec<u8> {
    let mut w = ByteWriter::new();
    w.u64(header_checksum);
    let l = w.list(clusters.len() as u32);
    for c in clusters {
        let r = w.record();
        w.u64(c.first_entry);
        w.u64(c.n_entries);
        w.close(r);
    }
    w.close(l);
    let outer = w.list(clusters.len() as u32);
    for c in clusters {
        let cols = w.list(c.columns.len() as u32);
        for cr in &c.columns {
            match cr {
                Some(cr) if !cr.suppressed => {
                    let pl = w.list(cr.pages.len() as u32);
                    for p in &cr.pages {
                        let n = p.n_elements as i32;
                        w.i32(if p.has_checksum { -n } else { n });
                        w.locator(&p.locator);
                    }
                    w.i64(cr.first_element as i64);
                    w.u32(cr.compression);
                    w.close(pl);
                }
                _ => {
                    let pl = w.list(0);
                    w.i64(i64::MIN);
                    w.close(pl);
                }
            }
        }
        w.close(cols);
    }
    w.close(outer);
    envelope(ENVELOPE_PAGE_LIST, &w.into_inner()).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::envelope::{parse_footer, parse_header, parse_page_list};

    fn field(id: u32, parent: Option<u32>, role: Role, name: &str, ty: &str) -> FieldDescriptor {
        FieldDescriptor {
            id,
            field_version: 0,
            type_version: 0,
            parent,
            role,
            flags: 0,
            name: name.into(),
            type_name: ty.into(),
            extras: None,
            repetition: None,
            projection_source: None,
            type_checksum: None,
            children: vec![],
            columns: vec![],
            from_extension: false,
        }
    }

    fn column(id: u32, ty: u16, bits: u16, field_id: u32) -> ColumnDescriptor {
        ColumnDescriptor {
            id,
            column_type: ty,
            bits_on_storage: bits,
            field_id,
            flags: 0,
            representation: 0,
            first_element: 0,
            suppressed_deferred: false,
            value_range: None,
            from_extension: false,
        }
    }

    #[test]
    fn header_footer_page_list_round_trip() {
        let mut d = Descriptor { name: "Events".into(), writer: "rntuple test".into(), ..Default::default() };
        d.fields.push(field(0, None, Role::Leaf, "x", "float"));
        d.fields.push(field(1, None, Role::Collection, "v", "std::vector<std::int32_t>"));
        d.fields.push(field(2, Some(1), Role::Leaf, "_0", "std::int32_t"));
        let mut q = column(2, 0x1D, 12, 0);
        q.value_range = Some((-1.0, 5.0));
        d.columns = vec![column(0, 0x18, 32, 0), column(1, 0x1B, 64, 1), column(2, 0x13, 32, 2)];
        d.columns.push(ColumnDescriptor { id: 3, representation: 1, ..q });
        let (h, sum) = header(&d);
        let mut back = parse_header(&h).unwrap();
        assert_eq!(back.name, "Events");
        assert_eq!(back.fields.len(), 3);
        assert_eq!(back.fields[2].parent, Some(1));
        assert_eq!(back.fields[1].children, vec![2]);
        assert_eq!(back.columns[3].value_range, Some((-1.0, 5.0)));
        assert_eq!(back.fields[0].columns, vec![0, 3]);
        d.header_checksum = sum;
        let page = |n, off| PageDescriptor { n_elements: n, has_checksum: true, locator: Locator { size: 10, offset: off }, first_in_cluster: 0 };
        let cr = |first, pages: Vec<PageDescriptor>| {
            let n = pages.iter().map(|p| p.n_elements as u64).sum();
            Some(ColumnRange { first_element: first, n_elements: n, compression: 505, suppressed: false, pages })
        };
        let clusters = vec![ClusterDescriptor {
            id: 0,
            first_entry: 0,
            n_entries: 3,
            columns: vec![cr(0, vec![page(3, 100)]), cr(0, vec![page(3, 200)]), cr(0, vec![page(2, 300), page(4, 400)]), None],
        }];
        let pl = page_list(sum, &clusters);
        d.cluster_groups.push(ClusterGroupDescriptor {
            min_entry: 0,
            entry_span: 3,
            n_clusters: 1,
            page_list: EnvelopeLink { length: pl.len() as u64, locator: Locator { size: pl.len() as u64, offset: 999 } },
        });
        let f = footer(&d);
        parse_footer(&f, &mut back).unwrap();
        assert_eq!(back.num_entries(), 3);
        parse_page_list(&pl, &mut back, 0).unwrap();
        let c = &back.clusters[0];
        let col2 = c.columns[2].as_ref().unwrap();
        assert_eq!(col2.pages.len(), 2);
        assert_eq!(col2.pages[1].first_in_cluster, 2);
        assert_eq!(col2.n_elements, 6);
        assert!(c.columns[3].as_ref().unwrap().suppressed);
    }

    #[test]
    fn large_locator_round_trip() {
        let mut w = ByteWriter::new();
        let l = Locator { size: 5 << 31, offset: 1 << 40 };
        w.locator(&l);
        let b = w.into_inner();
        assert_eq!(b.len(), 20);
        assert_eq!(crate::format::cursor::Cursor::new(&b, "t").locator("l").unwrap(), l);
    }
}

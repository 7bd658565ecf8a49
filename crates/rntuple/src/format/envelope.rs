//! Envelopes (header, footer, page list): checksum verification and deserialization into
//! descriptors. Pure functions over bytes; no I/O.

use super::compression;
use super::cursor::Cursor;
use super::descriptor::*;
use crate::error::{Error, Result};

/// Envelope type ids.
pub const ENVELOPE_HEADER: u16 = 1;
/// Footer envelope type.
pub const ENVELOPE_FOOTER: u16 = 2;
/// Page list envelope type.
pub const ENVELOPE_PAGE_LIST: u16 = 3;

/// Decompresses an envelope of `len` bytes from its `stored` bytes (found at `offset`), bounded
/// by what it declares: the stored bytes may not expand beyond
/// [`compression::METADATA_MAX_RATIO`], the compression blocks must add up to `len`, and the
/// envelope's own preamble (in its first block, decompressed first) must state `len` as its
/// length, all before the whole envelope is allocated. A stored envelope whose anchor or link
/// says 1 GiB but whose preamble says 148 bytes is refused having inflated one block.
///
/// ```
/// use rntuple::format::compression::{compress, Compression};
/// use rntuple::format::envelope::decompress_envelope;
/// let mut env = vec![0u8; 100_000];
/// env[..8].copy_from_slice(&(2u64 | 100_000 << 16).to_le_bytes());
/// let mut z = Vec::new();
/// compress(&env, Compression::zstd(5), &mut z)?;
/// assert_eq!(decompress_envelope(&z, 100_000, "footer", 0)?, env);
/// // The same blocks, their header lengths patched: a preamble disagreeing with the length.
/// env[..8].copy_from_slice(&(2u64 | 50 << 16).to_le_bytes());
/// let mut z = Vec::new();
/// compress(&env, Compression::zstd(5), &mut z)?;
/// let e = decompress_envelope(&z, 100_000, "footer", 0).unwrap_err().to_string();
/// assert!(e.contains("preamble says it is 50 bytes long"), "{e}");
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn decompress_envelope(stored: &[u8], len: u64, what: &str, offset: u64) -> Result<Vec<u8>> {
    if stored.len() as u64 == len {
        return Ok(stored.to_vec());
    }
    compression::check_metadata_ratio(stored.len() as u64, len, what, offset)?;
    compression::check_blocks(stored, len, what, offset)?;
    let preamble = compression::decompress_prefix(stored, 8, what, offset)?;
    if let Ok(p) = <[u8; 8]>::try_from(preamble.as_slice()) {
        let stated = u64::from_le_bytes(p) >> 16;
        if stated != len {
            return Err(Error::corrupt(format!("{what} envelope: its preamble says it is {stated} bytes long, its locator {len} bytes"), offset));
        }
    }
    compression::decompress(stored, len as usize, what, offset)
}

/// Checks the envelope preamble and trailing XXH3; returns the payload (between preamble and checksum)
/// and the checksum.
pub fn open_envelope<'a>(buf: &'a [u8], expected_type: u16, name: &'static str) -> Result<(&'a [u8], u64)> {
    if buf.len() < 16 {
        return Err(Error::in_envelope(format!("envelope of {} bytes is shorter than 16", buf.len()), 0, name));
    }
    let mut a = [0u8; 8];
    a.copy_from_slice(&buf[0..8]);
    let tl = u64::from_le_bytes(a);
    let ty = (tl & 0xFFFF) as u16;
    let len = tl >> 16;
    if ty != expected_type {
        return Err(Error::in_envelope(format!("envelope type {ty}, expected {expected_type}"), 0, name));
    }
    if len != buf.len() as u64 {
        return Err(Error::in_envelope(format!("envelope says it is {len} bytes long, but {} bytes were read", buf.len()), 0, name));
    }
    let n = buf.len();
    a.copy_from_slice(&buf[n - 8..]);
    let stored = u64::from_le_bytes(a);
    let computed = crate::format::checksum::xxh3(&buf[..n - 8]);
    if stored != computed {
        return Err(Error::Checksum { what: format!("{name} envelope"), offset: (n - 8) as u64, stored, computed });
    }
    Ok((&buf[8..n - 8], stored))
}

fn check_features(c: &mut Cursor, what: &str) -> Result<()> {
    let f = c.feature_flags()?;
    if let Some(bit) = f.first() {
        return Err(Error::Unsupported(format!("{what} sets unsupported format feature {bit}")));
    }
    Ok(())
}

/// Parses the header envelope (decompressed bytes) into a descriptor without clusters.
pub fn parse_header(buf: &[u8]) -> Result<Descriptor> {
    let (payload, checksum) = open_envelope(buf, ENVELOPE_HEADER, "header")?;
    let mut c = Cursor::new(payload, "header");
    check_features(&mut c, "header")?;
    let mut d = Descriptor {
        name: c.string("RNTuple name")?,
        description: c.string("description")?,
        writer: c.string("writer identification")?,
        header_checksum: checksum,
        ..Default::default()
    };
    parse_schema(&mut c, &mut d, false)?;
    d.n_header_fields = d.fields.len();
    Ok(d)
}

/// The smallest field record: its frame's size, versions, parent, role, flags and four string lengths.
const MIN_FIELD_RECORD: usize = 8 + 4 + 4 + 4 + 2 + 2 + 4 * 4;
/// The smallest column record: its frame's size, type, bits, field, flags and representation.
const MIN_COLUMN_RECORD: usize = 8 + 2 + 2 + 4 + 2 + 2;

/// Parses the four schema lists (fields, columns, alias columns, extra type info).
fn parse_schema(c: &mut Cursor, d: &mut Descriptor, extension: bool) -> Result<()> {
    let field_base = d.fields.len() as u32;
    let lf = c.list_frame("field list", 8)?;
    // Exact capacities (a schema of 100,000 fields held 30 % more than it needed when grown by doubling), as
    // many as the list's bytes can hold at the records' smallest sizes.
    d.fields.reserve_exact((lf.len() as usize).min(lf.end.saturating_sub(c.pos()) / MIN_FIELD_RECORD));
    for i in 0..lf.len() {
        let id = field_base + i;
        let f = c.record_frame("field record")?;
        let field_version = c.u32("field version")?;
        let type_version = c.u32("type version")?;
        let parent = c.u32("parent field id")?;
        let role = Role::from_u16(c.u16("structural role")?);
        let flags = c.u16("field flags")?;
        let name = c.string("field name")?;
        let type_name = c.string("type name")?;
        let type_alias = c.string("type alias")?;
        let description = c.string("field description")?;
        let repetition = if flags & FIELD_FLAG_REPETITIVE != 0 { Some(c.u64("repetition count")?) } else { None };
        let projection_source = if flags & FIELD_FLAG_PROJECTED != 0 { Some(c.u32("projection source")?) } else { None };
        let type_checksum = if flags & FIELD_FLAG_TYPE_CHECKSUM != 0 { Some(c.u32("type checksum")?) } else { None };
        c.leave(&f, "field record")?;
        if name.is_empty() {
            return Err(c.err(format!("field {id} has an empty name")));
        }
        let parent = if parent == id { None } else { Some(parent) };
        if let Some(p) = parent
            && p >= id {
                return Err(c.err(format!("field {id} ('{name}') names parent {p}, which does not precede it")));
            }
        d.fields.push(FieldDescriptor {
            id,
            field_version,
            type_version,
            parent,
            role,
            flags,
            name,
            type_name,
            extras: FieldExtras::of(type_alias, description),
            repetition,
            projection_source,
            type_checksum,
            children: Vec::new(),
            columns: Vec::new(),
            from_extension: extension,
        });
        if let Some(p) = parent {
            d.fields[p as usize].children.push(id);
        }
    }
    c.leave(&lf, "field list")?;

    let col_base = d.columns.len() as u32;
    let lc = c.list_frame("column list", 8)?;
    d.columns.reserve_exact((lc.len() as usize).min(lc.end.saturating_sub(c.pos()) / MIN_COLUMN_RECORD));
    for i in 0..lc.len() {
        let f = c.record_frame("column record")?;
        let column_type = c.u16("column type")?;
        let bits_on_storage = c.u16("bits on storage")?;
        let field_id = c.u32("column field id")?;
        let flags = c.u16("column flags")?;
        let representation = c.u16("representation index")?;
        let mut first_element = 0;
        let mut suppressed_deferred = false;
        if flags & COLUMN_FLAG_DEFERRED != 0 {
            let v = c.i64("first element index")?;
            suppressed_deferred = v < 0;
            first_element = v.unsigned_abs();
        }
        let value_range = if flags & COLUMN_FLAG_VALUE_RANGE != 0 { Some((c.f64("range min")?, c.f64("range max")?)) } else { None };
        c.leave(&f, "column record")?;
        if field_id as usize >= d.fields.len() {
            return Err(c.err(format!("column {} belongs to unknown field {field_id}", col_base + i)));
        }
        let id = col_base + i;
        d.fields[field_id as usize].columns.push(id);
        d.columns.push(ColumnDescriptor {
            id,
            column_type,
            bits_on_storage,
            field_id,
            flags,
            representation,
            first_element,
            suppressed_deferred,
            value_range,
            from_extension: extension,
        });
    }
    c.leave(&lc, "column list")?;

    let la = c.list_frame("alias column list", 8)?;
    for _ in 0..la.len() {
        let f = c.record_frame("alias column record")?;
        let physical = c.u32("alias physical column")?;
        let field_id = c.u32("alias field id")?;
        c.leave(&f, "alias column record")?;
        if physical as usize >= d.columns.len() || field_id as usize >= d.fields.len() {
            return Err(c.err(format!("alias column refers to column {physical} / field {field_id}, which do not exist")));
        }
        d.fields[field_id as usize].columns.push(physical);
        d.aliases.push(AliasColumn { physical, field_id });
    }
    c.leave(&la, "alias column list")?;

    let le = c.list_frame("extra type info list", 8)?;
    for _ in 0..le.len() {
        let f = c.record_frame("extra type info record")?;
        let content_id = c.u32("content id")?;
        let type_version = c.u32("type version")?;
        let type_name = c.string("type name")?;
        let n = c.u32("content length")? as usize;
        let content = c.bytes(n, "extra type info content")?.to_vec();
        c.leave(&f, "extra type info record")?;
        d.extra_type_info.push(ExtraTypeInfo { content_id, type_version, type_name, content });
    }
    c.leave(&le, "extra type info list")?;
    Ok(())
}

/// Parses the footer envelope into `d` (schema extension and cluster groups).
pub fn parse_footer(buf: &[u8], d: &mut Descriptor) -> Result<()> {
    let (payload, _) = open_envelope(buf, ENVELOPE_FOOTER, "footer")?;
    let mut c = Cursor::new(payload, "footer");
    check_features(&mut c, "footer")?;
    let hc = c.u64("header checksum")?;
    if hc != d.header_checksum {
        return Err(Error::Checksum { what: "footer's copy of the header checksum".into(), offset: 0, stored: hc, computed: d.header_checksum });
    }
    let ext = c.record_frame("schema extension")?;
    if ext.end - c.pos() > 0 {
        parse_schema(&mut c, d, true)?;
    }
    c.leave(&ext, "schema extension")?;
    let lg = c.list_frame("cluster group list", 8)?;
    for _ in 0..lg.len() {
        let f = c.record_frame("cluster group record")?;
        let min_entry = c.u64("cluster group min entry")?;
        let entry_span = c.u64("cluster group entry span")?;
        let n_clusters = c.u32("cluster group cluster count")?;
        let length = c.u64("page list length")?;
        let locator = c.locator("page list locator")?;
        c.leave(&f, "cluster group record")?;
        d.cluster_groups.push(ClusterGroupDescriptor { min_entry, entry_span, n_clusters, page_list: EnvelopeLink { length, locator } });
    }
    c.leave(&lg, "cluster group list")?;
    // Format 1.0.1.0 appends a list of linked attribute sets (older footers end here; ROOT writes an
    // empty list when there are none). Bytes after it belong to later versions and are ignored.
    if c.remaining() > 0 {
        parse_attribute_sets(&mut c, d)?;
    }
    link_fields(d)?;
    Ok(())
}

/// Longest anchor an attribute-set link may announce (ROOT's is 78 bytes; later versions may
/// append members, not kilobytes).
pub const MAX_ATTRIBUTE_ANCHOR: u32 = 4096;

/// Parses the footer's list of linked attribute sets into `d.attribute_sets`.
fn parse_attribute_sets(c: &mut Cursor, d: &mut Descriptor) -> Result<()> {
    // A record is at least 8 (frame) + 8 (versions, anchor length) + 12 (locator) + 4 (name).
    let la = c.list_frame("attribute set list", 32)?;
    // Names seen so far: a set (a footer of 200,000 links is checked in linear time).
    let mut names: std::collections::HashSet<String> = d.attribute_sets.iter().map(|a| a.name.clone()).collect();
    for i in 0..la.len() {
        let at = c.pos();
        let f = c.record_frame("attribute set record")?;
        let schema_major = c.u16("attribute schema major version")?;
        let schema_minor = c.u16("attribute schema minor version")?;
        let anchor_length = c.u32("attribute anchor length")?;
        let anchor = c.locator("attribute anchor locator")?;
        let name = c.string("attribute set name")?;
        c.leave(&f, "attribute set record")?;
        if name.is_empty() {
            return Err(Error::in_envelope(format!("attribute set {i} has an empty name"), at as u64, "footer"));
        }
        if !names.insert(name.clone()) {
            return Err(Error::in_envelope(format!("attribute set '{name}' is linked twice"), at as u64, "footer"));
        }
        if anchor_length == 0 || anchor_length > MAX_ATTRIBUTE_ANCHOR {
            return Err(Error::in_envelope(
                format!("attribute set '{name}': anchor length {anchor_length} is not within 1..={MAX_ATTRIBUTE_ANCHOR}"),
                at as u64,
                "footer",
            ));
        }
        d.attribute_sets.push(AttributeSetLink { schema_major, schema_minor, anchor_length, anchor, name });
    }
    c.leave(&la, "attribute set list")?;
    Ok(())
}

/// Checks the field tree's cross references after header and extension are known.
fn link_fields(d: &mut Descriptor) -> Result<()> {
    for f in &d.fields {
        if let Some(p) = f.projection_source
            && p as usize >= d.fields.len() {
                return Err(Error::corrupt(format!("projected field '{}' names unknown source field {p}", f.name), 0));
            }
    }
    Ok(())
}

/// Parses a page list envelope for cluster group `group`, appending its clusters to `d`.
pub fn parse_page_list(buf: &[u8], d: &mut Descriptor, group: usize) -> Result<()> {
    let (payload, _) = open_envelope(buf, ENVELOPE_PAGE_LIST, "page list")?;
    let mut c = Cursor::new(payload, "page list");
    let hc = c.u64("header checksum")?;
    if hc != d.header_checksum {
        return Err(Error::Checksum { what: "page list's copy of the header checksum".into(), offset: 0, stored: hc, computed: d.header_checksum });
    }
    let g = d
        .cluster_groups
        .get(group)
        .ok_or_else(|| Error::Invalid(format!("page list of cluster group {group}, but the footer lists {}", d.cluster_groups.len())))?;
    let ls = c.list_frame("cluster summary list", 24)?;
    if ls.len() != g.n_clusters {
        return Err(c.err(format!("page list has {} clusters, its cluster group says {}", ls.len(), g.n_clusters)));
    }
    let mut summaries = Vec::with_capacity(ls.len() as usize);
    for _ in 0..ls.len() {
        let f = c.record_frame("cluster summary")?;
        let first = c.u64("cluster first entry")?;
        let nf = c.u64("cluster entries and flags")?;
        c.leave(&f, "cluster summary")?;
        if (nf >> 56) & CLUSTER_FLAG_SHARDED != 0 {
            return Err(Error::Unsupported("cluster is sharded (flag 0x01), a reserved feature".into()));
        }
        summaries.push((first, nf & ((1 << 56) - 1)));
    }
    c.leave(&ls, "cluster summary list")?;
    let lo = c.list_frame("cluster page locations", 12)?;
    if lo.len() != ls.len() {
        return Err(c.err(format!("page locations for {} clusters, summaries for {}", lo.len(), ls.len())));
    }
    let n_columns = d.columns.len();
    for (first_entry, n_entries) in summaries {
        let lcol = c.list_frame("column page list", 12)?;
        if lcol.len() as usize > n_columns {
            return Err(c.err(format!("cluster lists {} columns, the schema has {n_columns}", lcol.len())));
        }
        // Only the columns the cluster lists are kept (no padding to the schema's column count: a
        // small page list of many clusters times many columns must not become a large table).
        let mut columns = Vec::with_capacity(lcol.len() as usize);
        for _ in 0..lcol.len() {
            let lp = c.list_frame("page list", 16)?;
            let mut pages = Vec::with_capacity(lp.len() as usize);
            let mut n = 0u64;
            for _ in 0..lp.len() {
                let ne = c.i32("page element count")?;
                let locator = c.locator("page locator")?;
                let n_elements = ne.unsigned_abs();
                pages.push(PageDescriptor { n_elements, has_checksum: ne < 0, locator, first_in_cluster: n });
                n += n_elements as u64;
            }
            let off = c.i64("column element offset")?;
            let (suppressed, compression) = if off < 0 { (true, 0) } else { (false, c.u32("column compression settings")?) };
            c.leave(&lp, "page list")?;
            columns.push(Some(ColumnRange { first_element: off.max(0) as u64, n_elements: n, compression, suppressed, pages }));
        }
        c.leave(&lcol, "column page list")?;
        let id = d.clusters.len();
        d.clusters.push(ClusterDescriptor { id, first_entry, n_entries, columns });
    }
    c.leave(&lo, "cluster page locations")?;
    Ok(())
}

//! Building descriptors by hand: fields, columns, column ranges and cluster groups appended to a
//! [`Descriptor`] with their links kept consistent. For tests and for forging files
//! (`rntuple-testkit`); the writer builds its descriptors through its plans instead.

use crate::format::descriptor::*;
use crate::primitives::column_type::ColumnType;

/// Appends a field to `d` (id = its position) and links it to its parent; returns its id.
pub fn push_field(d: &mut Descriptor, parent: Option<u32>, role: Role, name: &str, type_name: &str) -> u32 {
    let id = d.fields.len() as u32;
    d.fields.push(FieldDescriptor {
        id,
        field_version: 0,
        type_version: 0,
        parent,
        role,
        flags: 0,
        name: name.to_string(),
        type_name: type_name.to_string(),
        extras: None,
        repetition: None,
        projection_source: None,
        type_checksum: None,
        children: Vec::new(),
        columns: Vec::new(),
        from_extension: false,
    });
    if let Some(p) = parent.and_then(|p| d.fields.get_mut(p as usize)) {
        p.children.push(id);
    }
    // The header fields precede the extension's (field ids are positions in the header's list,
    // then the extension's): their count is a binary search, not a scan per push (quadratic in a
    // schema of 100,000 fields).
    d.n_header_fields = d.fields[..id as usize].partition_point(|f| !f.from_extension) + 1;
    id
}

/// Appends a physical column of type `ty` (its fixed bit width; 32 for the variable-width
/// types) to field `field`; returns its id.
pub fn push_column(d: &mut Descriptor, field: u32, ty: ColumnType) -> u32 {
    let id = d.columns.len() as u32;
    d.columns.push(ColumnDescriptor {
        id,
        column_type: ty.to_u16(),
        bits_on_storage: ty.fixed_bits().unwrap_or(32),
        field_id: field,
        flags: 0,
        representation: 0,
        first_element: 0,
        suppressed_deferred: false,
        value_range: None,
        from_extension: false,
    });
    if let Some(f) = d.fields.get_mut(field as usize) {
        f.columns.push(id);
    }
    id
}

/// A column's range in a cluster: its pages in order (their cluster-local first elements and the
/// element count are computed), starting at global element `first_element`.
pub fn column_range(first_element: u64, compression: u32, mut pages: Vec<PageDescriptor>) -> ColumnRange {
    let mut n = 0u64;
    for p in &mut pages {
        p.first_in_cluster = n;
        n = n.saturating_add(p.n_elements as u64);
    }
    ColumnRange { first_element, n_elements: n, compression, suppressed: false, pages }
}

/// Replaces the cluster groups of `d` by one group holding all its clusters (entry span: the end
/// of the last cluster).
pub fn single_group(d: &mut Descriptor) {
    let span = d.clusters.iter().map(|c| c.first_entry.saturating_add(c.n_entries)).max().unwrap_or(0);
    d.cluster_groups = vec![ClusterGroupDescriptor { min_entry: 0, entry_span: span, n_clusters: d.clusters.len() as u32, page_list: EnvelopeLink::default() }];
}

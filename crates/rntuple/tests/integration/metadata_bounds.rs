//! Issue 35: an RNTuple's decompressed metadata is bounded by what its file can back (a page list
//! describing every pair of many columns x many clusters in few compressed bytes is refused before
//! most of it is inflated), and an attribute set whose meta fields have the wrong kinds is refused
//! when opened.

use rntuple::format::descriptor::{ClusterDescriptor, ClusterGroupDescriptor, Descriptor, EnvelopeLink, Role};
use rntuple::primitives::column_type::ColumnType as C;
use rntuple::primitives::encode::PageValues as V;
use rntuple::RNTupleFile;
use rntuple_testkit::*;

/// `n_fields` floats x `n_clusters` clusters of one entry, every pair listed with the same page,
/// one cluster group per `per_group` clusters.
fn listed(n_fields: usize, n_clusters: usize, per_group: usize) -> Vec<u8> {
    let mut f = FileForge::new("t.root");
    let mut d = Descriptor { name: "Events".into(), ..Default::default() };
    for i in 0..n_fields {
        let x = push_field(&mut d, None, Role::Leaf, &format!("f{i}"), "float");
        push_column(&mut d, x, C::SplitReal32);
    }
    let p = f.page(&encode(C::SplitReal32, V::F32(&[0.5])).unwrap(), 1, true);
    for k in 0..n_clusters {
        let columns = (0..n_fields).map(|_| Some(column_range(k as u64, 0, vec![p]))).collect();
        d.clusters.push(ClusterDescriptor { id: k, first_entry: k as u64, n_entries: 1, columns });
    }
    d.cluster_groups = (0..n_clusters)
        .step_by(per_group)
        .map(|k| {
            let n = per_group.min(n_clusters - k);
            ClusterGroupDescriptor { min_entry: k as u64, entry_span: n as u64, n_clusters: n as u32, page_list: EnvelopeLink::default() }
        })
        .collect();
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default()).unwrap();
    f.finish().unwrap()
}

#[test]
fn listed_cross_product_below_the_bound_reads() {
    let r = RNTupleFile::from_bytes(listed(200, 100, 10)).unwrap().reader("Events").unwrap();
    assert_eq!(r.num_entries(), 100);
    let b = r.read_batch(Some(&["f199"]), 99, 100).unwrap();
    assert_eq!(b.num_rows(), 1);
}

#[test]
fn listed_cross_product_beyond_what_the_file_backs_is_refused() {
    // 1,500 x 1,500 pairs: 90 MB of page lists in 150 groups, a few hundred KiB of file.
    let bytes = listed(1500, 1500, 10);
    assert!(bytes.len() < 4 << 20, "{}", bytes.len());
    let e = RNTupleFile::from_bytes(bytes).unwrap().reader("Events").err().expect("refused").to_string();
    assert!(
        e.contains("metadata decompresses to more than") && e.contains("(16.0 MiB, or 4 times the file's size)") && e.contains("page list at offset"),
        "{e}"
    );
}

#[test]
fn attribute_set_whose_range_start_is_a_string_is_refused() {
    let mut f = FileForge::new("t.root");
    let mut a = Descriptor { name: "meta".into(), ..Default::default() };
    let s = push_field(&mut a, None, Role::Leaf, "_rangeStart", "std::string");
    push_column(&mut a, s, C::SplitIndex64);
    push_column(&mut a, s, C::Char);
    let n = push_field(&mut a, None, Role::Leaf, "_rangeLen", "std::uint64_t");
    push_column(&mut a, n, C::SplitUInt64);
    push_field(&mut a, None, Role::Record, "_userData", "");
    let p0 = f.page(&encode(C::SplitIndex64, V::U64(&[3])).unwrap(), 1, true);
    let p1 = f.page(b"abc", 3, true);
    let p2 = f.page(&encode(C::SplitUInt64, V::U64(&[1])).unwrap(), 1, true);
    let columns = vec![Some(column_range(0, 0, vec![p0])), Some(column_range(0, 0, vec![p1])), Some(column_range(0, 0, vec![p2]))];
    a.clusters.push(ClusterDescriptor { id: 0, first_entry: 0, n_entries: 1, columns });
    single_group(&mut a);
    let link = f.put_attribute_set(&mut a, &NTupleOptions::default()).unwrap();
    let mut d = Descriptor { name: "Events".into(), ..Default::default() };
    push_field(&mut d, None, Role::Record, "e", "");
    d.clusters.push(ClusterDescriptor { id: 0, first_entry: 0, n_entries: 1, columns: vec![] });
    d.attribute_sets.push(link);
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default()).unwrap();
    let r = RNTupleFile::from_bytes(f.finish().unwrap()).unwrap().reader("Events").unwrap();
    let e = r.attribute_set("meta").err().expect("refused").to_string();
    assert!(e.contains("its field '_rangeStart' is of type 'std::string', not an integer"), "{e}");
}

//! Gathering chosen entries of a chain (the auxiliary side of a join): the wanted entries sorted,
//! grouped by cluster, each cluster's entries read (only the pages of that cluster, the range the
//! entries span when they are dense, else the whole cluster, kept in a one-cluster cache for the
//! next batch), taken, and put back in the caller's order with nulls where no entry is wanted.

use super::chain::Chain;
use crate::error::{Error, Result};
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array, UInt64Array};
use std::sync::Mutex;

/// The last whole cluster read for a gather: (input, cluster, fields) and its batch.
#[derive(Default)]
pub(crate) struct ClusterCache {
    key: Option<(usize, usize, Vec<String>)>,
    batch: Option<RecordBatch>,
}

fn cached(cache: &Mutex<ClusterCache>, key: &(usize, usize, Vec<String>)) -> Option<RecordBatch> {
    let c = cache.lock().ok()?;
    if c.key.as_ref() == Some(key) {
        c.batch.clone()
    } else {
        None
    }
}

/// The chosen top-level `fields` of the chain's entries `entries` (one output row per item; `None`
/// gives a null), one array per field.
pub(crate) fn gather(chain: &Chain, fields: &[&str], entries: &[Option<u64>], cache: &Mutex<ClusterCache>) -> Result<Vec<ArrayRef>> {
    let rows = u32::try_from(entries.len()).map_err(|_| Error::Unsupported("a join batch of more than 2^32 entries".into()))?;
    let mut want: Vec<(u64, u32)> = entries.iter().zip(0..rows).filter_map(|(e, r)| e.map(|e| (e, r))).collect();
    want.sort_unstable();
    let names: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
    let mut partial: Vec<Vec<ArrayRef>> = vec![Vec::new(); fields.len()];
    let parts = chain.parts_inner();
    let mut i = 0;
    while i < want.len() {
        let (k, local) = chain.locate(want[i].0).ok_or_else(|| Error::internal(format!("gather: entry {} beyond the chain", want[i].0)))?;
        let p = &parts[k];
        let clusters = &p.reader.descriptor().clusters;
        let ci = clusters.partition_point(|c| c.first_entry + c.n_entries <= local);
        let (c_first, c_end) = clusters.get(ci).map_or((0, p.reader.num_entries()), |c| (c.first_entry, c.first_entry + c.n_entries));
        let mut j = i;
        while j < want.len() && want[j].0 < p.first + c_end {
            j += 1;
        }
        let lo = want[i].0 - p.first;
        let hi = want[j - 1].0 - p.first + 1;
        let key = (k, ci, names.clone());
        let (batch, base) = if let Some(b) = cached(cache, &key) {
            (b, c_first)
        } else if hi - lo == (j - i) as u64 {
            // dense (an aligned join): just these entries, nothing kept
            (p.reader.read_batch(Some(fields), lo, hi).map_err(|e| e.context(p.location.clone()))?, lo)
        } else {
            let b = p.reader.read_batch(Some(fields), c_first, c_end).map_err(|e| e.context(p.location.clone()))?;
            if let Ok(mut c) = cache.lock() {
                c.key = Some(key);
                c.batch = Some(b.clone());
            }
            (b, c_first)
        };
        let idx = UInt64Array::from_iter_values(want[i..j].iter().map(|&(e, _)| e - p.first - base));
        let identity = base == lo && hi - lo == (j - i) as u64 && batch.num_rows() as u64 == hi - lo;
        for (c, out) in partial.iter_mut().enumerate() {
            let col = batch.column(c);
            out.push(if identity { col.clone() } else { arrow_select::take::take(col.as_ref(), &idx, None)? });
        }
        i = j;
    }
    // back to the caller's order, with nulls for the entries without a match
    let mut order: Vec<Option<u32>> = vec![None; entries.len()];
    for (pos, &(_, r)) in want.iter().enumerate() {
        order[r as usize] = Some(pos as u32);
    }
    let in_order = want.len() == entries.len() && want.iter().enumerate().all(|(pos, &(_, r))| pos as u32 == r);
    let order = UInt32Array::from(order);
    let mut out = Vec::with_capacity(fields.len());
    for (c, parts) in partial.into_iter().enumerate() {
        let sorted = match parts.len() {
            0 => chain.read_batch(Some(&fields[c..=c]), 0, 0)?.column(0).clone(),
            1 => parts[0].clone(),
            _ => arrow_select::concat::concat(&parts.iter().map(|a| a.as_ref()).collect::<Vec<&dyn Array>>())?,
        };
        out.push(if in_order {
            sorted
        } else if sorted.is_empty() {
            arrow_array::new_null_array(sorted.data_type(), entries.len())
        } else {
            arrow_select::take::take(sorted.as_ref(), &order, None)?
        });
    }
    Ok(out)
}

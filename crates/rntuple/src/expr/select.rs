//! A compiled selection: an entry condition (`--where`) and element filters of collections
//! (`--filter COLLECTION:EXPR`), applied to record batches.

use super::eval::Evaluator;
use super::parse::{parse, Expr};
use super::values::{list_parts, Collection};
use crate::error::{Error, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BooleanArray, GenericListArray, OffsetSizeTrait, PrimitiveArray, RecordBatch};
use arrow_buffer::OffsetBuffer;
use arrow_schema::DataType;
use std::sync::Arc;

/// A filter of the elements of one collection.
///
/// Filters are given to [`Selection::new`] as `(collection, expression)` pairs (the form
/// [`Selection::parse_filter`] makes of a `--filter` argument), which compiles them.
///
/// ```
/// use rntuple::expr::Selection;
/// let filter = Selection::parse_filter("Jet:Jet_pt > 25 && abs(Jet_eta) < 2.4")?;
/// assert_eq!(filter, ("Jet".to_string(), "Jet_pt > 25 && abs(Jet_eta) < 2.4".to_string()));
/// let sel = Selection::new(None, &[filter])?;
/// assert_eq!(sel.collections(), ["Jet"]);
/// assert_eq!(sel.fields_named(), ["Jet_pt", "Jet_eta"]);
/// assert!(Selection::parse_filter("Jet_pt > 25").is_err()); // no collection named
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Filter {
    /// The collection: a list field (`Jet`), and/or the prefix of list fields `Jet_*` whose
    /// elements go together (NanoAOD's flat layout, whose count field `nJet` is updated).
    pub collection: String,
    /// The expression's text.
    pub text: String,
    expr: Expr,
}

/// An entry condition and collection filters.
///
/// ```
/// use rntuple::expr::Selection;
/// let sel = Selection::new(Some("nJet >= 2 && MET_pt > 50"), &[("Jet".into(), "Jet_pt > 25".into())])?;
/// assert!(!sel.is_empty() && sel.filters_elements());
/// assert_eq!(sel.collections(), ["Jet"]);
/// assert_eq!(sel.fields_named(), ["Jet_pt", "nJet", "MET_pt"]);
/// assert!(Selection::default().is_empty());
/// assert!(Selection::new(Some("nJet >="), &[]).is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Selection {
    condition: Option<(String, Expr)>,
    filters: Vec<Filter>,
}

impl Selection {
    /// Parses the entry condition `where_` and the `(collection, expression)` filters.
    pub fn new(where_: Option<&str>, filters: &[(String, String)]) -> Result<Selection> {
        let condition = where_.map(|w| parse(w).map(|e| (w.to_string(), e))).transpose()?;
        let filters = filters
            .iter()
            .map(|(c, t)| {
                if c.is_empty() {
                    return Err(Error::Invalid(format!("filter '{t}': no collection named (write COLLECTION:EXPR)")));
                }
                Ok(Filter { collection: c.clone(), text: t.clone(), expr: parse(t).map_err(|e| e.context(format!("filter of '{c}'")))? })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Selection { condition, filters })
    }

    /// Parses a `--filter` argument `COLLECTION:EXPR`.
    pub fn parse_filter(arg: &str) -> Result<(String, String)> {
        match arg.split_once(':') {
            Some((c, e)) if !c.trim().is_empty() && !e.trim().is_empty() => Ok((c.trim().to_string(), e.to_string())),
            _ => Err(Error::Invalid(format!("--filter '{arg}': write COLLECTION:EXPR, e.g. 'Jet:Jet_pt > 25'"))),
        }
    }

    /// Whether nothing is selected (every entry and element kept).
    pub fn is_empty(&self) -> bool {
        self.condition.is_none() && self.filters.is_empty()
    }

    /// Whether collections are filtered.
    pub fn filters_elements(&self) -> bool {
        !self.filters.is_empty()
    }

    /// The top-level field names the expressions name (`Jet` for `Jet.pt`), and those of the
    /// filtered collections, without repeats.
    pub fn fields_named(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (top, ..) in self.names() {
            if !out.contains(&top) {
                out.push(top);
            }
        }
        out
    }

    /// Every field name in the expressions: (its top-level field, the name as written, the
    /// expression's text, the column of the name in it).
    pub fn names(&self) -> Vec<(String, String, String, usize)> {
        let mut out = Vec::new();
        let mut exprs: Vec<(&str, &Expr)> = self.filters.iter().map(|f| (f.text.as_str(), &f.expr)).collect();
        if let Some((t, e)) = &self.condition {
            exprs.push((t, e));
        }
        for (text, e) in exprs {
            walk(e, &mut |name, col| out.push((name.split('.').next().unwrap_or(name).to_string(), name.to_string(), text.to_string(), col)));
        }
        out
    }

    /// The filtered collection names.
    pub fn collections(&self) -> Vec<&str> {
        self.filters.iter().map(|f| f.collection.as_str()).collect()
    }

    /// The masks of this selection over `batch`: the entry condition's (evaluated on the batch as
    /// read) and each filter's over the elements of its collection.
    pub fn masks(&self, batch: &RecordBatch) -> Result<Masks> {
        let entries = match &self.condition {
            Some((text, e)) => Some(Evaluator::new(batch, text).entry_mask(e)?),
            None => None,
        };
        let mut elements = Vec::new();
        for f in &self.filters {
            let coll = collection_of(batch, &f.collection)?;
            let mask = Evaluator::new(batch, &f.text).element_mask(&f.expr, &coll).map_err(|e| e.context(format!("filter of '{}'", f.collection)))?;
            elements.push((f.collection.clone(), mask));
        }
        Ok(Masks { entries, elements })
    }

    /// Applies the selection to `batch` ([`Selection::masks`], then [`apply_masks`]).
    pub fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        apply_masks(batch, &self.masks(batch)?)
    }
}

/// The masks of a selection over one batch.
///
/// ```
/// use rntuple::expr::Selection;
/// use rntuple::arrow::array::{Int32Array, RecordBatch};
/// use std::sync::Arc;
/// let batch = RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1, 5, 3])) as _)])?;
/// let masks = Selection::new(Some("x > 2"), &[])?.masks(&batch)?;
/// assert_eq!(masks.entries, Some(vec![false, true, true]));
/// assert!(masks.elements.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Masks {
    /// One boolean per entry (all entries kept when `None`).
    pub entries: Option<Vec<bool>>,
    /// Per filtered collection, one boolean per element of the batch's entries, entry by entry.
    pub elements: Vec<(String, Vec<bool>)>,
}

/// The elements of the collection `name` of `batch` (see [`Filter::collection`]).
pub fn collection_of(batch: &RecordBatch, name: &str) -> Result<Arc<Collection>> {
    let m = members(batch, name)?;
    let Some(&first) = m.lists.first() else {
        return Err(Error::Invalid(format!("filter of '{name}': no collection '{name}' (a list field '{name}' or list fields '{name}_*')")));
    };
    let (offsets, _) = list_parts(batch.column(first))?;
    Ok(Arc::new(Collection { name: name.to_string(), offsets }))
}

/// Applies masks to `batch`: each element mask keeps elements of all list fields of its
/// collection alike and sets its count field (`nJet`) to the elements kept; the entry mask keeps
/// entries. Masks of the wrong length are an error naming the collection. (Entries are kept first,
/// so that the element filters copy only the kept entries' elements.)
///
/// ```
/// use rntuple::expr::{apply_masks, Masks};
/// use rntuple::arrow::array::{Array, LargeListArray, RecordBatch, UInt32Array};
/// use rntuple::arrow::datatypes::Float32Type;
/// use std::sync::Arc;
/// let pt = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![Some(vec![Some(30.0), Some(10.0)]), Some(vec![Some(5.0)])]);
/// let batch = RecordBatch::try_from_iter([("nJet", Arc::new(UInt32Array::from(vec![2, 1])) as _), ("Jet_pt", Arc::new(pt) as _)])?;
/// // Keep the first entry, and the first of its two jets.
/// let masks = Masks { entries: Some(vec![true, false]), elements: vec![("Jet".into(), vec![true, false, true])] };
/// let out = apply_masks(&batch, &masks)?;
/// let n = out.column(0).as_any().downcast_ref::<UInt32Array>().unwrap();
/// assert_eq!((out.num_rows(), n.value(0)), (1, 1));
/// let too_short = Masks { entries: None, elements: vec![("Jet".into(), vec![true])] };
/// assert!(apply_masks(&batch, &too_short).is_err()); // one boolean per jet, three jets
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn apply_masks(batch: &RecordBatch, masks: &Masks) -> Result<RecordBatch> {
    let mut colls = Vec::with_capacity(masks.elements.len());
    for (k, (name, mask)) in masks.elements.iter().enumerate() {
        if masks.elements[..k].iter().any(|(n, _)| n == name) {
            return Err(Error::Invalid(format!("filter of '{name}': the collection is filtered twice; join the conditions with '&&'")));
        }
        let coll = collection_of(batch, name)?;
        if mask.len() != coll.elements() {
            return Err(Error::Invalid(format!(
                "filter of '{name}': {} booleans for {} elements (one per element of each entry, in order)",
                mask.len(),
                coll.elements()
            )));
        }
        colls.push(coll);
    }
    let (batch, kept_masks) = match &masks.entries {
        None => (batch.clone(), None),
        Some(k) if k.len() != batch.num_rows() => return Err(Error::Invalid(format!("selection: {} booleans for {} entries", k.len(), batch.num_rows()))),
        Some(k) => {
            let kept =
                arrow_select::filter::filter_record_batch(batch, &BooleanArray::from(k.clone())).map_err(|e| Error::Invalid(format!("selection: {e}")))?;
            let per_coll: Vec<(Vec<bool>, Vec<u64>)> = masks.elements.iter().zip(&colls).map(|((_, m), c)| of_kept_entries(m, c, k)).collect();
            (kept, Some(per_coll))
        }
    };
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    let schema = batch.schema();
    let mut kept_masks = kept_masks.map(Vec::into_iter);
    for ((name, mask), coll) in masks.elements.iter().zip(&colls) {
        // The mask and the kept elements per entry, of the entries the entry mask left.
        let (keep, lens) = match kept_masks.as_mut().and_then(Iterator::next) {
            Some((m, lens)) => (BooleanArray::from(m), lens),
            None => (BooleanArray::from(mask.clone()), counts(coll, mask)),
        };
        let m = members(&batch, name)?;
        for &i in &m.lists {
            columns[i] = filter_list(&columns[i], &keep, &lens)?;
        }
        if let Some(i) = m.count {
            columns[i] = counts_as(&lens, columns[i].data_type(), schema.field(i).name())?;
        }
    }
    RecordBatch::try_new(schema, columns).map_err(|e| Error::Invalid(format!("selection: {e}")))
}

/// The part of an element mask of `coll` that belongs to the entries `entries` keeps, in order,
/// and the elements it keeps in each of those entries.
fn of_kept_entries(mask: &[bool], coll: &Collection, entries: &[bool]) -> (Vec<bool>, Vec<u64>) {
    let (mut out, mut lens) = (Vec::new(), Vec::new());
    for (w, &keep) in coll.offsets.windows(2).zip(entries) {
        if keep {
            let m = mask.get(w[0]..w[1]).unwrap_or(&[]);
            out.extend_from_slice(m);
            lens.push(m.iter().filter(|&&b| b).count() as u64);
        }
    }
    (out, lens)
}

fn walk(e: &Expr, f: &mut impl FnMut(&str, usize)) {
    match e {
        Expr::Field(n, col) => f(n, *col),
        Expr::Neg(a) | Expr::Not(a) => walk(a, f),
        Expr::Bin(_, a, b) => {
            walk(a, f);
            walk(b, f);
        }
        Expr::Call(_, args, _) => args.iter().for_each(|a| walk(a, f)),
        Expr::Num(_) | Expr::Bool(_) => {}
    }
}

/// The columns of a collection in a batch: its list fields, and its count field.
struct Members {
    lists: Vec<usize>,
    count: Option<usize>,
}

fn members(batch: &RecordBatch, coll: &str) -> Result<Members> {
    let schema = batch.schema();
    let prefix = format!("{coll}_");
    let mut lists = Vec::new();
    let mut shape: Option<(String, Vec<usize>)> = None;
    for (i, field) in schema.fields().iter().enumerate() {
        let name = field.name();
        if !(name == coll || name.starts_with(&prefix)) || !matches!(field.data_type(), DataType::List(_) | DataType::LargeList(_)) {
            continue;
        }
        let (offsets, _) = list_parts(batch.column(i))?;
        match &shape {
            None => shape = Some((name.clone(), offsets)),
            Some((first, o)) if *o != offsets => {
                return Err(Error::Invalid(format!(
                    "filter of '{coll}': '{name}' and '{first}' have different numbers of elements, so they are not one collection"
                )))
            }
            Some(_) => {}
        }
        lists.push(i);
    }
    let count = schema.index_of(&format!("n{coll}")).ok().filter(|&i| schema.field(i).data_type().is_integer());
    Ok(Members { lists, count })
}

fn counts(coll: &Collection, mask: &[bool]) -> Vec<u64> {
    coll.offsets.windows(2).map(|w| mask.get(w[0]..w[1]).map(|m| m.iter().filter(|&&b| b).count() as u64).unwrap_or(0)).collect()
}

fn counts_as(n: &[u64], ty: &DataType, name: &str) -> Result<ArrayRef> {
    macro_rules! prim {
        ($t:ty, $n:ty) => {
            Arc::new(PrimitiveArray::<$t>::from_iter_values(n.iter().map(|&x| x as $n))) as ArrayRef
        };
    }
    Ok(match ty {
        DataType::Int8 => prim!(Int8Type, i8),
        DataType::Int16 => prim!(Int16Type, i16),
        DataType::Int32 => prim!(Int32Type, i32),
        DataType::Int64 => prim!(Int64Type, i64),
        DataType::UInt8 => prim!(UInt8Type, u8),
        DataType::UInt16 => prim!(UInt16Type, u16),
        DataType::UInt32 => prim!(UInt32Type, u32),
        DataType::UInt64 => prim!(UInt64Type, u64),
        other => return Err(Error::Invalid(format!("count field '{name}' is {other}, not an integer"))),
    })
}

/// A list array with the elements `keep` marks; `lens` holds the kept elements per entry.
fn filter_list(array: &ArrayRef, keep: &BooleanArray, lens: &[u64]) -> Result<ArrayRef> {
    match array.data_type() {
        DataType::List(_) => filter_list_of::<i32>(array.as_list::<i32>(), keep, lens),
        DataType::LargeList(_) => filter_list_of::<i64>(array.as_list::<i64>(), keep, lens),
        other => Err(Error::Invalid(format!("filter: {other} is not a list"))),
    }
}

fn filter_list_of<O: OffsetSizeTrait>(list: &GenericListArray<O>, keep: &BooleanArray, lens: &[u64]) -> Result<ArrayRef> {
    let raw = list.value_offsets();
    let first = raw.first().map(|o| o.as_usize()).unwrap_or(0);
    let last = raw.last().map(|o| o.as_usize()).unwrap_or(0);
    if last < first || last - first != keep.len() || last > list.values().len() || lens.len() != list.len() {
        return Err(Error::Invalid(format!("filter: {} elements, mask of {}", last.saturating_sub(first), keep.len())));
    }
    let values = list.values().slice(first, last - first);
    let kept = arrow_select::filter::filter(&values, keep).map_err(|e| Error::Invalid(format!("filter: {e}")))?;
    let lens = lens.iter().map(|&n| n as usize);
    let field = match list.data_type() {
        DataType::List(f) | DataType::LargeList(f) => f.clone(),
        _ => return Err(Error::internal("a list without its element field")),
    };
    let out = GenericListArray::<O>::try_new(field, OffsetBuffer::<O>::from_lengths(lens), kept, list.nulls().cloned())
        .map_err(|e| Error::Invalid(format!("filter: {e}")))?;
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float32Array, Int32Array, LargeListArray, StructArray, UInt32Array};
    use arrow_schema::Field;

    fn batch() -> RecordBatch {
        let pt = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![
            Some(vec![Some(30.0), Some(10.0), Some(26.0)]),
            Some(vec![]),
            Some(vec![Some(5.0), Some(60.0)]),
        ]);
        let eta = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![
            Some(vec![Some(0.1), Some(0.2), Some(-3.0)]),
            Some(vec![]),
            Some(vec![Some(1.0), Some(2.0)]),
        ]);
        let mu = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![Some(vec![Some(26.0)]), Some(vec![Some(20.0)]), Some(vec![])]);
        RecordBatch::try_from_iter([
            ("event", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
            ("nJet", Arc::new(UInt32Array::from(vec![3, 0, 2])) as ArrayRef),
            ("Jet_pt", Arc::new(pt) as ArrayRef),
            ("Jet_eta", Arc::new(eta) as ArrayRef),
            ("Muon_pt", Arc::new(mu) as ArrayRef),
        ])
        .unwrap()
    }

    fn floats(a: &ArrayRef) -> Vec<Vec<f32>> {
        let l = a.as_list::<i64>();
        (0..l.len()).map(|i| l.value(i).as_primitive::<Float32Type>().values().to_vec()).collect()
    }

    fn ints(a: &ArrayRef) -> Vec<i64> {
        let c = arrow_array::cast::AsArray::as_primitive_opt::<Int32Type>(a.as_ref()).map(|p| p.values().iter().map(|&x| x as i64).collect());
        c.unwrap_or_else(|| a.as_primitive::<UInt32Type>().values().iter().map(|&x| x as i64).collect())
    }

    #[test]
    fn where_keeps_entries() {
        let s = Selection::new(Some("count(Jet_pt > 25) >= 1 && any(Muon_pt > 25)"), &[]).unwrap();
        let out = s.apply(&batch()).unwrap();
        assert_eq!(ints(out.column(0)), vec![1]);
        let s = Selection::new(Some("nJet == 0 || max(Jet_pt) > 50"), &[]).unwrap();
        assert_eq!(ints(s.apply(&batch()).unwrap().column(0)), vec![2, 3]);
        let s = Selection::new(Some("sum(Jet_pt) / 2 >= 32 && !(event == 1)"), &[]).unwrap();
        assert_eq!(ints(s.apply(&batch()).unwrap().column(0)), vec![3]);
        let s = Selection::new(Some("all(abs(Jet_eta) < 2.5)"), &[]).unwrap();
        assert_eq!(ints(s.apply(&batch()).unwrap().column(0)), vec![2, 3], "all() of nothing is true");
        let s = Selection::new(Some("min(Jet_pt) < 6 || count(Jet) == 0"), &[]).unwrap();
        assert_eq!(ints(s.apply(&batch()).unwrap().column(0)), vec![2, 3]);
    }

    #[test]
    fn filter_cuts_all_members_and_the_count() {
        let s = Selection::new(Some("event != 2"), &[("Jet".into(), "Jet_pt > 25 && abs(Jet_eta) < 2.4".into())]).unwrap();
        let out = s.apply(&batch()).unwrap();
        assert_eq!(floats(out.column(2)), vec![vec![30.0], vec![60.0]]);
        assert_eq!(floats(out.column(3)), vec![vec![0.1], vec![2.0]]);
        assert_eq!(ints(out.column(1)), vec![1, 1]);
        assert_eq!(floats(out.column(4)), vec![vec![26.0], vec![]], "other collections untouched");
        // Dropping an entry with elements: the filter's mask follows the kept entries.
        let s = Selection::new(Some("event != 1"), &[("Jet".into(), "Jet_pt > 4".into())]).unwrap();
        let out = s.apply(&batch()).unwrap();
        assert_eq!(floats(out.column(2)), vec![vec![], vec![5.0, 60.0]]);
        assert_eq!(floats(out.column(3)), vec![vec![], vec![1.0, 2.0]]);
        assert_eq!(ints(out.column(1)), vec![0, 2]);
    }

    #[test]
    fn entry_values_broadcast_to_elements() {
        let s = Selection::new(None, &[("Jet".into(), "Jet_pt > 20 + event * 5".into())]).unwrap();
        let out = s.apply(&batch()).unwrap();
        assert_eq!(floats(out.column(2)), vec![vec![30.0, 26.0], vec![], vec![60.0]]);
    }

    #[test]
    fn records_of_a_list() {
        let pt = Arc::new(Float32Array::from(vec![30.0, 10.0, 50.0]));
        let q = Arc::new(Int32Array::from(vec![1, -1, 1]));
        let st = StructArray::from(vec![
            (Arc::new(Field::new("pt", DataType::Float32, false)), pt as ArrayRef),
            (Arc::new(Field::new("q", DataType::Int32, false)), q as ArrayRef),
        ]);
        let item = Arc::new(Field::new("_0", st.data_type().clone(), false));
        let jets = LargeListArray::new(item, OffsetBuffer::from_lengths([2, 0, 1]), Arc::new(st), None);
        let b = RecordBatch::try_from_iter([("Jet", Arc::new(jets) as ArrayRef)]).unwrap();
        let s = Selection::new(Some("count(Jet) > 0"), &[("Jet".into(), "Jet.pt > 20 && Jet.q > 0".into())]).unwrap();
        let out = s.apply(&b).unwrap();
        let l = out.column(0).as_list::<i64>();
        assert_eq!(l.len(), 2);
        let pts: Vec<f32> = l.values().as_struct().column(0).as_primitive::<Float32Type>().values().to_vec();
        assert_eq!(pts, vec![30.0, 50.0]);
        assert_eq!(l.value_offsets().to_vec(), vec![0, 1, 2]);
    }

    #[test]
    fn errors_say_what_and_where() {
        let b = batch();
        for (w, want) in [
            ("Jet_pz > 3", "no field 'Jet_pz' (the fields are: event, nJet, Jet_pt, Jet_eta, Muon_pt)"),
            ("Jet_pz > 3", "at column 1"),
            ("Jet_pt > 3", "must give a boolean per entry, this gives a boolean per element of 'Jet_pt'"),
            ("Jet_pt > Muon_pt", "'Jet_pt' and 'Muon_pt' have different numbers of elements"),
            ("count(event) > 1", "count() at column 1: needs a collection"),
            ("event && 1", "'&&' needs booleans, got a number"),
            ("median(Jet_pt) > 3", "no function 'median' at column 1"),
            ("event + 1", "must give a boolean per entry, this gives a number"),
        ] {
            let e = Selection::new(Some(w), &[]).unwrap().apply(&b).unwrap_err().to_string();
            assert!(e.contains(want), "{w}: {e}");
        }
        let e = Selection::new(None, &[("Tau".into(), "Tau_pt > 1".into())]).unwrap().apply(&b).unwrap_err().to_string();
        assert!(e.contains("no collection 'Tau'"), "{e}");
        let e = Selection::new(None, &[("Jet".into(), "Muon_pt > 1".into())]).unwrap().apply(&b).unwrap_err().to_string();
        assert!(e.contains("must give a boolean per element of 'Jet'"), "{e}");
        assert!(Selection::parse_filter("Jet").unwrap_err().to_string().contains("COLLECTION:EXPR"));
        assert_eq!(Selection::parse_filter("Jet: Jet_pt > 1").unwrap(), ("Jet".into(), " Jet_pt > 1".into()));
    }

    #[test]
    fn fields_named() {
        let s = Selection::new(Some("nJet > 1 && any(Muon.pt > 3)"), &[("Jet".into(), "Jet_pt > nJet".into())]).unwrap();
        assert_eq!(s.fields_named(), vec!["Jet_pt", "nJet", "Muon"]);
    }
}

//! `info` and `dump` over a dataset: several files as one chain, with friends joined
//! (`--friend FILE[:NTUPLE] --on FIELDS [--how left|inner]`), as `rntuple::dataset::Join` reads
//! them. One file without friends keeps the per-file commands (`info::info`, `dump::dump`).

use super::dump::{in_schema_order, print_entries};
use super::select::{field_list, parse_range};
use super::{human, Res};
use rntuple::dataset::{Chain, How, Join};

/// The options that make a dataset of a command's inputs.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct DatasetArgs {
    /// A friend RNTuple whose fields join the inputs' as FRIEND.field, named after its RNTuple (a
    /// glob makes a chain); repeat for several.
    #[arg(long = "friend", value_name = "FILE[:NTUPLE]")]
    pub(crate) friends: Vec<String>,
    /// The index fields matching friend entries to primary entries, e.g. run,event (without it,
    /// friends are aligned entry by entry).
    #[arg(long, value_name = "FIELD,FIELD", requires = "friends")]
    pub(crate) on: Option<String>,
    /// What becomes of an entry no friend entry matches: kept with the friend's fields null
    /// (left, as ROOT's join) or dropped (inner).
    #[arg(long, default_value = "left", requires = "friends")]
    pub(crate) how: String,
}

impl DatasetArgs {
    /// Whether `inputs` with these options are more than one file read alone.
    pub(crate) fn is_dataset(&self, inputs: &[String]) -> bool {
        let pattern = |i: &String| i.contains(['*', '?', '[']) && !std::path::Path::new(i).exists();
        inputs.len() > 1 || !self.friends.is_empty() || inputs.iter().any(pattern)
    }

    /// The dataset of `inputs` (RNTuple `ntuple` unless an input names its own) with these
    /// options' friends: a chain of the inputs, joined with the friends.
    pub(crate) fn open(&self, inputs: &[String], ntuple: Option<&str>) -> Result<Join, Box<dyn std::error::Error>> {
        let on: Vec<&str> = self.on.as_deref().map(field_list).unwrap_or_default();
        let how: How = self.how.parse()?;
        Ok(Join::open(inputs, ntuple, &self.friends, &on, how)?)
    }
}

/// `rntuple info` of a dataset: its inputs, friends, entries and fields.
pub(crate) fn info(inputs: &[String], ntuple: Option<&str>, d: &DatasetArgs, json: bool) -> Res {
    let join = d.open(inputs, ntuple)?;
    let chain_json = |c: &Chain| {
        let files: Vec<_> =
            c.inputs().into_iter().map(|(file, ntuple, entries)| serde_json::json!({"file": file, "ntuple": ntuple, "entries": entries})).collect();
        serde_json::json!({"ntuple": c.name(), "entries": c.num_entries(), "clusters": clusters(c), "inputs": files})
    };
    let fields: Vec<_> = join.fields().into_iter().map(|(name, ty)| serde_json::json!({"name": name, "type": ty})).collect();
    if json {
        let friends: Vec<_> = join.friends().into_iter().map(|(name, c)| serde_json::json!({"name": name, "chain": chain_json(c)})).collect();
        let how = match join.how() {
            How::Left => "left",
            How::Inner => "inner",
        };
        let out = serde_json::json!({
            "primary": chain_json(join.primary()), "friends": friends, "on": join.on(), "how": how,
            "index_bytes": join.index_bytes(), "entries": join.num_entries(), "fields": fields,
        });
        println!("{out}");
        return Ok(());
    }
    let p = join.primary();
    println!("dataset: RNTuple '{}' of {} file(s), {} entries, {} clusters", p.name(), p.inputs().len(), p.num_entries(), clusters(p));
    print_inputs(p);
    for (name, c) in join.friends() {
        let by = if join.on().is_empty() { "entry by entry".to_string() } else { format!("on {}", join.on().join(", ")) };
        let how = if join.how() == How::Inner { "inner" } else { "left" };
        println!("friend '{name}': {} file(s), {} entries, joined {by} ({how} join)", c.inputs().len(), c.num_entries());
        print_inputs(c);
    }
    if !join.on().is_empty() {
        println!("index: {}", human(join.index_bytes()));
    }
    println!("fields:");
    let width = join.fields().iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, ty) in join.fields() {
        println!("  {name:width$}  {ty}");
    }
    Ok(())
}

fn clusters(c: &Chain) -> usize {
    c.parts(0).len()
}

fn print_inputs(c: &Chain) {
    for (file, ntuple, entries) in c.inputs() {
        println!("  {file}:{ntuple}  {entries} entries");
    }
}

/// `rntuple dump` of a dataset: one object per entry, the primary's fields then each friend's as
/// `FRIEND.field` (null where the friend has no match), in the dataset's field order.
pub(crate) fn dump(inputs: &[String], ntuple: Option<&str>, fields: Option<&str>, entries: Option<&str>, d: &DatasetArgs, progress: bool) -> Res {
    let join = d.open(inputs, ntuple)?;
    let (start, stop) = parse_range(entries, join.num_entries())?;
    let order: Vec<String> = join.fields().into_iter().map(|(n, _)| n).collect();
    let names = in_schema_order(fields, &order);
    print_entries(start, stop, 1024, progress, |s, e| join.read_values(names.as_deref(), s, e))
}

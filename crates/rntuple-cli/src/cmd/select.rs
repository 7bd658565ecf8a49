//! Argument helpers shared by several commands: the `Select` arguments of `dump` and `skim`, the
//! `--fields` list and the `--entries` range.

use clap::Args;

/// Which RNTuple, fields and entries a command works on (`dump`, `skim`).
#[derive(Args)]
pub(crate) struct Select {
    /// The RNTuple (may be omitted when the file holds exactly one).
    #[arg(long)]
    pub(crate) ntuple: Option<String>,
    /// Comma-separated top-level fields (default: all).
    #[arg(long)]
    pub(crate) fields: Option<String>,
    /// Entry range START:STOP (either side may be omitted).
    #[arg(long)]
    pub(crate) entries: Option<String>,
}

/// The names of a comma-separated `--fields` list (empty items dropped).
pub(crate) fn field_list(s: &str) -> Vec<&str> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).collect()
}

/// The `--entries START:STOP` range of an RNTuple of `n` entries (all of them without the
/// option), as the skim reads it (`rntuple::ops::skim::EntryRange::Text`). Either side may be
/// omitted; a range reaching outside `0..=n` or reversed is an error naming the range and the entry
/// count (not silently clamped or emptied).
pub(crate) fn parse_range(s: Option<&str>, n: u64) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let Some(s) = s else { return Ok((0, n)) };
    rntuple::ops::skim::EntryRange::Text(s.into()).resolve(n).map_err(|e| match e {
        // The message alone, as the command's own argument errors are printed.
        rntuple::Error::Invalid(m) => m.into(),
        e => e.into(),
    })
}

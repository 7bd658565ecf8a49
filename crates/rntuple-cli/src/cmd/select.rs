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

pub(crate) fn parse_range(s: Option<&str>, n: u64) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let Some(s) = s else { return Ok((0, n)) };
    let (a, b) = s.split_once(':').ok_or_else(|| format!("--entries '{s}': expected START:STOP"))?;
    let a: u64 = if a.is_empty() { 0 } else { a.parse().map_err(|_| format!("--entries: bad start '{a}'"))? };
    let b: u64 = if b.is_empty() { n } else { b.parse().map_err(|_| format!("--entries: bad stop '{b}'"))? };
    Ok((a.min(n), b.min(n).max(a.min(n))))
}

//! Value parsers of command-line arguments that both the command line's definitions (`main.rs`)
//! and the commands' own argument structs (`cmd/`) use: `--compression`.

use rntuple::write::Compression;

/// `--compression`: ROOT's settings integer (`algorithm * 100 + level`), checked once here.
pub(crate) fn parse_compression(s: &str) -> Result<Compression, String> {
    let n: u32 = s.parse().map_err(|_| format!("'{s}' is not a compression setting (algorithm * 100 + level, e.g. 505)"))?;
    Compression::from_settings(n).map_err(|e| e.to_string())
}

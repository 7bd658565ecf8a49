//! Loading recorded I/O logs: one per process, merged by time (the system-wide monotonic clock
//! the recorder stamps), each process's own order kept.

use rntuple::storage::local::io_record::{parse_log, Event};
use std::path::Path;

/// The events of every log in `dir` (`*.log`), or of the log file `path`, merged by time.
pub fn load(path: &Path) -> Result<Vec<Event>, String> {
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| format!("listing {}: {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut all: Vec<(u64, usize, usize, Event)> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let bytes = std::fs::read(f).map_err(|e| format!("reading {}: {e}", f.display()))?;
        let events = parse_log(&bytes).map_err(|e| format!("{}: {e}", f.display()))?;
        all.extend(events.into_iter().enumerate().map(|(k, e)| (e.time_ns, i, k, e)));
    }
    // A process's entries are in the order their operations took effect; across processes,
    // the times order them (a stable sort keeps each log's order among equal times).
    all.sort_by_key(|(t, i, k, _)| (*t, *i, *k));
    Ok(all.into_iter().map(|(_, _, _, e)| e).collect())
}

//! The kernel's read-ahead window for a local file: how many bytes Linux reads in one go when a
//! `pread` misses the page cache in a file read in order (the `read_ahead_kb` of the block
//! device holding it). A read that wants most bytes of its clusters is served best by that
//! read-ahead when the window is large (see `read::pool::page_source`).

use std::fs::File;

/// The read-ahead window in bytes of the block device holding `file`, from sysfs
/// (`/sys/dev/block/MAJ:MIN/queue/read_ahead_kb`, the whole disk's for a partition, or the
/// backing device's `/sys/class/bdi/MAJ:MIN/read_ahead_kb`); `None` where sysfs does not say
/// (not Linux, a network or in-memory file system without a device of its own).
pub(crate) fn window(file: &File) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let dev = file.metadata().ok()?.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        let candidates = [
            format!("/sys/dev/block/{major}:{minor}/queue/read_ahead_kb"),
            format!("/sys/dev/block/{major}:{minor}/../queue/read_ahead_kb"),
            format!("/sys/class/bdi/{major}:{minor}/read_ahead_kb"),
        ];
        candidates.iter().find_map(|p| parse_kb(&std::fs::read_to_string(p).ok()?))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// The bytes of a sysfs `read_ahead_kb` value (a decimal number of KiB and a newline).
fn parse_kb(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok()?.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysfs_values() {
        assert_eq!(parse_kb("8192\n"), Some(8 << 20));
        assert_eq!(parse_kb("128"), Some(128 << 10));
        assert_eq!(parse_kb("0\n"), Some(0));
        assert_eq!(parse_kb("lots\n"), None);
        assert_eq!(parse_kb(""), None);
        assert_eq!(parse_kb("18446744073709551615"), None);
    }
}

//! Where a selecting skim's entries went, for its inputs' attribute sets: each thread logs the
//! parts it skimmed (input, entry range, how many entries it kept before each attribute-range
//! boundary, where they start among the thread's own entries) and, when its fill context ends,
//! where its clusters went in the output.
//! An attribute entry's input range then becomes the output ranges of its kept entries: one range
//! when they stayed together, several (with the same values) when the parts holding them went
//! to different places. A range none of whose entries was kept stays as an empty range at the
//! place they would have been, so that bookkeeping such as luminosity blocks without a selected
//! event survives the cut.

use crate::error::Result;
use crate::read::reader::Reader;

/// One part of an input skimmed by a thread. What it keeps is held as counts at the input's
/// attribute-range boundaries only (not a mask per entry): memory follows the attribute sets,
/// not the entries skimmed.
pub(crate) struct PartLog {
    /// The input's index.
    pub input: usize,
    /// The part's entries `[a, b)` of the input.
    pub a: u64,
    pub b: u64,
    /// The first of its kept entries among the thread's entries.
    pub local_first: u64,
    /// Entries kept.
    kept: u64,
    /// `(boundary, entries kept before it)` for the boundaries inside `(a, b)`, in order; empty
    /// when every entry was kept.
    cuts: Vec<(u64, u64)>,
}

impl PartLog {
    /// The part `[a, b)` of `input`, starting at `local_first` among its thread's entries, whose
    /// entries `mask` keeps (all when `None`), with counts at the `boundaries` (sorted) inside it.
    pub fn new(input: usize, a: u64, b: u64, local_first: u64, mask: Option<&[bool]>, boundaries: &[u64]) -> PartLog {
        let Some(mask) = mask else { return PartLog { input, a, b, local_first, kept: b - a, cuts: Vec::new() } };
        let inside = &boundaries[boundaries.partition_point(|&x| x <= a)..boundaries.partition_point(|&x| x < b)];
        let mut cuts = Vec::with_capacity(inside.len());
        let (mut at, mut kept) = (a, 0u64);
        for &e in inside {
            let from = (at - a) as usize;
            let to = ((e - a) as usize).min(mask.len());
            kept += mask.get(from..to).map_or(0, |m| m.iter().filter(|&&k| k).count() as u64);
            cuts.push((e, kept));
            at = e;
        }
        let rest = mask.get((at - a) as usize..).map_or(0, |m| m.iter().filter(|&&k| k).count() as u64);
        PartLog { input, a, b, local_first, kept: kept + rest, cuts }
    }

    /// Kept entries of the part before the input entry `e` (`a`, `b` or a boundary; a point in
    /// between counts as the boundary below it).
    fn kept_before(&self, e: u64) -> u64 {
        if e <= self.a {
            return 0;
        }
        if e >= self.b {
            return self.kept;
        }
        if self.cuts.is_empty() {
            return (e - self.a).min(self.kept);
        }
        match self.cuts.partition_point(|&(x, _)| x <= e).checked_sub(1) {
            Some(k) => self.cuts[k].1,
            None => 0,
        }
    }
}

/// The entries where the attribute ranges of `r` start and end, sorted, each once.
pub(crate) fn boundaries(r: &Reader) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for link in r.attribute_sets() {
        for e in r.open_attribute_set(link)?.entries()? {
            out.push(e.range_start);
            out.push(e.range_start.saturating_add(e.range_len));
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// What one thread did: its parts in order and its clusters' places ((first entry in the output,
/// entries), in the thread's order; see `ContextMetrics::placed`).
pub(crate) struct ThreadLog {
    pub parts: Vec<PartLog>,
    pub placed: Vec<(u64, u64)>,
}

/// The logs of every thread, indexed for lookups by input entry.
pub(crate) struct Placements {
    threads: Vec<ThreadLog>,
    /// Per input, its parts as (a, b, thread, part index), sorted by `a`.
    by_input: Vec<Vec<(u64, u64, usize, usize)>>,
    /// Per thread, the thread-local first entry of each placed cluster.
    local_starts: Vec<Vec<u64>>,
    /// Entries of the output (the end of its last cluster).
    total: u64,
}

impl Placements {
    pub fn new(threads: Vec<ThreadLog>, inputs: usize) -> Placements {
        let mut by_input = vec![Vec::new(); inputs];
        let mut local_starts = Vec::with_capacity(threads.len());
        let mut total = 0;
        for (t, log) in threads.iter().enumerate() {
            for (p, part) in log.parts.iter().enumerate() {
                if let Some(v) = by_input.get_mut(part.input) {
                    v.push((part.a, part.b, t, p));
                }
            }
            let mut at = 0;
            local_starts.push(
                log.placed
                    .iter()
                    .map(|&(_, n)| {
                        let s = at;
                        at += n;
                        s
                    })
                    .collect(),
            );
            total = log.placed.iter().map(|&(g, n)| g + n).fold(total, u64::max);
        }
        for v in &mut by_input {
            v.sort_unstable();
        }
        Placements { threads, by_input, local_starts, total }
    }

    /// The output ranges `(start, len)` of the kept entries of `input`'s range `[start, start +
    /// len)`, adjacent ranges joined; an empty range at its place when nothing of it was kept.
    pub fn place(&self, input: usize, start: u64, len: u64) -> Vec<(u64, u64)> {
        let end = start.saturating_add(len);
        let Some(parts) = self.by_input.get(input) else { return Vec::new() };
        // An empty range may sit at a part's end (the input's last entry, for one).
        let from = parts.partition_point(|&(_, b, _, _)| if len == 0 { b < start } else { b <= start });
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        let mut point: Option<u64> = None;
        for &(a, b, t, p) in &parts[from..] {
            if a > end || (a == end && len > 0) {
                break;
            }
            let part = &self.threads[t].parts[p];
            let x = part.local_first + part.kept_before(start.max(a));
            let y = part.local_first + part.kept_before(end.min(b));
            if y > x {
                pieces.extend(self.global(t, x, y));
            } else if point.is_none() {
                point = Some(self.global_point(t, x));
            }
        }
        if pieces.is_empty() {
            return vec![(point.unwrap_or(self.total), 0)];
        }
        pieces.sort_unstable();
        let mut joined: Vec<(u64, u64)> = Vec::with_capacity(pieces.len());
        for (s, n) in pieces {
            match joined.last_mut() {
                Some(last) if last.0 + last.1 == s => last.1 += n,
                _ => joined.push((s, n)),
            }
        }
        joined
    }

    /// The output ranges of the thread `t`'s entries `[x, y)`.
    fn global(&self, t: usize, x: u64, y: u64) -> Vec<(u64, u64)> {
        let starts = &self.local_starts[t];
        let placed = &self.threads[t].placed;
        let mut out = Vec::new();
        let mut k = starts.partition_point(|&s| s <= x).saturating_sub(1);
        while k < placed.len() && starts[k] < y {
            let (g, n) = placed[k];
            let (lo, hi) = (x.max(starts[k]), y.min(starts[k] + n));
            if hi > lo {
                out.push((g + (lo - starts[k]), hi - lo));
            }
            k += 1;
        }
        out
    }

    /// The output entry where the thread `t`'s entry `x` is (or would be: after its last
    /// entry, the end of its last cluster; a thread that wrote nothing, the output's end).
    fn global_point(&self, t: usize, x: u64) -> u64 {
        let starts = &self.local_starts[t];
        let placed = &self.threads[t].placed;
        let k = starts.partition_point(|&s| s <= x);
        match k.checked_sub(1).map(|k| (starts[k], placed[k])) {
            Some((s, (g, n))) if x - s <= n => g + (x - s),
            _ => self.total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(input: usize, a: u64, b: u64, local_first: u64, kept: Option<Vec<bool>>) -> PartLog {
        let boundaries: Vec<u64> = (0..=20).collect(); // every entry a boundary: exact counts
        PartLog::new(input, a, b, local_first, kept.as_deref(), &boundaries)
    }

    #[test]
    fn counts_are_kept_at_boundaries_only() {
        // Entries 10..20, every other kept; boundaries at 12 and 17 (and others outside).
        let mask: Vec<bool> = (10..20).map(|e| e % 2 == 0).collect();
        let p = PartLog::new(0, 10, 20, 0, Some(&mask), &[0, 12, 17, 25]);
        assert_eq!(p.cuts, [(12, 1), (17, 4)]); // 10 | 12, 14, 16
        assert_eq!((p.kept_before(10), p.kept_before(12), p.kept_before(17), p.kept_before(20)), (0, 1, 4, 5));
        let all = PartLog::new(0, 10, 20, 0, None, &[12]);
        assert_eq!((all.kept_before(12), all.cuts.len()), (2, 0));
    }

    #[test]
    fn one_thread_in_order_joins_parts() {
        // Input entries 0..10 in two parts, entries 3 and 7 cut; one cluster of 8 at output 0.
        let mask = |cut: u64, a: u64| Some((a..a + 5).map(|e| e != cut).collect());
        let log = ThreadLog { parts: vec![part(0, 0, 5, 0, mask(3, 0)), part(0, 5, 10, 4, mask(7, 5))], placed: vec![(0, 8)] };
        let p = Placements::new(vec![log], 1);
        assert_eq!(p.place(0, 0, 10), [(0, 8)]);
        assert_eq!(p.place(0, 2, 6), [(2, 4)]); // entries 2, 4, 5, 6 (3 and 7 cut)
        assert_eq!(p.place(0, 3, 1), [(3, 0)]); // only entry 3: cut, kept as an empty range
        assert_eq!(p.place(0, 10, 0), [(8, 0)]); // an empty range at the end
    }

    #[test]
    fn parts_on_two_threads_split_a_range() {
        // Thread 0 skims part 0..4 and commits it second (at 4); thread 1 skims 4..8, first (at 0).
        let t0 = ThreadLog { parts: vec![part(0, 0, 4, 0, None)], placed: vec![(4, 4)] };
        let t1 = ThreadLog { parts: vec![part(0, 4, 8, 0, None)], placed: vec![(0, 4)] };
        let p = Placements::new(vec![t0, t1], 1);
        assert_eq!(p.place(0, 2, 4), [(0, 2), (6, 2)]); // 4..6 went to 0..2, 2..4 to 6..8
        assert_eq!(p.place(0, 0, 8), [(0, 8)]); // joined again: the output holds all
    }

    #[test]
    fn a_part_split_across_clusters_of_one_thread() {
        // One part of 6 entries whose output was cut into two clusters with another between.
        let t0 = ThreadLog { parts: vec![part(1, 0, 6, 0, None)], placed: vec![(0, 3), (10, 3)] };
        let p = Placements::new(vec![t0], 2);
        assert_eq!(p.place(1, 1, 4), [(1, 2), (10, 2)]);
        assert_eq!(p.place(0, 0, 5), [(13, 0)]); // input 0 has no parts: an empty range at the end
        assert_eq!(p.place(1, 6, 0), [(13, 0)]); // the input's end: after its last entry
    }
}

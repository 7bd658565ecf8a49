//! XRootD byte sources (`root://`, `roots://`, `xroot://`, `xroots://`): the grid's protocol,
//! spoken by XRootD's own client library (XrdCl, through the `rntuple-xrootd` crate) rather than a
//! hand-written one: XrdCl follows the redirections of EOS, dCache and federations, authenticates
//! (WLCG tokens found by the usual discovery, X.509 proxies, Kerberos) and retries.
//!
//! The reader's coalesced page ranges go out as vector reads (`kXR_readv`): each range cut into
//! chunks of at most 2 MiB (XRootD's chunk limit), chunks packed into requests of at most 1,024
//! chunks and [`REQUEST_BYTES`], up to [`IN_FLIGHT`] requests at once (XrdCl multiplexes them on one
//! connection). A cluster's pages thus take one request, or two for a cluster beyond 64 MiB. The
//! first and last bytes of the file (header, anchor, footer, page lists) are read at opening in
//! one request.
//!
//! Timeouts and retries are [`RemoteOptions::current`] at opening, handed to XrdCl (its connection
//! window, connection attempts and stream timeout); a request must complete within both timeouts
//! plus one second per MiB, its retries on a new connection included (`rntuple_xrootd::File`);
//! `XRD_*` variables the user set win.

use super::credentials;
use super::edges::Edges;
use super::remote_options::RemoteOptions;
use crate::storage::local::source::{RangeSink, ReadAt, SourceCounters};
use crate::error::{Error, Result};
use rntuple_xrootd::{File, Patience, XrdError, MAX_CHUNK, MAX_CHUNKS};
use std::ops::Range;
use std::time::Duration;

/// Most bytes asked for in one vector read.
pub const REQUEST_BYTES: u64 = 64 << 20;
/// Vector reads in flight at once.
pub const IN_FLIGHT: usize = 4;

/// A file on an XRootD server.
pub struct XrootdSource {
    file: File,
    url: String,
    len: u64,
    edges: Edges,
    counters: SourceCounters,
}

/// The error of a failed XRootD operation: the URL, what was being done, XrdCl's status and, for
/// a refusal, which credential was tried.
fn xrd_error(url: &str, what: &str, e: &XrdError) -> Error {
    let detail = if e.is_not_authorized() { format!("{e} (tried {})", credentials::tried()) } else { e.to_string() };
    Error::io(format!("{what} {url}"), std::io::Error::other(detail))
}

/// Whole seconds (rounded up, at least 1, at most `u16::MAX`): XrdCl's settings are integers.
fn whole_seconds(d: Duration) -> u16 {
    let s = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    u16::try_from(s).unwrap_or(u16::MAX).max(1)
}

/// XrdCl's patience from the remote options.
pub(crate) fn patience(o: &RemoteOptions) -> Patience {
    Patience { connect_s: whole_seconds(o.connect_timeout), idle_s: whole_seconds(o.idle_timeout), retries: u16::try_from(o.retries).unwrap_or(u16::MAX) }
}

impl XrootdSource {
    /// Opens `url` (`root://host[:port]//path`), learns its size and reads its first and last
    /// bytes.
    pub fn open(url: &str) -> Result<Self> {
        let file = File::open(url, patience(&RemoteOptions::current()?)).map_err(|e| {
            if e.is_not_found() {
                Error::NotFound(format!("{url}: no such file on the XRootD server ({e})"))
            } else {
                xrd_error(url, "opening", &e)
            }
        })?;
        let len = file.size();
        let mut src = XrootdSource { file, url: url.to_string(), len, edges: Edges::default(), counters: SourceCounters::default() };
        src.edges = Edges::load(&src)?;
        Ok(src)
    }

    /// The bytes `[offset, offset + len)` when the head or tail read at opening holds them.
    fn cached(&self, offset: u64, len: u64) -> Option<&[u8]> {
        self.edges.get(offset, len)
    }
}

/// Chunks of one vector read: (range index, offset in the file, offset in the range's buffer,
/// length).
type Request = Vec<(usize, u64, usize, usize)>;

/// The ranges cut into chunks of at most [`MAX_CHUNK`] bytes, packed in order into requests of at
/// most [`MAX_CHUNKS`] chunks and [`REQUEST_BYTES`] bytes.
fn plan_requests(ranges: &[Range<u64>]) -> Vec<Request> {
    let mut out: Vec<Request> = Vec::new();
    let mut cur: Request = Vec::new();
    let mut bytes = 0u64;
    for (i, r) in ranges.iter().enumerate() {
        let mut at = r.start;
        while at < r.end {
            let n = (r.end - at).min(MAX_CHUNK as u64);
            if !cur.is_empty() && (cur.len() == MAX_CHUNKS || bytes + n > REQUEST_BYTES) {
                out.push(std::mem::take(&mut cur));
                bytes = 0;
            }
            cur.push((i, at, (at - r.start) as usize, n as usize));
            bytes += n;
            at += n;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

impl ReadAt for XrootdSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn view(&self, offset: u64, len: u64) -> Option<&[u8]> {
        self.cached(offset, len)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if let Some(b) = self.cached(offset, buf.len() as u64) {
            buf.copy_from_slice(b);
            return Ok(());
        }
        let end = offset.checked_add(buf.len() as u64).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(Error::corrupt(format!("{} bytes at offset {offset} lie beyond the end of {} ({} bytes)", buf.len(), self.url, self.len), offset));
        }
        self.file.read_exact_at(offset, buf).map_err(|e| xrd_error(&self.url, &format!("reading bytes {offset}..{} of", offset + buf.len() as u64), &e))?;
        self.counters.add(buf.len() as u64);
        Ok(())
    }

    fn read_ranges(&self, ranges: &[Range<u64>], sink: &mut RangeSink<'_>) -> Result<()> {
        for r in ranges {
            if r.end < r.start || r.end > self.len {
                return Err(Error::corrupt(format!("range {}..{} outside {} ({} bytes)", r.start, r.end, self.url, self.len), r.start));
            }
        }
        // Every range's buffer (sizes checked against the file's length above), filled chunk by
        // chunk by the requests, which run IN_FLIGHT at a time on scoped threads.
        let mut bufs: Vec<Vec<u8>> = ranges.iter().map(|r| vec![0u8; (r.end - r.start) as usize]).collect();
        let requests = plan_requests(ranges);
        {
            // Each request's chunks as disjoint `&mut` slices of the buffers.
            let mut rest: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.as_mut_slice()).collect();
            let mut work: Vec<Vec<(u64, &mut [u8])>> = Vec::with_capacity(requests.len());
            for req in &requests {
                let mut chunks = Vec::with_capacity(req.len());
                for &(i, offset, _, n) in req {
                    let (head, tail) = std::mem::take(&mut rest[i]).split_at_mut(n);
                    rest[i] = tail;
                    chunks.push((offset, head));
                }
                work.push(chunks);
            }
            let errors: Vec<Error> = std::thread::scope(|s| {
                let mut pending = work.into_iter().enumerate();
                let mut failures = Vec::new();
                loop {
                    let wave: Vec<_> = pending.by_ref().take(IN_FLIGHT).collect();
                    if wave.is_empty() {
                        break;
                    }
                    let handles: Vec<_> = wave
                        .into_iter()
                        .map(|(k, mut chunks)| {
                            let file = &self.file;
                            s.spawn(move || file.read_chunks(&mut chunks).map_err(|e| (k, chunks.len(), e)))
                        })
                        .collect();
                    for h in handles {
                        match h.join() {
                            Ok(Ok(())) => {}
                            Ok(Err((k, n, e))) => failures.push(xrd_error(&self.url, &format!("vector read {k} ({n} chunks) of"), &e)),
                            Err(_) => failures.push(Error::internal("an XRootD read thread panicked")),
                        }
                    }
                    if !failures.is_empty() {
                        break;
                    }
                }
                failures
            });
            if let Some(e) = errors.into_iter().next() {
                return Err(e);
            }
        }
        for req in &requests {
            self.counters.add(req.iter().map(|c| c.3 as u64).sum());
        }
        for (i, b) in bufs.into_iter().enumerate() {
            sink(i, b)?;
        }
        Ok(())
    }

    fn is_remote(&self) -> bool {
        true
    }

    fn counters(&self) -> Option<&SourceCounters> {
        Some(&self.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_options_become_whole_seconds_for_xrdcl() {
        let o = RemoteOptions { connect_timeout: Duration::from_millis(1500), idle_timeout: Duration::from_millis(200), retries: 2 };
        assert_eq!(patience(&o), Patience { connect_s: 2, idle_s: 1, retries: 2 });
        let o = RemoteOptions { connect_timeout: Duration::from_secs(86_400), idle_timeout: Duration::from_secs(60), retries: 3 };
        assert_eq!(patience(&o), Patience { connect_s: u16::MAX, idle_s: 60, retries: 3 });
    }

    #[test]
    fn ranges_become_chunks_within_xrootd_limits_in_few_requests() {
        let big = MAX_CHUNK as u64 * 3 + 5;
        let ranges = [0..10, 100..100 + big, 1 << 40..(1 << 40) + 1];
        let reqs = plan_requests(&ranges);
        assert_eq!(reqs.len(), 1);
        let chunks = &reqs[0];
        assert_eq!(chunks.len(), 1 + 4 + 1);
        assert!(chunks.iter().all(|c| c.3 <= MAX_CHUNK as usize));
        // The chunks of range 1 tile it exactly.
        let r1: Vec<_> = chunks.iter().filter(|c| c.0 == 1).collect();
        assert_eq!(r1.iter().map(|c| c.3 as u64).sum::<u64>(), big);
        assert_eq!((r1[0].1, r1[0].2, r1[3].1, r1[3].2), (100, 0, 100 + 3 * MAX_CHUNK as u64, 3 * MAX_CHUNK as usize));
        // Many small ranges: at most MAX_CHUNKS chunks per request.
        let many: Vec<Range<u64>> = (0..2500u64).map(|i| i * 10..i * 10 + 5).collect();
        let reqs = plan_requests(&many);
        assert_eq!(reqs.iter().map(Vec::len).collect::<Vec<_>>(), [1024, 1024, 452]);
        // Bytes: a request stops at REQUEST_BYTES (a range may span two requests).
        let large: Vec<Range<u64>> = (0..3u64).map(|i| i * REQUEST_BYTES..i * REQUEST_BYTES + REQUEST_BYTES / 2 + 1).collect();
        let reqs = plan_requests(&large);
        assert_eq!(reqs.len(), 2);
        assert!(reqs.iter().all(|r| r.iter().map(|c| c.3 as u64).sum::<u64>() <= REQUEST_BYTES));
        assert_eq!(reqs.iter().flatten().map(|c| c.3 as u64).sum::<u64>(), 3 * (REQUEST_BYTES / 2 + 1));
    }
}

//! The offset service over TCP: the transport of the distributed writer for engines that are not
//! MPI (Dask workers, Spark executors). One process (the Dask client, the Spark driver) runs a
//! [`Coordinator`] that hands out byte ranges of the shared file; every rank, in any process on
//! any machine that sees the file, asks it through a [`CoordinatorClient`] (an
//! [`OffsetService`]). Ranges are the only thing that crosses the network while writing: the
//! compressed clusters go straight into the file from the rank, and the rank's list of placed
//! clusters goes back to the committing process by whatever carries the engine's task results.
//!
//! The protocol, every integer little-endian: the client sends the 8 bytes `RNTOFS01` and the
//! 16-byte token the coordinator was created with; the coordinator answers one byte (0: accepted;
//! anything else and it closes the connection). Then any number of requests: 8 bytes, a length
//! (a multiple of the alignment, at most [`MAX_REQUEST`]); each answered by 1 status byte (0: the
//! range starts at the offset that follows; 1: refused, the coordinator is closed) and 8 bytes of
//! offset. Ranges are handed out in the order requests arrive; a connection that sends anything
//! else is dropped.
//!
//! ```
//! use rntuple::write::distributed::{Coordinator, CoordinatorClient, OffsetService};
//! let c = Coordinator::start("127.0.0.1:0", 4096, 4096)?;
//! let client = CoordinatorClient::connect(&c.address(), &c.token_hex())?;
//! assert_eq!(client.reserve(8192)?, 4096);
//! assert_eq!(client.reserve(4096)?, 12288);
//! assert_eq!((c.end(), c.reserved_bytes(), c.requests()), (16384, 12288, 2));
//! c.close();
//! assert!(client.reserve(4096).is_err()); // refused once closed
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::write::distributed::rank::OffsetService;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MAGIC: &[u8; 8] = b"RNTOFS01";
/// The largest range one request may ask for (1 TiB): a length beyond it is a broken client.
pub const MAX_REQUEST: u64 = 1 << 40;
/// How long a client waits to connect and for an answer before it gives up.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What the coordinator has handed out.
#[derive(Debug, Default)]
struct Counter {
    next: u64,
    reserved: u64,
    requests: u64,
}

struct State {
    counter: Mutex<Counter>,
    closed: AtomicBool,
    token: [u8; 16],
    align: u64,
}

impl State {
    fn reserve(&self, len: u64) -> Result<u64> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::Invalid("the coordinator of the distributed write is closed: the file was committed or given up".into()));
        }
        if len == 0 || len > MAX_REQUEST || !len.is_multiple_of(self.align) {
            return Err(Error::Invalid(format!("a request for {len} bytes: must be a positive multiple of {} of at most {MAX_REQUEST}", self.align)));
        }
        let mut c = self.counter.lock().map_err(|_| Error::internal("the coordinator's counter is poisoned"))?;
        let at = c.next;
        c.next = at.checked_add(len).ok_or_else(|| Error::Invalid(format!("offset {at} + {len} overflows")))?;
        c.reserved += len;
        c.requests += 1;
        Ok(at)
    }

    /// Serves one connection until the client hangs up or breaks the protocol.
    fn serve(&self, mut s: TcpStream) {
        let _ = s.set_read_timeout(None);
        let mut hello = [0u8; 24];
        if s.read_exact(&mut hello).is_err() || &hello[..8] != MAGIC || hello[8..] != self.token {
            let _ = s.write_all(&[1]);
            return;
        }
        if s.write_all(&[0]).is_err() {
            return;
        }
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).is_ok() {
            let mut answer = [0u8; 9];
            match self.reserve(u64::from_le_bytes(req)) {
                Ok(at) => answer[1..].copy_from_slice(&at.to_le_bytes()),
                Err(_) => answer[0] = 1,
            }
            if s.write_all(&answer).is_err() || answer[0] != 0 {
                return;
            }
        }
    }
}

/// The process that hands out the byte ranges of a distributed write (see the module
/// documentation): a listening socket and a thread per connection. Dropping it (or
/// [`Coordinator::close`]) refuses every later request.
pub struct Coordinator {
    state: Arc<State>,
    addr: SocketAddr,
}

impl Coordinator {
    /// Listens on `bind` (`"0.0.0.0:0"`: every interface, a free port) and hands out ranges
    /// aligned to `align` (a power of two) from offset `first` on.
    pub fn start(bind: &str, first: u64, align: u64) -> Result<Coordinator> {
        if !align.is_power_of_two() {
            return Err(Error::Invalid(format!("alignment {align}: must be a power of two")));
        }
        let listener = TcpListener::bind(bind).map_err(|e| Error::io(format!("listening on {bind} for the ranks of a distributed write"), e))?;
        let addr = listener.local_addr().map_err(|e| Error::io("the coordinator's address", e))?;
        let state = Arc::new(State {
            counter: Mutex::new(Counter { next: first.next_multiple_of(align), ..Default::default() }),
            closed: AtomicBool::new(false),
            token: random_token(),
            align,
        });
        let st = state.clone();
        std::thread::Builder::new()
            .name("rntuple-coordinator".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if st.closed.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(s) = conn {
                        let st = st.clone();
                        let _ = std::thread::Builder::new().name("rntuple-coordinator-conn".into()).spawn(move || st.serve(s));
                    }
                }
            })
            .map_err(|e| Error::io("starting the coordinator's thread", e))?;
        Ok(Coordinator { state, addr })
    }

    /// `host:port` the coordinator listens on (the host as bound: with `0.0.0.0`, give the ranks
    /// the machine's routable address with this port instead).
    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The token a client must present, as 32 hex digits.
    pub fn token_hex(&self) -> String {
        self.state.token.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The end of the furthest range handed out: no rank writes beyond it.
    pub fn end(&self) -> u64 {
        self.state.counter.lock().map(|c| c.next).unwrap_or(u64::MAX)
    }

    /// Bytes handed out in all (ranges of writers that died included).
    pub fn reserved_bytes(&self) -> u64 {
        self.state.counter.lock().map(|c| c.reserved).unwrap_or(0)
    }

    /// Requests answered.
    pub fn requests(&self) -> u64 {
        self.state.counter.lock().map(|c| c.requests).unwrap_or(0)
    }

    /// Refuses every later request (a writer still running then fails instead of writing
    /// where the committed file's records may lie).
    pub fn close(&self) {
        if !self.state.closed.swap(true, Ordering::SeqCst) {
            // Wakes the accepting thread, which sees the flag and ends.
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        }
    }
}

impl OffsetService for Coordinator {
    fn reserve(&self, len: u64) -> Result<u64> {
        self.state.reserve(len)
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        self.close();
    }
}

fn random_token() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut t = [0u8; 16];
    for (i, half) in t.chunks_mut(8).enumerate() {
        // RandomState is seeded from the OS's randomness once per process and per instance.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
        h.write_u32(std::process::id());
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    t
}

fn parse_token(hex: &str) -> Result<[u8; 16]> {
    let bad = || Error::Invalid(format!("coordinator token {hex:?}: must be 32 hex digits"));
    if hex.len() != 32 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut t = [0u8; 16];
    for (i, b) in t.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(t)
}

/// A rank's connection to the [`Coordinator`]: an [`OffsetService`] (one connection, requests
/// answered in turn).
pub struct CoordinatorClient {
    stream: Mutex<TcpStream>,
    addr: String,
}

impl CoordinatorClient {
    /// Connects to the coordinator at `addr` (`host:port`) with its token (32 hex digits).
    pub fn connect(addr: &str, token_hex: &str) -> Result<CoordinatorClient> {
        let token = parse_token(token_hex)?;
        let target = addr
            .to_socket_addrs()
            .map_err(|e| Error::io(format!("resolving the coordinator's address {addr}"), e))?
            .next()
            .ok_or_else(|| Error::Invalid(format!("the coordinator's address {addr} resolves to nothing")))?;
        let mut s = TcpStream::connect_timeout(&target, TIMEOUT).map_err(|e| Error::io(format!("connecting to the coordinator at {addr}"), e))?;
        s.set_nodelay(true).map_err(|e| Error::io(format!("setting TCP_NODELAY to {addr}"), e))?;
        s.set_read_timeout(Some(TIMEOUT)).map_err(|e| Error::io(format!("setting a timeout to {addr}"), e))?;
        let mut hello = [0u8; 24];
        hello[..8].copy_from_slice(MAGIC);
        hello[8..].copy_from_slice(&token);
        s.write_all(&hello).map_err(|e| Error::io(format!("greeting the coordinator at {addr}"), e))?;
        let mut ok = [0u8; 1];
        s.read_exact(&mut ok).map_err(|e| Error::io(format!("the coordinator at {addr} did not answer the greeting"), e))?;
        if ok[0] != 0 {
            return Err(Error::Invalid(format!("the coordinator at {addr} refused the token (another write's coordinator?)")));
        }
        Ok(CoordinatorClient { stream: Mutex::new(s), addr: addr.into() })
    }
}

impl OffsetService for CoordinatorClient {
    fn reserve(&self, len: u64) -> Result<u64> {
        let mut s = self.stream.lock().map_err(|_| Error::internal("a coordinator connection is poisoned"))?;
        s.write_all(&len.to_le_bytes()).map_err(|e| Error::io(format!("asking the coordinator at {} for {len} bytes", self.addr), e))?;
        let mut answer = [0u8; 9];
        s.read_exact(&mut answer).map_err(|e| Error::io(format!("waiting for the coordinator at {} to answer a request for {len} bytes", self.addr), e))?;
        if answer[0] != 0 {
            let _ = s.shutdown(Shutdown::Both);
            return Err(Error::Invalid(format!(
                "the coordinator at {} refused a request for {len} bytes: the write was committed or given up (or the request was malformed)",
                self.addr
            )));
        }
        let mut at = [0u8; 8];
        at.copy_from_slice(&answer[1..]);
        Ok(u64::from_le_bytes(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_from_many_threads_are_disjoint() {
        let c = Coordinator::start("127.0.0.1:0", 100, 64).unwrap();
        let (addr, token) = (c.address(), c.token_hex());
        let got: Vec<(u64, u64)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|t| {
                    let (addr, token) = (addr.clone(), token.clone());
                    s.spawn(move || {
                        let cl = CoordinatorClient::connect(&addr, &token).unwrap();
                        (0..50).map(|i| (64 * (1 + (i + t) % 3), 0)).map(|(len, _)| (cl.reserve(len).unwrap(), len)).collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted[0].0, 128, "the first range starts at the aligned first offset");
        for w in sorted.windows(2) {
            assert_eq!(w[0].0 + w[0].1, w[1].0, "ranges tile the file without gaps or overlaps");
        }
        let total: u64 = got.iter().map(|g| g.1).sum();
        assert_eq!((c.reserved_bytes(), c.requests(), c.end()), (total, 200, 128 + total));
    }

    #[test]
    fn wrong_token_and_bad_requests_are_refused() {
        let c = Coordinator::start("127.0.0.1:0", 0, 4096).unwrap();
        let e = CoordinatorClient::connect(&c.address(), &"0".repeat(32)).err().unwrap();
        assert!(e.to_string().contains("refused the token"), "{e}");
        assert!(CoordinatorClient::connect(&c.address(), "xyz").err().unwrap().to_string().contains("32 hex digits"));
        let cl = CoordinatorClient::connect(&c.address(), &c.token_hex()).unwrap();
        // Not a multiple of the alignment: refused, and the connection is dropped.
        assert!(cl.reserve(100).is_err());
        assert!(cl.reserve(4096).is_err());
        let cl = CoordinatorClient::connect(&c.address(), &c.token_hex()).unwrap();
        assert!(cl.reserve(MAX_REQUEST + 4096).is_err());
        let cl = CoordinatorClient::connect(&c.address(), &c.token_hex()).unwrap();
        assert_eq!(cl.reserve(4096).unwrap(), 0);
        assert_eq!(c.requests(), 1);
    }

    #[test]
    fn garbage_greeting_is_dropped() {
        let c = Coordinator::start("127.0.0.1:0", 0, 8).unwrap();
        let mut s = TcpStream::connect(c.address()).unwrap();
        s.write_all(&[0xff; 24]).unwrap();
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        assert_eq!(b[0], 1);
        assert_eq!(c.requests(), 0);
    }
}

//! How patient remote reads (HTTP(S), S3, and XRootD through XrdCl: storage/remote/xrootd.rs) are: connect
//! and idle timeouts and retries. The one owner of their defaults; the environment (`RNTUPLE_CONNECT_TIMEOUT`, `RNTUPLE_IDLE_TIMEOUT`,
//! `RNTUPLE_RETRIES`) overrides the defaults, and a program (the CLI's global flags, Python's
//! `rntuple.set_remote_options`) overrides both for the whole process with
//! [`RemoteOptions::set_for_process`].
//!
//! ```
//! use rntuple::storage::RemoteOptions;
//! let o = RemoteOptions::current().unwrap_or_default();
//! assert!(o.request_deadline(0) >= o.idle_timeout);
//! ```

use crate::error::{Error, Result};
use std::sync::RwLock;
use std::time::Duration;

/// Timeouts and retries of remote reads.
///
/// A request fails when the server has not accepted the connection within `connect_timeout`,
/// when no byte arrives for `idle_timeout` (before the response's headers or between two parts
/// of its body), or when the whole request (its retries included) has not completed within
/// [`RemoteOptions::request_deadline`]: both timeouts plus one second per MiB asked for (a
/// server trickling bytes fails too). Connection failures and 5xx answers are retried up to
/// `retries` times with exponential back-off (100 ms, doubling); 4xx answers and answers that
/// are not what was asked are not.
///
/// ```
/// use rntuple::storage::RemoteOptions;
/// use std::time::Duration;
/// let o = RemoteOptions::default();
/// assert_eq!((o.connect_timeout, o.idle_timeout, o.retries), (Duration::from_secs(30), Duration::from_secs(60), 3));
/// assert_eq!(o.request_deadline(3 << 20), Duration::from_secs(93));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteOptions {
    /// Time to establish a connection (TCP and TLS). Default 30 s.
    pub connect_timeout: Duration,
    /// Longest wait for the next byte of an answer. Default 60 s (XRootD's stream timeout).
    pub idle_timeout: Duration,
    /// Retries of a request that failed in a way worth retrying. Default 3.
    pub retries: usize,
}

impl Default for RemoteOptions {
    /// Defaults for grid storage: a busy storage element may take seconds to accept a
    /// connection and tens of seconds to start answering, so 30 s to connect and 60 s without a
    /// byte (XRootD's `XRD_STREAMTIMEOUT`) before giving up; 3 retries ride out a restart.
    fn default() -> Self {
        RemoteOptions { connect_timeout: Duration::from_secs(30), idle_timeout: Duration::from_secs(60), retries: 3 }
    }
}

static PROCESS: RwLock<Option<RemoteOptions>> = RwLock::new(None);

fn seconds(var: &str, default: Duration) -> Result<Duration> {
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(s) => match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(Duration::from_secs_f64(v)),
            _ => Err(Error::Invalid(format!("{var}={s:?}: expected a number of seconds above 0 and at most 86400"))),
        },
    }
}

impl RemoteOptions {
    /// The defaults, overridden by the environment: `RNTUPLE_CONNECT_TIMEOUT` and
    /// `RNTUPLE_IDLE_TIMEOUT` (seconds, decimals allowed), `RNTUPLE_RETRIES` (a count, at most
    /// 100). A value that is not a number in range is an error naming the variable.
    ///
    /// ```
    /// use rntuple::storage::RemoteOptions;
    /// assert!(RemoteOptions::from_env().is_ok());
    /// ```
    pub fn from_env() -> Result<Self> {
        let d = RemoteOptions::default();
        let retries = match std::env::var("RNTUPLE_RETRIES") {
            Err(_) => d.retries,
            Ok(s) => match s.trim().parse::<usize>() {
                Ok(n) if n <= 100 => n,
                _ => return Err(Error::Invalid(format!("RNTUPLE_RETRIES={s:?}: expected a count from 0 to 100"))),
            },
        };
        Ok(RemoteOptions {
            connect_timeout: seconds("RNTUPLE_CONNECT_TIMEOUT", d.connect_timeout)?,
            idle_timeout: seconds("RNTUPLE_IDLE_TIMEOUT", d.idle_timeout)?,
            retries,
        })
    }

    /// The options remote sources opened from now on use: those set by
    /// [`RemoteOptions::set_for_process`], else [`RemoteOptions::from_env`].
    ///
    /// ```
    /// use rntuple::storage::RemoteOptions;
    /// assert!(RemoteOptions::current().is_ok());
    /// ```
    pub fn current() -> Result<Self> {
        match PROCESS.read().ok().and_then(|g| *g) {
            Some(o) => Ok(o),
            None => RemoteOptions::from_env(),
        }
    }

    /// Makes these the options of every remote source opened from now on in this process.
    ///
    /// ```
    /// use rntuple::storage::RemoteOptions;
    /// use std::time::Duration;
    /// let o = RemoteOptions { idle_timeout: Duration::from_secs(5), ..RemoteOptions::default() };
    /// o.set_for_process();
    /// assert_eq!(RemoteOptions::current().ok(), Some(o));
    /// ```
    pub fn set_for_process(self) {
        if let Ok(mut g) = PROCESS.write() {
            *g = Some(self);
        }
    }

    /// The longest a request for `bytes` bytes may take, retries included: the connect and idle
    /// timeouts plus one second per MiB (a transfer slower than 1 MiB/s fails).
    ///
    /// ```
    /// use rntuple::storage::RemoteOptions;
    /// use std::time::Duration;
    /// let o = RemoteOptions { connect_timeout: Duration::from_secs(1), idle_timeout: Duration::from_secs(2), retries: 0 };
    /// assert_eq!(o.request_deadline(100), Duration::from_secs(3));
    /// ```
    pub fn request_deadline(&self, bytes: u64) -> Duration {
        self.connect_timeout + self.idle_timeout + Duration::from_secs(bytes >> 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_refused_with_the_variable() {
        let d = Duration::from_secs(7);
        for bad in ["0", "-1", "abc", "nan", "1e9"] {
            // SAFETY: a variable only this test reads.
            unsafe { std::env::set_var("RNTUPLE_TEST_SECONDS", bad) };
            let e = seconds("RNTUPLE_TEST_SECONDS", d).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("RNTUPLE_TEST_SECONDS"), "{bad}: {e}");
        }
        unsafe { std::env::set_var("RNTUPLE_TEST_SECONDS", "1.5") };
        assert_eq!(seconds("RNTUPLE_TEST_SECONDS", d).ok(), Some(Duration::from_millis(1500)));
        unsafe { std::env::remove_var("RNTUPLE_TEST_SECONDS") };
        assert_eq!(seconds("RNTUPLE_TEST_SECONDS", d).ok(), Some(d));
    }
}

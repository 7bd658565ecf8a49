//! Timeouts and retries of remote reads (`http://`, `https://`, `s3://`) from Python:
//! `set_remote_options` and `remote_options`, over the library's `RemoteOptions` (the owner of
//! the defaults and of the `RNTUPLE_*` environment variables).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rntuple::storage::remote::remote_options::RemoteOptions;
use rntuple::Error;
use std::time::Duration;

use crate::errors::OrRaise;

fn seconds(name: &str, v: f64) -> rntuple::Result<Duration> {
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(Error::Invalid(format!("{name}={v}: expected seconds above 0 and at most 86400")))
    }
}

/// Sets the timeouts and retries of every remote file opened from now on in this process; an
/// argument left out keeps its current value (from an earlier call, the environment's
/// `RNTUPLE_CONNECT_TIMEOUT` / `RNTUPLE_IDLE_TIMEOUT` / `RNTUPLE_RETRIES`, or the defaults
/// 30 s, 60 s, 3).
#[pyfunction]
#[pyo3(signature = (*, connect_timeout=None, idle_timeout=None, retries=None))]
fn set_remote_options(py: Python<'_>, connect_timeout: Option<f64>, idle_timeout: Option<f64>, retries: Option<usize>) -> PyResult<()> {
    let set = || -> rntuple::Result<()> {
        let mut o = RemoteOptions::current()?;
        if let Some(v) = connect_timeout {
            o.connect_timeout = seconds("connect_timeout", v)?;
        }
        if let Some(v) = idle_timeout {
            o.idle_timeout = seconds("idle_timeout", v)?;
        }
        if let Some(n) = retries {
            if n > 100 {
                return Err(Error::Invalid(format!("retries={n}: at most 100")));
            }
            o.retries = n;
        }
        o.set_for_process();
        Ok(())
    };
    set().or_raise(py)
}

/// The timeouts and retries remote files opened now get: `{"connect_timeout": s,
/// "idle_timeout": s, "retries": n}`.
#[pyfunction]
fn remote_options(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let o = RemoteOptions::current().or_raise(py)?;
    let d = PyDict::new(py);
    d.set_item("connect_timeout", o.connect_timeout.as_secs_f64())?;
    d.set_item("idle_timeout", o.idle_timeout.as_secs_f64())?;
    d.set_item("retries", o.retries)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_remote_options, m)?)?;
    m.add_function(wrap_pyfunction!(remote_options, m)?)?;
    Ok(())
}

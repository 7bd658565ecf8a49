//! A function over every cluster of a chain of files on several threads
//! (`rntuple::dataset::Chain::map_clusters`): the clusters of all files are one list, taken
//! largest first, so a large file and small ones mixed keep every thread busy; each cluster's
//! chosen fields reach the caller's callback as an Arrow record batch (a struct array).

use crate::ffi_types::{ArrowArray, ArrowSchema};
use crate::status::{guard, CError};
use crate::strings::{opt_str_arg, str_list_arg};
use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, StructArray};
use std::ffi::{c_char, c_void};

/// What `rntuple_chain_map_clusters` calls for each cluster, from its threads (several at once):
/// the caller's `user` pointer, the input's index in `paths`, the cluster's index in the input, its
/// first entry (numbered over the whole chain) and entry count, and its fields as an Arrow struct
/// array and its schema. Both are released when the callback returns, unless it moved them (took
/// the structs and set their `release` to NULL, as the Arrow C data interface allows). A nonzero
/// return stops the work; it becomes `RNTUPLE_ERR_INVALID_ARGUMENT` naming the cluster.
pub type rntuple_cluster_callback = Option<
    unsafe extern "C" fn(user: *mut c_void, input: u64, cluster: u64, first_entry: u64, entries: u64, batch: *mut ArrowArray, schema: *mut ArrowSchema) -> i32,
>;

/// The caller's pointer, handed to the callback on every thread.
struct User(*mut c_void);

// SAFETY: the pointer is only passed back to the caller's callback, which the contract of
// `rntuple_chain_map_clusters` says is called from several threads at once.
unsafe impl Sync for User {}
unsafe impl Send for User {}

impl User {
    /// The pointer (a method, so that closures capture the whole `User`, which is `Sync`).
    fn get(&self) -> *mut c_void {
        self.0
    }
}

/// Opens the RNTuple `ntuple` (NULL: each file's only one) of the files `paths[0..n_paths]` (paths,
/// globs or URLs) as one chain and calls `callback` for every cluster with its entries of the
/// chosen top-level fields (`fields[0..n_fields]`; all when `fields` is NULL) on `threads` threads
/// (0 or 1: the calling thread only), returning when all are done. The schemas of the files must
/// agree. Errors: a file that cannot be opened or differs (naming it), an unknown field, a damaged
/// page (naming the file and cluster), a callback's nonzero return; the first error stops the
/// threads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_chain_map_clusters(
    paths: *const *const c_char,
    n_paths: usize,
    ntuple: *const c_char,
    fields: *const *const c_char,
    n_fields: usize,
    threads: u32,
    callback: rntuple_cluster_callback,
    user: *mut c_void,
) -> i32 {
    guard("rntuple_chain_map_clusters", || {
        let callback = callback.ok_or_else(|| CError::null("callback"))?;
        let paths: Vec<String> = unsafe { str_list_arg(paths, n_paths, "paths") }?.into_iter().map(str::to_string).collect();
        if paths.is_empty() {
            return Err(CError::invalid("no input files (n_paths is 0)"));
        }
        let ntuple = unsafe { opt_str_arg(ntuple, "ntuple") }?;
        let fields = if fields.is_null() && n_fields == 0 { None } else { Some(unsafe { str_list_arg(fields, n_fields, "fields") }?) };
        let mut chain = rntuple::dataset::Chain::open(&paths, ntuple)?;
        chain.prepare_for_threads();
        let user = User(user);
        let call = |t: &rntuple::dataset::ClusterTask, batch: rntuple::arrow::array::RecordBatch| -> rntuple::Result<()> {
            let data = StructArray::from(batch).into_data();
            let (mut array, mut schema): (FFI_ArrowArray, FFI_ArrowSchema) = to_ffi(&data).map_err(rntuple::Error::Arrow)?;
            let n = t.entries.end - t.entries.start;
            // SAFETY: `callback` is the caller's function of this signature; the structs are valid
            // for its call and dropped (released unless it moved them) afterwards.
            let rc = unsafe {
                callback(
                    user.get(),
                    t.input as u64,
                    t.cluster as u64,
                    t.entries.start,
                    n,
                    (&mut array as *mut FFI_ArrowArray).cast(),
                    (&mut schema as *mut FFI_ArrowSchema).cast(),
                )
            };
            if rc != 0 {
                return Err(rntuple::Error::Invalid(format!("the callback returned {rc} for entries {}..{}", t.entries.start, t.entries.end)));
            }
            Ok(())
        };
        chain.map_clusters(fields.as_deref(), threads.max(1) as usize, call).map_err(CError::from)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{RNTUPLE_ERR_INVALID_ARGUMENT, RNTUPLE_ERR_NULL_POINTER, RNTUPLE_OK};
    use arrow_array::ffi::from_ffi;
    use arrow_array::Int64Array;
    use rntuple::write::{WriteOptions, Writer};
    use rntuple::Value;
    use std::ffi::CString;
    use std::sync::Mutex;

    unsafe extern "C" fn sum_x(user: *mut c_void, _input: u64, _cluster: u64, first: u64, n: u64, batch: *mut ArrowArray, schema: *mut ArrowSchema) -> i32 {
        let acc = unsafe { &*(user as *const Mutex<(i64, u64)>) };
        let array = unsafe { std::ptr::replace(batch as *mut FFI_ArrowArray, FFI_ArrowArray::empty()) };
        let data = match unsafe { from_ffi(array, &*(schema as *const FFI_ArrowSchema)) } {
            Ok(d) => d,
            Err(_) => return 1,
        };
        let s = StructArray::from(data);
        let x = s.column(0).as_any().downcast_ref::<Int64Array>().map(|a| a.values().iter().sum::<i64>());
        let Some(x) = x else { return 2 };
        if s.len() as u64 != n {
            return 3;
        }
        let mut g = acc.lock().unwrap();
        g.0 += x;
        g.1 += first;
        0
    }

    unsafe extern "C" fn refuse(_: *mut c_void, input: u64, _: u64, _: u64, _: u64, _: *mut ArrowArray, _: *mut ArrowSchema) -> i32 {
        if input == 1 {
            7
        } else {
            0
        }
    }

    #[test]
    fn every_cluster_of_every_file_reaches_the_callback() {
        let dir = std::env::temp_dir();
        let paths: Vec<CString> = (0..3)
            .map(|k| {
                let p = dir.join(format!("rntuple-c-chain-map-{k}-{}.root", std::process::id()));
                let opts = WriteOptions { approx_zipped_cluster_size: 1000, ..Default::default() };
                let mut w = Writer::create(&p, "Events", &[("x", "std::int64_t"), ("y", "float")], opts).unwrap();
                for i in 0..(500 * (k + 1)) as i64 {
                    w.fill(&Value::Record(vec![("x".into(), Value::Int(i)), ("y".into(), Value::F32(0.5))])).unwrap();
                }
                w.commit().unwrap();
                CString::new(p.to_str().unwrap()).unwrap()
            })
            .collect();
        let ptrs: Vec<*const c_char> = paths.iter().map(|p| p.as_ptr()).collect();
        let field = c"x";
        let acc = Mutex::new((0i64, 0u64));
        let user = &acc as *const _ as *mut c_void;
        for threads in [0, 2] {
            *acc.lock().unwrap() = (0, 0);
            let rc = unsafe { rntuple_chain_map_clusters(ptrs.as_ptr(), 3, std::ptr::null(), &field.as_ptr(), 1, threads, Some(sum_x), user) };
            assert_eq!(rc, RNTUPLE_OK, "{}", unsafe { std::ffi::CStr::from_ptr(crate::status::rntuple_last_error()) }.to_string_lossy());
            assert_eq!(acc.lock().unwrap().0, 499 * 500 / 2 + 999 * 1000 / 2 + 1499 * 1500 / 2);
        }
        let rc = unsafe { rntuple_chain_map_clusters(ptrs.as_ptr(), 3, std::ptr::null(), std::ptr::null(), 0, 2, Some(refuse), std::ptr::null_mut()) };
        assert_eq!(rc, RNTUPLE_ERR_INVALID_ARGUMENT);
        let msg = unsafe { std::ffi::CStr::from_ptr(crate::status::rntuple_last_error()) }.to_string_lossy().into_owned();
        assert!(msg.contains("returned 7") && msg.contains(paths[1].to_str().unwrap()), "{msg}");
        let rc = unsafe { rntuple_chain_map_clusters(ptrs.as_ptr(), 3, std::ptr::null(), std::ptr::null(), 0, 2, None, std::ptr::null_mut()) };
        assert_eq!(rc, RNTUPLE_ERR_NULL_POINTER);
        for p in &paths {
            std::fs::remove_file(p.to_str().unwrap()).unwrap();
        }
    }
}

//! Running a function over every cluster of a chain on several threads: the clusters of all
//! inputs are one list of tasks, largest first, that the threads take one at a time, so a large
//! file and many small ones mixed keep every thread busy to the end (ROOT's RDataFrame hands out
//! files, and waits for the thread that got the largest). Each thread reads its cluster's chosen
//! fields into a record batch and calls the function with it.

use super::chain::Chain;
use crate::error::{Error, Result};
use arrow_array::RecordBatch;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// One cluster of one input of a chain, as a task of [`Chain::map_clusters`].
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ClusterTask-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let chain = rntuple::dataset::Chain::open(&[path.display().to_string()], None)?;
/// let tasks = chain.cluster_tasks();
/// assert_eq!((tasks[0].input, tasks[0].cluster, tasks[0].entries.clone()), (0, 0, 0..4));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterTask {
    /// The input (its index in the chain).
    pub input: usize,
    /// The cluster's index in its input.
    pub cluster: usize,
    /// The cluster's entries, numbered globally over the chain.
    pub entries: Range<u64>,
}

impl Chain {
    /// Every cluster of every input as a task, in chain order (empty clusters left out).
    pub fn cluster_tasks(&self) -> Vec<ClusterTask> {
        let mut out = Vec::new();
        for (input, p) in self.parts_inner().iter().enumerate() {
            for (cluster, c) in p.reader.descriptor().clusters.iter().enumerate() {
                if c.n_entries > 0 {
                    out.push(ClusterTask { input, cluster, entries: p.first + c.first_entry..p.first + c.first_entry + c.n_entries });
                }
            }
        }
        out
    }

    /// Calls `f` with every cluster's task and its entries of the chosen top-level `fields` (all
    /// when `None`) on `threads` threads (at least 1), and returns the results in chain order. The
    /// threads take the clusters largest first, one at a time; the first error stops them and is
    /// returned (naming the input and cluster). Prepare the chain with
    /// [`Chain::prepare_for_threads`] first for the best speed.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let dir = std::env::temp_dir();
    /// # let paths: Vec<String> = (0..3).map(|k| dir.join(format!("rntuple-doc-map-clusters-{k}-{}.root", std::process::id())).display().to_string()).collect();
    /// # for (k, p) in paths.iter().enumerate() {
    /// #     let opts = WriteOptions { approx_zipped_cluster_size: 1000, ..Default::default() };
    /// #     let mut w = Writer::create(p, "Events", &[("x", "std::int64_t")], opts)?;
    /// #     for i in 0..1000 * (k as i64 + 1) { w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?; }
    /// #     w.commit()?;
    /// # }
    /// use rntuple::arrow::array::{Array, Int64Array};
    /// let mut chain = rntuple::dataset::Chain::open(&paths, None)?;
    /// chain.prepare_for_threads();
    /// let sums = chain.map_clusters(Some(&["x"]), 2, |task, batch| {
    ///     let x = batch.column(0).as_any().downcast_ref::<Int64Array>().expect("x is an int64 column");
    ///     assert_eq!(x.len() as u64, task.entries.end - task.entries.start);
    ///     Ok(x.values().iter().sum::<i64>())
    /// })?;
    /// assert_eq!(sums.iter().sum::<i64>(), 999 * 1000 / 2 + 1999 * 2000 / 2 + 2999 * 3000 / 2);
    /// # for p in &paths { std::fs::remove_file(p)?; }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn map_clusters<R, F>(&self, fields: Option<&[&str]>, threads: usize, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(&ClusterTask, RecordBatch) -> Result<R> + Sync,
    {
        let tasks = self.cluster_tasks();
        let owned: Vec<String>;
        let fields: Vec<&str> = match fields {
            Some(f) => f.to_vec(),
            None => {
                owned = self.fields().into_iter().map(|(n, _)| n).collect();
                owned.iter().map(String::as_str).collect()
            }
        };
        // Largest first: the last tasks taken are the small ones, so the threads end together.
        let mut order: Vec<usize> = (0..tasks.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(tasks[i].entries.end - tasks[i].entries.start));
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let results: Vec<Mutex<Option<R>>> = tasks.iter().map(|_| Mutex::new(None)).collect();
        let first_error: Mutex<Option<Error>> = Mutex::new(None);
        let work = || {
            while !stop.load(Ordering::Relaxed) {
                let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                let t = &tasks[i];
                let run = || -> Result<R> {
                    let batch = self.read_batch(Some(&fields), t.entries.start, t.entries.end)?;
                    f(t, batch)
                };
                match run() {
                    Ok(r) => {
                        if let Ok(mut slot) = results[i].lock() {
                            *slot = Some(r);
                        }
                    }
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        let loc = &self.parts_inner()[t.input].location;
                        if let Ok(mut fe) = first_error.lock() {
                            fe.get_or_insert(e.context(format!("{loc}: cluster {}", t.cluster)));
                        }
                    }
                }
            }
        };
        let threads = threads.clamp(1, tasks.len().max(1));
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(work);
            }
            work();
        });
        if let Some(e) = first_error.into_inner().map_err(|_| Error::internal("a cluster task's error lock was poisoned"))? {
            return Err(e);
        }
        results
            .into_iter()
            .enumerate()
            .map(|(i, m)| m.into_inner().ok().flatten().ok_or_else(|| Error::internal(format!("cluster task {i} gave no result"))))
            .collect()
    }

    /// Sets every input up for reads of different clusters from several threads at once (see
    /// [`crate::Reader::share_between_threads`]): one decoding thread per read, pages read as
    /// decoded. Inputs whose reader is shared elsewhere keep their settings.
    pub fn prepare_for_threads(&mut self) {
        for r in self.readers_mut() {
            r.share_between_threads();
            r.set_threads(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{WriteOptions, Writer};
    use crate::Value;

    /// Inputs of 1 to 4 small clusters each, one of them holding half the entries.
    fn inputs(tag: &str) -> Vec<String> {
        let dir = std::env::temp_dir();
        let sizes = [300u64, 50, 2000, 10, 400, 700];
        sizes
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let p = dir.join(format!("rntuple-sched-{tag}-{k}-{}.root", std::process::id())).display().to_string();
                let opts = WriteOptions { approx_zipped_cluster_size: 2000, ..Default::default() };
                let mut w = Writer::create(&p, "Events", &[("x", "std::int64_t"), ("v", "std::vector<float>")], opts).unwrap();
                for i in 0..n {
                    let v = (0..i % 3).map(|j| Value::F32(j as f32)).collect();
                    w.fill(&Value::Record(vec![("x".into(), Value::Int((k as i64) * 100_000 + i as i64)), ("v".into(), Value::List(v))])).unwrap();
                }
                w.commit().unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn every_cluster_once_in_chain_order_on_any_number_of_threads() {
        let paths = inputs("order");
        let mut chain = Chain::open(&paths, None).unwrap();
        chain.prepare_for_threads();
        let tasks = chain.cluster_tasks();
        assert!(tasks.len() > paths.len(), "{} tasks", tasks.len());
        let whole = chain.read_batch(Some(&["x"]), 0, chain.num_entries()).unwrap();
        for threads in [1, 2, 3, 8] {
            let got = chain.map_clusters(Some(&["x"]), threads, |t, b| Ok((t.clone(), b))).unwrap();
            assert_eq!(got.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(), tasks);
            let mut at = 0u64;
            for (t, b) in &got {
                assert_eq!(t.entries.start, at);
                assert_eq!(b.num_rows() as u64, t.entries.end - t.entries.start);
                assert_eq!(b.column(0).to_data(), whole.column(0).slice(at as usize, b.num_rows()).to_data());
                at = t.entries.end;
            }
            assert_eq!(at, chain.num_entries());
        }
        for p in &paths {
            std::fs::remove_file(p).unwrap();
        }
    }

    #[test]
    fn the_first_error_stops_the_threads_and_names_the_cluster() {
        let paths = inputs("error");
        let chain = Chain::open(&paths, None).unwrap();
        let calls = AtomicUsize::new(0);
        let err = chain
            .map_clusters(None, 2, |t, _| {
                calls.fetch_add(1, Ordering::Relaxed);
                if t.input == 2 {
                    Err(Error::Invalid("no".into()))
                } else {
                    Ok(())
                }
            })
            .unwrap_err();
        assert!(err.to_string().contains("cluster"), "{err}");
        assert!(err.to_string().contains(&paths[2]), "{err}");
        assert!(calls.load(Ordering::Relaxed) <= chain.cluster_tasks().len());
        assert!(chain.map_clusters(Some(&["nope"]), 2, |_, _| Ok(())).is_err());
        for p in &paths {
            std::fs::remove_file(p).unwrap();
        }
    }
}

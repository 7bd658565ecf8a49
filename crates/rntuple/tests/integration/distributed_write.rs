//! The transport-free distributed writer: "ranks" as threads of this process, each with its
//! fill contexts, placing clusters through an offset counter (the `metadata`, `one-sided` and
//! `file-lock` strategies differ only in who keeps the counter) or shipping them to rank 0
//! (`send-data`); rank 0 assembles the RNTuple from the gathered lists. The file must hold every
//! id once, each context's entries in order, with every reserved range aligned. (The MPI
//! transports are tested under `mpirun` in tests/cross/test_mpi_write.py.)

use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::datatypes::UInt64Type;
use rntuple::write::distributed::{parse_schema, Assembler, ClusterShipper, OffsetService, RankLayout, RankWriter, Route, Ticket};
use rntuple::write::WriteOptions;
use rntuple::{RNTupleFile, Value};
use std::sync::{Arc, Mutex};

struct Counter {
    next: Mutex<u64>,
    align: u64,
}

impl OffsetService for Counter {
    fn reserve(&self, len: u64) -> rntuple::Result<u64> {
        assert_eq!(len % self.align, 0, "a reservation of {len} bytes is not a multiple of the alignment");
        let mut n = self.next.lock().unwrap();
        let at = *n;
        *n += len;
        Ok(at)
    }
}

/// Answers late, as a remote aggregator does: requests are numbered, and the ranges are handed
/// out in request order only when someone waits for an answer.
struct Deferred {
    state: Mutex<(Vec<u64>, Vec<u64>, u64)>, // (asked lengths, answers so far, next offset)
}

impl OffsetService for Deferred {
    fn reserve(&self, len: u64) -> rntuple::Result<u64> {
        let t = self.request(len)?;
        self.complete(t)
    }
    fn request(&self, len: u64) -> rntuple::Result<Ticket> {
        let mut s = self.state.lock().unwrap();
        s.0.push(len);
        Ok(Ticket::Pending(s.0.len() as u64 - 1))
    }
    fn complete(&self, t: Ticket) -> rntuple::Result<u64> {
        let Ticket::Pending(n) = t else { panic!("a deferred service hands out pending tickets") };
        let mut s = self.state.lock().unwrap();
        while s.1.len() as u64 <= n {
            let k = s.1.len();
            let (at, len) = (s.2, s.0[k]);
            s.1.push(at);
            s.2 += len;
        }
        Ok(s.1[n as usize])
    }
}

/// Ships to rank 0's writer directly (what the MPI aggregator thread does on receipt).
struct ToRankZero(RankWriter, Mutex<u64>);

impl ClusterShipper for ToRankZero {
    fn ship(&self, blob: Vec<u8>) -> rntuple::Result<()> {
        *self.1.lock().unwrap() += 1;
        self.0.accept_shipped(&blob, "a test rank")
    }
}

fn entry(id: u64) -> Value {
    let v: Vec<Value> = (0..id % 5).map(|k| Value::F32((id + k) as f32)).collect();
    Value::Record(vec![("id".into(), Value::UInt(id)), ("v".into(), Value::List(v))])
}

fn opts(compression: u32) -> WriteOptions {
    WriteOptions {
        compression: rntuple::write::Compression::from_settings(compression).unwrap(),
        approx_zipped_cluster_size: 2000,
        max_unzipped_page_size: 512,
        ..Default::default()
    }
}

/// Writes `ranks` x `threads` x `n` entries; `ship` routes ranks other than 0 through rank 0.
fn write(name: &str, ranks: u64, threads: u64, n: u64, align: u64, compression: u32, ship: bool) -> std::path::PathBuf {
    write_with(name, ranks, threads, n, align, compression, ship, false)
}

#[allow(clippy::too_many_arguments)]
fn write_with(name: &str, ranks: u64, threads: u64, n: u64, align: u64, compression: u32, ship: bool, deferred: bool) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("rntuple-distributed-{}-{name}.root", std::process::id()));
    let schema = parse_schema(&[("id", "std::uint64_t"), ("v", "std::vector<float>")]).unwrap();
    let layout = RankLayout { align, direct_io: false, max_write: 1000 };
    let o = opts(compression);
    let asm = Assembler::create(&path, RankWriter::descriptor("Events", &schema, &o).unwrap(), o.clone(), align).unwrap();
    assert_eq!(asm.first_offset() % align, 0);
    let counter: Arc<dyn OffsetService> = if deferred {
        Arc::new(Deferred { state: Mutex::new((Vec::new(), Vec::new(), asm.first_offset())) })
    } else {
        Arc::new(Counter { next: Mutex::new(asm.first_offset()), align })
    };
    let rank0 = RankWriter::new("Events", &schema, o.clone(), layout.clone(), Route::Offsets(counter.clone()), Some(asm.writing_path())).unwrap();
    let shipper = Arc::new(ToRankZero(rank0.clone(), Mutex::new(0)));
    let writers: Vec<RankWriter> = (0..ranks)
        .map(|r| match (r, ship) {
            (0, _) => rank0.clone(),
            (_, true) => RankWriter::new("Events", &schema, o.clone(), layout.clone(), Route::Ship(shipper.clone()), None).unwrap(),
            (_, false) => RankWriter::new("Events", &schema, o.clone(), layout.clone(), Route::Offsets(counter.clone()), Some(asm.writing_path())).unwrap(),
        })
        .collect();
    std::thread::scope(|s| {
        for (r, w) in writers.iter().enumerate() {
            for t in 0..threads {
                let mut ctx = w.fill_context();
                s.spawn(move || {
                    let first = (r as u64 * threads + t) * n;
                    for id in first..first + n {
                        ctx.fill(&entry(id)).unwrap();
                    }
                    ctx.finish().unwrap();
                });
            }
        }
    });
    let mut lists = Vec::new();
    for (r, w) in writers.iter().enumerate() {
        let (list, m) = w.finish().unwrap();
        if r > 0 || !ship {
            assert_eq!(m.entries, threads * n, "rank {r}'s entries");
            assert!(n == 0 || m.clusters >= 2, "rank {r} wrote {} clusters: too few to interleave", m.clusters);
            assert_eq!(m.requests, m.clusters);
        }
        lists.push(list);
    }
    if ship {
        assert!(*shipper.1.lock().unwrap() >= 2 * (ranks - 1), "clusters were shipped");
    }
    asm.commit(&lists).unwrap();
    path
}

fn verify(path: &std::path::Path, groups: u64, n: u64, align: u64) {
    let f = RNTupleFile::open(path).unwrap();
    let r = f.reader("Events").unwrap();
    assert_eq!(r.num_entries(), groups * n);
    let b = r.read_batch(None, 0, r.num_entries()).unwrap();
    let ids = b.column(0).as_primitive::<UInt64Type>().values().to_vec();
    let mut seen = vec![false; ids.len()];
    let mut last: Vec<Option<u64>> = vec![None; groups as usize];
    for (row, &id) in ids.iter().enumerate() {
        assert!(!std::mem::replace(&mut seen[id as usize], true), "id {id} twice");
        let g = (id / n) as usize;
        assert_eq!(id, last[g].map_or(g as u64 * n, |p| p + 1), "group {g}: id {id} out of order");
        last[g] = Some(id);
        let v = b.column(1).as_list::<i64>().value(row);
        assert_eq!(v.len() as u64, id % 5, "values of id {id}");
    }
    for c in &r.descriptor().clusters {
        // A cluster's pages sit in one key (they are small) whose 42-byte header starts aligned.
        let first = c.columns.iter().flatten().flat_map(|col| &col.pages).map(|p| p.locator.offset).min();
        if let Some(first) = first {
            assert_eq!((first - 42) % align, 0, "cluster {} starts at {} (alignment {align})", c.id, first - 42);
        }
    }
    std::fs::remove_file(path).ok();
}

#[test]
fn ranks_reserving_offsets_write_one_rntuple() {
    for (ranks, threads, align, comp) in [(2, 1, 4096, 0), (3, 2, 4096, 505), (4, 1, 1 << 20, 505), (2, 3, 1, 0)] {
        let p = write(&format!("offsets-{ranks}-{threads}-{align}-{comp}"), ranks, threads, 700, align, comp, false);
        verify(&p, ranks * threads, 700, align);
    }
}

#[test]
fn ranks_whose_offsets_come_late_write_one_rntuple() {
    // Each context asks for a cluster's range when it is sealed and waits for the answer only at the
    // next cluster: answers arrive out of the order the contexts wait in.
    for (ranks, threads, align, comp) in [(3, 2, 4096, 0), (2, 3, 1 << 20, 505)] {
        let p = write_with(&format!("deferred-{ranks}-{threads}-{align}-{comp}"), ranks, threads, 700, align, comp, false, true);
        verify(&p, ranks * threads, 700, align);
    }
}

#[test]
fn ranks_shipping_clusters_to_rank_zero_write_one_rntuple() {
    for (ranks, threads, align, comp) in [(3, 1, 4096, 0), (2, 2, 1 << 20, 505)] {
        let p = write(&format!("ship-{ranks}-{threads}-{align}-{comp}"), ranks, threads, 600, align, comp, true);
        verify(&p, ranks * threads, 600, align);
    }
}

#[test]
fn a_rank_that_writes_nothing_is_fine_and_bad_layouts_are_refused() {
    let p = write("empty-rank", 2, 1, 0, 4096, 0, false);
    verify(&p, 2, 0, 4096);
    let schema = parse_schema(&[("id", "std::uint64_t")]).unwrap();
    let c = Arc::new(Counter { next: Mutex::new(0), align: 1 });
    for (layout, want) in [
        (RankLayout { align: 3000, direct_io: false, max_write: 0 }, "power of two"),
        (RankLayout { align: 512, direct_io: true, max_write: 0 }, "at least 4096"),
        (RankLayout { align: 4096, direct_io: true, max_write: 1000 }, "multiple of 4096"),
    ] {
        let e = RankWriter::new("Events", &schema, WriteOptions::default(), layout, Route::Offsets(c.clone()), None).err().unwrap().to_string();
        assert!(e.contains(want), "{e}");
    }
    // Checkpoints are accepted (the transport's checkpointer makes them; see write::distributed).
    let o = WriteOptions { checkpoint_clusters: 2, ..Default::default() };
    assert_eq!(RankWriter::descriptor("Events", &schema, &o).unwrap().fields.len(), 1);
}

fn ids(path: &std::path::Path) -> Vec<u64> {
    let r = RNTupleFile::open(path).unwrap().reader("Events").unwrap();
    let b = r.read_batch(None, 0, r.num_entries()).unwrap();
    b.column(0).as_primitive::<UInt64Type>().values().to_vec()
}

/// One fill context over two destinations: the same calls through a parallel writer's context and
/// a rank's (fill, append_batch, cluster_fill, flush_cluster, num_entries, finish) write the same
/// entries, each context's in order; a context dropped unfinished ends as `finish` does (its last
/// cluster written, the writer or rank no longer waiting for it).
#[test]
fn parallel_and_rank_contexts_fill_alike_and_end_on_drop() {
    let fields = [("id", "std::uint64_t"), ("v", "std::vector<float>")];
    // Clusters large enough that only the calls below end them.
    let o = WriteOptions { compression: rntuple::write::Compression::NONE, ..Default::default() };
    let tmp = |tag: &str| std::env::temp_dir().join(format!("rntuple-distributed-{}-alike-{tag}.root", std::process::id()));
    // A batch of the entries 1000..1100, read from a file of them.
    let src = tmp("batch");
    let mut w = rntuple::write::Writer::create(&src, "Events", &fields, o.clone()).unwrap();
    for id in 1000..1100 {
        w.fill(&entry(id)).unwrap();
    }
    w.commit().unwrap();
    let batch = RNTupleFile::open(&src).unwrap().reader("Events").unwrap().read_batch(None, 0, 100).unwrap();
    // The same calls on both kinds of context (the destination's trait is the crate's own: no
    // generic function over it out here).
    macro_rules! fill_two {
        ($a:expr, $b:expr) => {{
            let (mut a, mut b) = ($a, $b);
            for id in 0..700 {
                a.fill(&entry(id)).unwrap();
            }
            assert!(a.cluster_fill() > 0.0);
            a.flush_cluster().unwrap();
            assert_eq!(a.cluster_fill(), 0.0);
            a.append_batch(&batch).unwrap();
            assert_eq!(a.num_entries(), 800);
            for id in 2000..2300 {
                b.fill(&entry(id)).unwrap();
            }
            assert_eq!(b.num_entries(), 300);
            let finished = a.finish().unwrap();
            drop(b);
            finished
        }};
    }
    let check = |path: &std::path::Path| {
        let got = ids(path);
        let a: Vec<u64> = got.iter().copied().filter(|&id| id < 2000).collect();
        let b: Vec<u64> = got.iter().copied().filter(|&id| id >= 2000).collect();
        assert_eq!(a, (0..700).chain(1000..1100).collect::<Vec<_>>());
        assert_eq!(b, (2000..2300).collect::<Vec<_>>());
    };

    let par = tmp("parallel");
    let w = rntuple::write::ParallelWriter::create(&par, "Events", &fields, o.clone()).unwrap();
    let m = fill_two!(w.fill_context().unwrap(), w.fill_context().unwrap());
    assert_eq!((m.entries, m.clusters), (800, 2));
    w.commit().unwrap();
    let ended: Vec<u64> = w.metrics().iter().map(|m| m.entries).collect();
    assert_eq!(ended, [800, 300], "the dropped context ended and reported");
    check(&par);

    let rank = tmp("rank");
    let schema = parse_schema(&fields).unwrap();
    let layout = RankLayout { align: 4096, direct_io: false, max_write: 0 };
    let asm = Assembler::create(&rank, RankWriter::descriptor("Events", &schema, &o).unwrap(), o.clone(), layout.align).unwrap();
    let counter = Arc::new(Counter { next: Mutex::new(asm.first_offset()), align: layout.align });
    let r = RankWriter::new("Events", &schema, o.clone(), layout, Route::Offsets(counter), Some(asm.writing_path())).unwrap();
    let () = fill_two!(r.fill_context(), r.fill_context());
    let (list, m) = r.finish().expect("the dropped context ended");
    assert_eq!((m.entries, m.clusters, m.requests), (1100, 3, 3));
    asm.commit(&[list]).unwrap();
    check(&rank);
    for p in [src, par, rank] {
        std::fs::remove_file(p).ok();
    }
}

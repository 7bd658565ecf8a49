//! The Rust side of bench/cpp_write_bench.py: the NanoAOD-like events of examples/cpp/nano_event.h
//! (the same 50 fields in the same order, the same generator: `make` is `nano_make`), written
//! by N threads into one file with the library's own Rust API: `ParallelWriter::create_typed`,
//! one `FillContext` per thread, `fill_typed` of a `#[derive(Record)]` struct (values go straight
//! into the column buffers). Thread t writes entries t*N .. (t+1)*N-1, as output_module does.
//!
//!   nano_write_rust OUT.root [THREADS=4] [ENTRIES_PER_THREAD=100000] [COMPRESSION=505]
//!
//! Prints one JSON line as output_module does (timed from the writer's creation to its commit).

// 3.14 and 6.28 are the C++ generator's constants, not approximations of pi: the events must be equal.
#![allow(clippy::approx_constant)]

use rntuple::write::{OptionValue, ParallelWriter, WriteOptions};
use std::time::Instant;

#[derive(rntuple::Record, Default)]
#[allow(non_snake_case)]
struct NanoEvent {
    run: u32,
    luminosityBlock: u32,
    event: u64,
    MET_pt: f32,
    MET_phi: f32,
    MET_sumEt: f32,
    PV_x: f32,
    PV_y: f32,
    PV_z: f32,
    PV_npvs: i32,
    HLT_IsoMu24: bool,
    HLT_Ele32_WPTight_Gsf: bool,
    fixedGridRhoFastjetAll: f32,
    nMuon: u32,
    Muon_pt: Vec<f32>,
    Muon_eta: Vec<f32>,
    Muon_phi: Vec<f32>,
    Muon_mass: Vec<f32>,
    Muon_charge: Vec<i32>,
    Muon_pfRelIso04_all: Vec<f32>,
    Muon_dxy: Vec<f32>,
    Muon_dz: Vec<f32>,
    Muon_tightId: Vec<u8>,
    nElectron: u32,
    Electron_pt: Vec<f32>,
    Electron_eta: Vec<f32>,
    Electron_phi: Vec<f32>,
    Electron_mass: Vec<f32>,
    Electron_charge: Vec<i32>,
    Electron_cutBased: Vec<i32>,
    Electron_pfRelIso03_all: Vec<f32>,
    nJet: u32,
    Jet_pt: Vec<f32>,
    Jet_eta: Vec<f32>,
    Jet_phi: Vec<f32>,
    Jet_mass: Vec<f32>,
    Jet_btagDeepFlavB: Vec<f32>,
    Jet_jetId: Vec<i32>,
    Jet_hadronFlavour: Vec<i32>,
    Jet_area: Vec<f32>,
    Jet_qgl: Vec<f32>,
    nPhoton: u32,
    Photon_pt: Vec<f32>,
    Photon_eta: Vec<f32>,
    Photon_phi: Vec<f32>,
    Photon_mvaID: Vec<f32>,
    nTau: u32,
    Tau_pt: Vec<f32>,
    Tau_eta: Vec<f32>,
    Tau_phi: Vec<f32>,
}

/// `fill` of nano_make: n values `scale * ((i * 7919 + k * 104729) % 1000) / 1000 + shift`.
fn fill(v: &mut Vec<f32>, i: u64, n: usize, scale: f32, shift: f32) {
    v.clear();
    v.extend((0..n as u64).map(|k| scale * ((i * 7919 + k * 104729) % 1000) as f32 / 1000.0 + shift));
}

/// nano_make: the deterministic event `i`.
fn make(i: u64, e: &mut NanoEvent) {
    e.run = 1;
    e.luminosityBlock = (i / 1000 + 1) as u32;
    e.event = i;
    e.MET_pt = (i % 200) as f32;
    e.MET_phi = (i % 628) as f32 / 100.0 - 3.14;
    e.MET_sumEt = (i % 2000) as f32 + 100.0;
    e.PV_x = 0.01 * (i % 10) as f32;
    e.PV_y = -0.01 * (i % 10) as f32;
    e.PV_z = (i % 30) as f32 - 15.0;
    e.PV_npvs = (i % 60) as i32;
    e.HLT_IsoMu24 = i.is_multiple_of(3);
    e.HLT_Ele32_WPTight_Gsf = i.is_multiple_of(5);
    e.fixedGridRhoFastjetAll = (i % 40) as f32 * 0.5;
    let (nm, ne, nj, np, nt) = ((i % 4) as usize, ((i / 4) % 3) as usize, (i % 8) as usize, ((i / 2) % 3) as usize, (i % 2) as usize);
    e.nMuon = nm as u32;
    fill(&mut e.Muon_pt, i, nm, 100.0, 3.0);
    fill(&mut e.Muon_eta, i, nm, 4.8, -2.4);
    fill(&mut e.Muon_phi, i, nm, 6.28, -3.14);
    fill(&mut e.Muon_mass, i, nm, 0.0, 0.1057);
    set(&mut e.Muon_charge, nm, 1);
    fill(&mut e.Muon_pfRelIso04_all, i, nm, 0.5, 0.0);
    fill(&mut e.Muon_dxy, i, nm, 0.02, -0.01);
    fill(&mut e.Muon_dz, i, nm, 0.2, -0.1);
    set(&mut e.Muon_tightId, nm, 1);
    e.nElectron = ne as u32;
    fill(&mut e.Electron_pt, i, ne, 80.0, 5.0);
    fill(&mut e.Electron_eta, i, ne, 5.0, -2.5);
    fill(&mut e.Electron_phi, i, ne, 6.28, -3.14);
    fill(&mut e.Electron_mass, i, ne, 0.0, 0.000511);
    set(&mut e.Electron_charge, ne, -1);
    set(&mut e.Electron_cutBased, ne, 3);
    fill(&mut e.Electron_pfRelIso03_all, i, ne, 0.3, 0.0);
    e.nJet = nj as u32;
    fill(&mut e.Jet_pt, i, nj, 300.0, 15.0);
    fill(&mut e.Jet_eta, i, nj, 9.4, -4.7);
    fill(&mut e.Jet_phi, i, nj, 6.28, -3.14);
    fill(&mut e.Jet_mass, i, nj, 30.0, 2.0);
    fill(&mut e.Jet_btagDeepFlavB, i, nj, 1.0, 0.0);
    set(&mut e.Jet_jetId, nj, 6);
    set(&mut e.Jet_hadronFlavour, nj, (i % 6) as i32);
    fill(&mut e.Jet_area, i, nj, 0.2, 0.4);
    fill(&mut e.Jet_qgl, i, nj, 1.0, 0.0);
    e.nPhoton = np as u32;
    fill(&mut e.Photon_pt, i, np, 60.0, 10.0);
    fill(&mut e.Photon_eta, i, np, 5.0, -2.5);
    fill(&mut e.Photon_phi, i, np, 6.28, -3.14);
    fill(&mut e.Photon_mvaID, i, np, 2.0, -1.0);
    e.nTau = nt as u32;
    fill(&mut e.Tau_pt, i, nt, 100.0, 20.0);
    fill(&mut e.Tau_eta, i, nt, 4.6, -2.3);
    fill(&mut e.Tau_phi, i, nt, 6.28, -3.14);
}

/// `std::vector::assign(n, x)`.
fn set<T: Copy>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

fn arg<T: std::str::FromStr>(args: &[String], k: usize, default: T) -> Result<T, String> {
    match args.get(k) {
        Some(s) => s.parse().map_err(|_| format!("argument {k}: cannot parse '{s}'")),
        None => Ok(default),
    }
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.get(1).ok_or("usage: nano_write_rust OUT.root [THREADS] [ENTRIES_PER_THREAD] [COMPRESSION]")?;
    let threads: u64 = arg(args, 2, 4)?;
    let per_thread: u64 = arg(args, 3, 100_000)?;
    let compression: u64 = arg(args, 4, 505)?;
    let mut opts = WriteOptions::default();
    opts.set("compression", OptionValue::UInt(compression))?;
    let t0 = Instant::now();
    let writer = ParallelWriter::create_typed::<NanoEvent>(path, "Events", opts)?;
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let writer = &writer;
                s.spawn(move || -> rntuple::Result<()> {
                    let mut ctx = writer.fill_context()?;
                    let mut e = NanoEvent::default();
                    for i in t * per_thread..(t + 1) * per_thread {
                        make(i, &mut e);
                        ctx.fill_typed(&e)?;
                    }
                    ctx.finish()?;
                    Ok(())
                })
            })
            .collect();
        for (t, w) in workers.into_iter().enumerate() {
            match w.join() {
                Ok(r) => r.map_err(|e| format!("thread {t}: {e}"))?,
                Err(_) => return Err(format!("thread {t} panicked")),
            }
        }
        Ok(())
    })?;
    let bytes = writer.commit()?;
    let secs = t0.elapsed().as_secs_f64();
    let n = per_thread * threads;
    println!("{{\"entries\": {n}, \"threads\": {threads}, \"seconds\": {secs:.4}, \"file_bytes\": {bytes}, \"entries_per_second\": {:.0}}}", n as f64 / secs);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = run(&args) {
        eprintln!("nano_write_rust: {e}");
        std::process::exit(1);
    }
}

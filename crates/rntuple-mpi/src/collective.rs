//! The collective steps every rank takes together: agreeing on what is written (refusing a
//! writer whose ranks disagree), agreeing on success (a step that failed on one rank fails on
//! all, with the failing rank named), broadcasting bytes from rank 0 and gathering every rank's
//! bytes on rank 0.

use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Count;
use rntuple::{Error, Result};

/// Broadcasts rank 0's `bytes` to every rank (the others pass anything; they get rank 0's).
pub(crate) fn broadcast_bytes(comm: &SimpleCommunicator, bytes: &[u8]) -> Vec<u8> {
    let root = comm.process_at_rank(0);
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    let mut buf = if comm.rank() == 0 { bytes.to_vec() } else { vec![0u8; len as usize] };
    root.broadcast_into(&mut buf[..]);
    buf
}

/// Gathers every rank's `bytes` on rank 0 (index = rank); other ranks get an empty list.
pub(crate) fn gather_bytes(comm: &SimpleCommunicator, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
    let root = comm.process_at_rank(0);
    let len = Count::try_from(bytes.len()).map_err(|_| Error::Invalid(format!("{} bytes of metadata are more than one MPI message can carry", bytes.len())))?;
    if comm.rank() != 0 {
        root.gather_into(&len);
        root.gather_varcount_into(bytes);
        return Ok(Vec::new());
    }
    let mut counts = vec![0 as Count; comm.size() as usize];
    root.gather_into_root(&len, &mut counts[..]);
    let mut displs = Vec::with_capacity(counts.len());
    let mut total: Count = 0;
    for &c in &counts {
        displs.push(total);
        total = total.checked_add(c).ok_or_else(|| Error::Invalid("the ranks' metadata is more than one MPI gather can carry".into()))?;
    }
    let mut all = vec![0u8; total as usize];
    {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        root.gather_varcount_into_root(bytes, &mut part);
    }
    Ok(counts.iter().zip(&displs).map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec()).collect())
}

/// Every rank learns whether `local` failed anywhere: a rank whose own step failed returns its
/// error, the others an error naming the first failing rank and `what` it was doing.
pub(crate) fn all_ok<T>(comm: &SimpleCommunicator, local: Result<T>, what: &str) -> Result<T> {
    let flag: i32 = if local.is_err() { comm.size() - comm.rank() } else { 0 };
    let mut worst = 0i32;
    comm.all_reduce_into(&flag, &mut worst, SystemOperation::max());
    match local {
        Err(e) => Err(e),
        Ok(_) if worst > 0 => Err(Error::Invalid(format!("rank {} failed to {what} (its own error says why)", comm.size() - worst))),
        Ok(v) => Ok(v),
    }
}

/// Checks that every rank passed the same `parts` (named by `names`, shown in errors as `shown`):
/// the file name, the RNTuple's name, the schema, the options. Refused on every rank, naming the
/// first rank that differs from rank 0 and what differs.
pub(crate) fn agree(comm: &SimpleCommunicator, names: &[&str], parts: &[String], shown: &[String]) -> Result<()> {
    let mut mask = 0i32;
    for (i, p) in parts.iter().enumerate() {
        let theirs = broadcast_bytes(comm, p.as_bytes());
        if theirs != p.as_bytes() {
            mask |= 1 << i;
        }
    }
    let first: i32 = if mask != 0 { comm.rank() } else { comm.size() };
    let (mut first_bad, mut all_mask) = (0i32, 0i32);
    comm.all_reduce_into(&first, &mut first_bad, SystemOperation::min());
    comm.all_reduce_into(&mask, &mut all_mask, SystemOperation::bitwise_or());
    if all_mask == 0 {
        return Ok(());
    }
    let what: Vec<&str> = names.iter().enumerate().filter(|(i, _)| all_mask & (1 << i) != 0).map(|(_, n)| *n).collect();
    let mine = if mask != 0 {
        let i = mask.trailing_zeros() as usize;
        format!(" (this rank's {}: {})", names.get(i).copied().unwrap_or("?"), shown.get(i).map(String::as_str).unwrap_or(""))
    } else {
        String::new()
    };
    Err(Error::Invalid(format!(
        "the ranks disagree on the {}: rank {first_bad} differs from rank 0{mine}; every rank must create the distributed writer with the same file, RNTuple name, schema and options",
        what.join(" and ")
    )))
}

//! Arrow IPC file format (Feather v2) ↔ RNTuple: a record batch per cluster.

use super::arrow_types::{may_hold_nulls, rntuple_schema, NullTree};
use super::from_rntuple::Source;
use super::output::{commit_or_abort, create_temporary, io_err, publish_or_remove, ConvertSummary};
use crate::error::{Error, Result};
use crate::format::compression::{Algorithm, Compression as RootCompression};
use crate::storage::local::file_io::StreamOut;
use crate::write::{WriteOptions, Writer};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

fn ipc_err(path: &Path, e: arrow_schema::ArrowError) -> Error {
    Error::Invalid(format!("Arrow IPC file '{}': {e}", path.display()))
}

fn open_reader(path: &Path, projection: Option<Vec<usize>>) -> Result<FileReader<BufReader<File>>> {
    let f = File::open(path).map_err(|e| io_err("opening", path, e))?;
    FileReader::try_new(BufReader::new(f), projection).map_err(|e| ipc_err(path, e))
}

/// Converts an Arrow IPC file into an RNTuple `name` in a new ROOT file, one cluster per
/// record batch.
pub(crate) fn ipc_to_rntuple(
    input: &Path,
    output: &Path,
    name: &str,
    (compression, same_page_merging): (RootCompression, bool),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let schema = open_reader(input, None)?.schema();
    // A first pass over the columns that may hold nulls (by their type) finds where they do;
    // it also counts the rows, for the progress.
    let scan: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| {
            let f = &schema.fields()[i];
            may_hold_nulls(f.data_type(), f.is_nullable())
        })
        .collect();
    let mut nulls: Vec<NullTree> = schema.fields().iter().map(|f| NullTree::of(f.data_type())).collect();
    let mut total = 0u64;
    for (k, batch) in open_reader(input, Some(scan.clone()))?.enumerate() {
        let batch = batch.map_err(|e| Error::Invalid(format!("Arrow IPC file '{}', record batch {k}: {e}", input.display())))?;
        total += batch.num_rows() as u64;
        for (j, &i) in scan.iter().enumerate() {
            nulls[i].scan(batch.column(j).as_ref())?;
        }
    }
    let rschema = rntuple_schema(&schema, &nulls)?;
    let opts = WriteOptions { compression, same_page_merging, ..WriteOptions::default() };
    let mut w = Writer::create_with_types(output, name, &rschema, opts)?;
    let (mut done, mut batches) = (0u64, 0u64);
    let r = (|| -> Result<()> {
        for (k, batch) in open_reader(input, None)?.enumerate() {
            let batch = batch.map_err(|e| Error::Invalid(format!("Arrow IPC file '{}', record batch {k}: {e}", input.display())))?;
            if batch.num_rows() == 0 {
                continue;
            }
            w.append_batch(&batch)?;
            w.commit_cluster()?;
            done += batch.num_rows() as u64;
            batches += 1;
            progress(done, total.max(done));
        }
        Ok(())
    })();
    commit_or_abort(w, r, ConvertSummary { entries: done, clusters: batches })
}

/// Converts an RNTuple into an Arrow IPC file, one record batch per cluster.
pub(crate) fn rntuple_to_ipc(
    input: &Path,
    output: &Path,
    name: Option<&str>,
    compression: RootCompression,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let src = Source::open(input, name)?;
    let codec = match compression.algorithm() {
        Algorithm::None => None,
        Algorithm::Lz4 => Some(CompressionType::LZ4_FRAME),
        Algorithm::Zlib | Algorithm::Lzma | Algorithm::Zstd => Some(CompressionType::ZSTD),
    };
    let ipc_opts = IpcWriteOptions::default().try_with_compression(codec).map_err(|e| ipc_err(output, e))?;
    let tmp = output.with_extension("arrow.part");
    let out = create_temporary(&tmp)?;
    let handle = out.try_clone().map_err(|e| io_err("duplicating the handle of", &tmp, e))?;
    let r = (|| -> Result<ConvertSummary> {
        let mut w = FileWriter::try_new_with_options(BufWriter::new(StreamOut::new(out)), &src.schema, ipc_opts).map_err(|e| ipc_err(output, e))?;
        let total = src.reader.num_entries();
        let (mut done, mut batches) = (0u64, 0u64);
        for (first, n) in src.clusters() {
            if n == 0 {
                continue;
            }
            w.write(&src.batch(first, first + n)?).map_err(|e| ipc_err(output, e))?;
            done += n;
            batches += 1;
            progress(done, total);
        }
        w.finish().map_err(|e| ipc_err(output, e))?;
        let mut inner = w.into_inner().map_err(|e| ipc_err(output, e))?;
        std::io::Write::flush(&mut inner).map_err(|e| io_err("writing", &tmp, e))?;
        Ok(ConvertSummary { entries: done, clusters: batches })
    })();
    publish_or_remove(&tmp, output, &handle, r)
}

//! Parquet ↔ RNTuple: a row group per cluster, batch by batch.

use super::arrow_types::{may_hold_nulls, rntuple_schema, NullTree};
use super::from_rntuple::Source;
use super::output::{commit_or_abort, create_temporary, io_err, publish_or_remove, ConvertSummary};
use crate::error::{Error, Result};
use crate::format::compression::{Algorithm, Compression as RootCompression};
use crate::storage::local::file_io::StreamOut;
use crate::write::{WriteOptions, Writer};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::Path;

/// Rows per batch read from Parquet and RNTuple sources.
const BATCH_ROWS: usize = 65536;

fn pq_err(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::Invalid(format!("Parquet file '{}': {e}", path.display()))
}

/// Converts a Parquet file into an RNTuple `name` in a new ROOT file.
pub(crate) fn parquet_to_rntuple(
    input: &Path,
    output: &Path,
    name: &str,
    (compression, same_page_merging): (RootCompression, bool),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let file = File::open(input).map_err(|e| io_err("opening", input, e))?;
    let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(|e| pq_err(input, e))?;
    let schema = meta.schema().clone();
    let pq_meta = meta.metadata().clone();
    let total = u64::try_from(pq_meta.file_metadata().num_rows()).unwrap_or(0);
    let reader_for = |groups: Vec<usize>, mask: Option<ProjectionMask>| -> Result<_> {
        let f = file.try_clone().map_err(|e| io_err("opening", input, e))?;
        let mut b = ParquetRecordBatchReaderBuilder::new_with_metadata(f, meta.clone()).with_batch_size(BATCH_ROWS).with_row_groups(groups);
        if let Some(m) = mask {
            b = b.with_projection(m);
        }
        b.build().map_err(|e| pq_err(input, e))
    };

    // Which columns may hold nulls: by their type, unless the statistics of every row group say
    // that none of their leaves has a null (a null at any level leaves a null in every leaf below).
    let descr = pq_meta.file_metadata().schema_descr();
    let n_roots = descr.root_schema().get_fields().len();
    let mut stats_null_free = vec![true; n_roots];
    for rg in pq_meta.row_groups() {
        for (leaf, col) in rg.columns().iter().enumerate() {
            let root = descr.get_column_root_idx(leaf);
            if col.statistics().and_then(|s| s.null_count_opt()) != Some(0)
                && let Some(x) = stats_null_free.get_mut(root)
            {
                *x = false;
            }
        }
    }
    let aligned = n_roots == schema.fields().len();
    let mut nulls: Vec<NullTree> = schema.fields().iter().map(|f| NullTree::of(f.data_type())).collect();
    let scan: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| {
            let f = &schema.fields()[i];
            may_hold_nulls(f.data_type(), f.is_nullable()) && !(aligned && stats_null_free[i])
        })
        .collect();
    if !scan.is_empty() {
        let all_groups: Vec<usize> = (0..pq_meta.num_row_groups()).collect();
        let mask = if aligned { Some(ProjectionMask::roots(descr, scan.iter().copied())) } else { None };
        for batch in reader_for(all_groups, mask)? {
            let batch = batch?;
            for &i in &scan {
                let name = schema.fields()[i].name();
                let col = batch.column_by_name(name).ok_or_else(|| Error::internal(format!("projected Parquet batch lacks column '{name}'")))?;
                nulls[i].scan(col.as_ref())?;
            }
        }
    }
    let rschema = rntuple_schema(&schema, &nulls)?;
    let opts = WriteOptions { compression, same_page_merging, ..WriteOptions::default() };
    let mut w = Writer::create_with_types(output, name, &rschema, opts)?;
    let mut done = 0u64;
    let mut groups = 0u64;
    let r = (|| -> Result<()> {
        for g in 0..pq_meta.num_row_groups() {
            if pq_meta.row_group(g).num_rows() == 0 {
                continue;
            }
            for batch in reader_for(vec![g], None)? {
                let batch = batch.map_err(|e| Error::Invalid(format!("Parquet file '{}', row group {g}: {e}", input.display())))?;
                w.append_batch(&batch)?;
                done += batch.num_rows() as u64;
                progress(done, total);
            }
            w.commit_cluster()?;
            groups += 1;
        }
        Ok(())
    })();
    commit_or_abort(w, r, ConvertSummary { entries: done, clusters: groups })
}

/// Parquet's compression for a ROOT compression setting.
fn parquet_compression(compression: RootCompression) -> Result<Compression> {
    let level = compression.level() as i32;
    Ok(match compression.algorithm() {
        Algorithm::None => Compression::UNCOMPRESSED,
        Algorithm::Zlib => {
            Compression::GZIP(GzipLevel::try_new(level.clamp(1, 9) as u32).map_err(|e| Error::Invalid(format!("compression {compression}: {e}")))?)
        }
        Algorithm::Lz4 => Compression::LZ4_RAW,
        Algorithm::Zstd | Algorithm::Lzma => {
            Compression::ZSTD(ZstdLevel::try_new(level.clamp(1, 22)).map_err(|e| Error::Invalid(format!("compression {compression}: {e}")))?)
        }
    })
}

/// Refuses, before anything is written, the types Parquet cannot hold (unions), naming the field.
fn check_parquet_types(src: &Source) -> Result<()> {
    fn has_union(dt: &DataType) -> bool {
        match dt {
            DataType::Union(..) => true,
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => has_union(f.data_type()),
            DataType::Struct(fs) => fs.iter().any(|f| has_union(f.data_type())),
            _ => false,
        }
    }
    for (f, af) in src.reader.fields().into_iter().zip(src.schema.fields()) {
        if has_union(af.data_type()) {
            return Err(Error::Unsupported(format!(
                "field '{}' of type {}: Parquet has no union type for std::variant; convert to Arrow IPC (.arrow) instead",
                f.name,
                src.reader.display_type(f.id)
            )));
        }
    }
    Ok(())
}

/// Converts an RNTuple into a Parquet file, one row group per cluster.
pub(crate) fn rntuple_to_parquet(
    input: &Path,
    output: &Path,
    name: Option<&str>,
    compression: RootCompression,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let src = Source::open(input, name)?;
    check_parquet_types(&src)?;
    let props = WriterProperties::builder().set_max_row_group_size(usize::MAX).set_compression(parquet_compression(compression)?).build();
    let tmp = output.with_extension("parquet.part");
    let out = create_temporary(&tmp)?;
    let handle = out.try_clone().map_err(|e| io_err("duplicating the handle of", &tmp, e))?;
    let r = (|| -> Result<ConvertSummary> {
        let mut w = ArrowWriter::try_new(std::io::BufWriter::new(StreamOut::new(out)), src.schema.clone(), Some(props)).map_err(|e| pq_err(output, e))?;
        let total = src.reader.num_entries();
        let (mut done, mut groups) = (0u64, 0u64);
        for (first, n) in src.clusters() {
            let mut start = first;
            while start < first + n {
                let stop = (start + BATCH_ROWS as u64).min(first + n);
                w.write(&src.batch(start, stop)?).map_err(|e| pq_err(output, e))?;
                done += stop - start;
                progress(done, total);
                start = stop;
            }
            if n > 0 {
                w.flush().map_err(|e| pq_err(output, e))?;
                groups += 1;
            }
        }
        let mut inner = w.into_inner().map_err(|e| pq_err(output, e))?;
        std::io::Write::flush(&mut inner).map_err(|e| io_err("writing", &tmp, e))?;
        Ok(ConvertSummary { entries: done, clusters: groups })
    })();
    publish_or_remove(&tmp, output, &handle, r)
}

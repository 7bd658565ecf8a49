//! Parquet and Arrow IPC ↔ RNTuple conversion: nested data written by arrow-rs round-trips
//! through an RNTuple, row groups / record batches become clusters and back, and Arrow types
//! without an RNTuple equivalent are refused naming the column.

use arrow_array::builder::{BooleanBuilder, Float32Builder, Float64Builder, Int32Builder, Int8Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{Array, ArrayRef, Date32Array, Int64Array, RecordBatch, UInt16Array};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use rntuple::convert::{convert, ConvertOptions, ConvertSummary};
use rntuple::RNTupleFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rntuple-convert-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir.join(name)
}

fn muon_fields() -> Fields {
    Fields::from(vec![Field::new("pt", DataType::Float32, true), Field::new("q", DataType::Int8, true)])
}

/// Rows `first..first + n` of nested data: every Arrow field nullable (as pyarrow makes them), but
/// only `opt`, `ostr`, `olist` and the items of `oitems` hold nulls.
fn nested_batch(first: usize, n: usize) -> RecordBatch {
    let ids = Int64Array::from_iter_values((first..first + n).map(|i| i as i64 * 1000 - 7));
    let small = UInt16Array::from_iter_values((first..first + n).map(|i| (i * 3) as u16));
    let mut x = Float32Builder::new();
    let mut opt = Int32Builder::new();
    let mut name = StringBuilder::new();
    let mut ostr = StringBuilder::new();
    let mut flag = BooleanBuilder::new();
    let mut muons = ListBuilder::new(StructBuilder::new(muon_fields(), vec![Box::new(Float32Builder::new()), Box::new(Int8Builder::new())]));
    let mut ll = ListBuilder::new(ListBuilder::new(Float64Builder::new()));
    let mut olist = ListBuilder::new(Int32Builder::new());
    let mut oitems = ListBuilder::new(Float64Builder::new());
    for i in first..first + n {
        x.append_value(i as f32 * 0.5);
        if i % 3 == 0 {
            opt.append_null()
        } else {
            opt.append_value(i as i32 - 50)
        }
        name.append_value(format!("entry-{i}-{}", "é".repeat(i % 4)));
        if i % 5 == 1 {
            ostr.append_null()
        } else {
            ostr.append_value("x".repeat(i % 7))
        }
        flag.append_value(i % 2 == 0);
        let s = muons.values();
        for k in 0..(i % 4) {
            s.field_builder::<Float32Builder>(0).expect("pt builder").append_value(10.0 + k as f32 + i as f32);
            s.field_builder::<Int8Builder>(1).expect("q builder").append_value(if k % 2 == 0 { 1 } else { -1 });
            s.append(true);
        }
        muons.append(true);
        for k in 0..(i % 3) {
            for j in 0..k + (i % 2) {
                ll.values().values().append_value((i * 100 + k * 10 + j) as f64);
            }
            ll.values().append(true);
        }
        ll.append(true);
        if i % 4 == 2 {
            olist.append(false)
        } else {
            for k in 0..(i % 3) {
                olist.values().append_value(k as i32 - i as i32);
            }
            olist.append(true)
        }
        for k in 0..(i % 3) {
            if (i + k) % 2 == 0 {
                oitems.values().append_null()
            } else {
                oitems.values().append_value(k as f64 / 4.0)
            }
        }
        oitems.append(true);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(ids),
        Arc::new(small),
        Arc::new(x.finish()),
        Arc::new(opt.finish()),
        Arc::new(name.finish()),
        Arc::new(ostr.finish()),
        Arc::new(flag.finish()),
        Arc::new(muons.finish()),
        Arc::new(ll.finish()),
        Arc::new(olist.finish()),
        Arc::new(oitems.finish()),
    ];
    let names = ["id", "small", "x", "opt", "name", "ostr", "flag", "muons", "ll", "olist", "oitems"];
    let fields: Vec<Field> = names.iter().zip(&cols).map(|(n, c)| Field::new(*n, c.data_type().clone(), true)).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).expect("test batch")
}

const GROUPS: [usize; 3] = [100, 37, 250];

fn batches() -> Vec<RecordBatch> {
    let mut first = 0;
    GROUPS
        .iter()
        .map(|&n| {
            let b = nested_batch(first, n);
            first += n;
            b
        })
        .collect()
}

/// Casts a batch read back to the original schema (the reader gives large lists and strings) and
/// compares it with the original, column by column.
fn assert_same(original: &RecordBatch, back: &RecordBatch, what: &str) {
    assert_eq!(back.num_rows(), original.num_rows(), "{what}: rows");
    let (back_schema, schema) = (back.schema(), original.schema());
    let names: Vec<&str> = back_schema.fields().iter().map(|f| f.name().as_str()).collect();
    let want: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, want, "{what}: columns");
    for (i, f) in original.schema().fields().iter().enumerate() {
        let cast = arrow_cast::cast(back.column(i), f.data_type()).unwrap_or_else(|e| panic!("{what}: casting column '{}': {e}", f.name()));
        assert_eq!(cast.to_data(), original.column(i).to_data(), "{what}: column '{}'", f.name());
    }
}

fn check_rntuple(path: &Path) {
    let f = RNTupleFile::open(path).expect("converted file");
    let r = f.reader("Events").expect("RNTuple Events");
    assert_eq!(r.num_entries(), GROUPS.iter().sum::<usize>() as u64);
    let sizes: Vec<u64> = r.descriptor().clusters.iter().map(|c| c.n_entries).collect();
    assert_eq!(sizes, GROUPS.iter().map(|&n| n as u64).collect::<Vec<_>>(), "one cluster per row group / record batch");
    let types: Vec<(String, String)> = r.fields().iter().map(|f| (f.name.clone(), r.display_type(f.id))).collect();
    let want = [
        ("id", "std::int64_t"),
        ("small", "std::uint16_t"),
        ("x", "float"),
        ("opt", "std::optional<std::int32_t>"),
        ("name", "std::string"),
        ("ostr", "std::optional<std::string>"),
        ("flag", "bool"),
        ("muons", "(untyped collection)"),
        ("ll", "std::vector<std::vector<double>>"),
        ("olist", "std::optional<std::vector<std::int32_t>>"),
        ("oitems", "std::vector<std::optional<double>>"),
    ];
    let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(types, want);
}

fn concat(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).expect("concatenation")
}

#[test]
fn parquet_round_trip_nested() {
    let input = batches();
    let pq = tmp("in.parquet");
    let props = WriterProperties::builder().set_max_row_group_size(1 << 20).build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(&pq).expect("parquet file"), input[0].schema(), Some(props)).expect("writer");
    for b in &input {
        w.write(b).expect("write");
        w.flush().expect("row group");
    }
    w.close().expect("close");

    let root = tmp("from-parquet.root");
    let mut seen = Vec::new();
    let s = rntuple::convert::convert_with_progress(&pq, &root, &ConvertOptions::default(), &mut |d, t| seen.push((d, t))).expect("parquet -> rntuple");
    assert_eq!(s, ConvertSummary { entries: 387, clusters: 3 });
    assert_eq!(seen.last(), Some(&(387, 387)));
    check_rntuple(&root);

    let back = tmp("back.parquet");
    let s =
        convert(&root, &back, &ConvertOptions { ntuple: Some("Events".into()), compression: rntuple::write::Compression::lz4(4), ..ConvertOptions::default() })
            .expect("rntuple -> parquet");
    assert_eq!(s, ConvertSummary { entries: 387, clusters: 3 });
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&back).expect("output")).expect("parquet reader");
    let groups: Vec<i64> = b.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
    assert_eq!(groups, vec![100, 37, 250], "one row group per cluster");
    let read: Vec<RecordBatch> = b.with_batch_size(1000).build().expect("reader").collect::<Result<_, _>>().expect("batches");
    assert_same(&concat(&input), &concat(&read), "parquet round trip");
}

#[test]
fn ipc_round_trip_nested() {
    let input = batches();
    let ipc = tmp("in.arrow");
    let mut w = arrow_ipc::writer::FileWriter::try_new(std::fs::File::create(&ipc).expect("ipc file"), &input[0].schema()).expect("writer");
    for b in &input {
        w.write(b).expect("write");
    }
    w.finish().expect("finish");

    let root = tmp("from-ipc.root");
    let s = convert(&ipc, &root, &ConvertOptions::default()).expect("ipc -> rntuple");
    assert_eq!(s, ConvertSummary { entries: 387, clusters: 3 });
    check_rntuple(&root);

    let back = tmp("back.feather");
    let s = convert(&root, &back, &ConvertOptions::default()).expect("rntuple -> ipc");
    assert_eq!(s, ConvertSummary { entries: 387, clusters: 3 });
    let r = arrow_ipc::reader::FileReader::try_new(std::fs::File::open(&back).expect("output"), None).expect("ipc reader");
    let read: Vec<RecordBatch> = r.collect::<Result<_, _>>().expect("batches");
    assert_eq!(read.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), vec![100, 37, 250], "one record batch per cluster");
    assert_same(&concat(&input), &concat(&read), "ipc round trip");
}

fn one_column_parquet(name: &str, col: ArrayRef) -> PathBuf {
    let schema: SchemaRef = Arc::new(Schema::new(vec![Field::new("ok", DataType::Int32, false), Field::new(name, col.data_type().clone(), true)]));
    let ok: ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![1; col.len()]));
    let batch = RecordBatch::try_new(schema.clone(), vec![ok, col]).expect("batch");
    let path = tmp(&format!("{name}.parquet"));
    let mut w = ArrowWriter::try_new(std::fs::File::create(&path).expect("file"), schema, None).expect("writer");
    w.write(&batch).expect("write");
    w.close().expect("close");
    path
}

#[test]
fn unsupported_types_name_the_column() {
    let dates = one_column_parquet("day", Arc::new(Date32Array::from(vec![1, 2, 3])));
    let err = convert(&dates, &tmp("day.root"), &ConvertOptions::default()).expect_err("dates are refused").to_string();
    assert!(err.contains("column 'day': Arrow type Date32 has no RNTuple equivalent"), "{err}");
    assert!(!tmp("day.root").exists(), "nothing written");

    let item = Field::new("item", DataType::Date32, true);
    let nested = arrow_array::ListArray::new(Arc::new(item), arrow_buffer::OffsetBuffer::new(vec![0, 1, 1].into()), Arc::new(Date32Array::from(vec![5])), None);
    let lists = one_column_parquet("days", Arc::new(nested));
    let err = convert(&lists, &tmp("days.root"), &ConvertOptions::default()).expect_err("lists of dates are refused").to_string();
    assert!(err.contains("column 'days._0': Arrow type Date32"), "{err}");

    let err = convert(&dates, &tmp("x.csv"), &ConvertOptions::default()).expect_err("unknown extension").to_string();
    assert!(err.contains("unknown file format (extension 'csv')"), "{err}");
    let err = convert(&tmp("a.root"), &tmp("b.root"), &ConvertOptions::default()).expect_err("root to root").to_string();
    assert!(err.contains("a TTree is converted by the Python package"), "{err}");
}

#[test]
fn fixed_size_lists_of_structs_keep_member_names() {
    // Two muons per entry: a fixed-size list of structs, written as std::array of a class named
    // after the column (ROOT has no std::array of an untyped record), read back as the same structs.
    let n = 5;
    let mut muons = StructBuilder::from_fields(muon_fields(), 2 * n);
    for i in 0..2 * n {
        muons.field_builder::<Float32Builder>(0).expect("pt").append_value(i as f32 * 0.5);
        muons.field_builder::<Int8Builder>(1).expect("q").append_value(if i % 2 == 0 { 1 } else { -1 });
        muons.append(true);
    }
    let item = Arc::new(Field::new("item", DataType::Struct(muon_fields()), true));
    let pairs = arrow_array::FixedSizeListArray::new(item, 2, Arc::new(muons.finish()), None);
    let pq = one_column_parquet("pair", Arc::new(pairs));
    let root = tmp("pair.root");
    convert(&pq, &root, &ConvertOptions::default()).expect("parquet -> rntuple");

    let f = RNTupleFile::open(&root).expect("converted file");
    let r = f.reader("Events").expect("RNTuple Events");
    let fields = r.fields();
    let pair = fields.iter().find(|f| f.name == "pair").expect("field pair");
    let ty = r.display_type(pair.id);
    assert!(ty.starts_with("std::array<Rec_pair__0_") && ty.ends_with(",2>"), "{ty}");
    let members: Vec<String> = r.descriptor().fields.iter().filter(|f| f.name == "pt" || f.name == "q").map(|f| f.name.clone()).collect();
    assert_eq!(members, ["pt", "q"]);

    let back = tmp("pair-back.parquet");
    convert(&root, &back, &ConvertOptions { ntuple: Some("Events".into()), ..ConvertOptions::default() }).expect("rntuple -> parquet");
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&back).expect("output")).expect("parquet reader");
    let read: Vec<RecordBatch> = b.build().expect("reader").collect::<Result<_, _>>().expect("batches");
    let original = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&pq).expect("input")).expect("reader").build().expect("reader");
    let original: Vec<RecordBatch> = original.collect::<Result<_, _>>().expect("batches");
    assert_same(&concat(&original), &concat(&read), "fixed-size list of structs");
}

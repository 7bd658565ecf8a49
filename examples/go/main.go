// Command rntuple-go-sum reads fields of an RNTuple through rntuple's C ABI alone (include/rntuple.h,
// librntuple_c) as an Arrow C stream, imported with arrow-go's cdata package, and prints as JSON the
// entry count and, per field, the sum of its values: a list field (std::vector<float>) sums the
// values inside its lists.
//
//	rntuple-go-sum [-ntuple Events] [-batch N] file.root field...
package main

/*
#include <stdlib.h>
#include "rntuple.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
)

// rntuple_last_error is the message of the calling OS thread, and goroutines may move between
// threads: main stays on one.
func init() { runtime.LockOSThread() }

// check turns a status of the C ABI into an error: its name and rntuple_last_error(), which names
// the call.
func check(status C.int32_t) error {
	if status == C.RNTUPLE_OK {
		return nil
	}
	return fmt.Errorf("%s: %s", C.GoString(C.rntuple_status_name(status)), C.GoString(C.rntuple_last_error()))
}

// jsonFloat is a float64 that a NaN or infinite sum does not keep from being printed.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64)) // "NaN", "+Inf", "-Inf"
	}
	return json.Marshal(v)
}

type fieldSum struct {
	Sum    jsonFloat `json:"sum"`
	Values int64     `json:"values"` // the numbers added: one per entry, or the list items of a list field
}

type result struct {
	File    string              `json:"file"`
	Entries uint64              `json:"entries"`
	Batches int                 `json:"batches"`
	Fields  map[string]fieldSum `json:"fields"`
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

type numbers[T number] interface {
	IsNull(i int) bool
	Value(i int) T
}

func sumOf[T number](a numbers[T], from, to int) (total float64, n int64) {
	for i := from; i < to; i++ {
		if !a.IsNull(i) {
			total += float64(a.Value(i))
			n++
		}
	}
	return total, n
}

// sum adds the values a[from:to] (their items, for lists, at any depth), nulls left out.
func sum(a arrow.Array, from, to int) (float64, int64, error) {
	switch a := a.(type) {
	case array.ListLike: // list, large_list, fixed_size_list, list views
		var total float64
		var n int64
		for i := from; i < to; i++ {
			if a.IsNull(i) {
				continue
			}
			start, end := a.ValueOffsets(i)
			s, k, err := sum(a.ListValues(), int(start), int(end))
			if err != nil {
				return 0, 0, err
			}
			total, n = total+s, n+k
		}
		return total, n, nil
	case *array.Int8:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Int16:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Int32:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Int64:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Uint8:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Uint16:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Uint32:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Uint64:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Float32:
		s, n := sumOf(a, from, to)
		return s, n, nil
	case *array.Float64:
		s, n := sumOf(a, from, to)
		return s, n, nil
	}
	return 0, 0, fmt.Errorf("values of type %s are not numbers", a.DataType())
}

// cStrings copies names into a C array of C strings (cgo passes no Go memory holding Go pointers).
func cStrings(names []string) (**C.char, func()) {
	ptrs := unsafe.Slice((**C.char)(C.malloc(C.size_t(len(names))*C.size_t(unsafe.Sizeof((*C.char)(nil))))), len(names))
	for i, s := range names {
		ptrs[i] = C.CString(s)
	}
	return &ptrs[0], func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&ptrs[0]))
	}
}

func run(path, ntuple string, fields []string, batch uint64) (*result, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cntuple *C.char // NULL: the file's only RNTuple
	if ntuple != "" {
		cntuple = C.CString(ntuple)
		defer C.free(unsafe.Pointer(cntuple))
	}
	var reader C.uint64_t
	if err := check(C.rntuple_open(cpath, cntuple, &reader)); err != nil {
		return nil, err
	}
	defer C.rntuple_reader_free(reader) // the stream keeps what it reads from

	var entries C.uint64_t
	if err := check(C.rntuple_reader_entries(reader, &entries)); err != nil {
		return nil, err
	}

	cfields, free := cStrings(fields)
	defer free()
	var stream C.struct_ArrowArrayStream
	status := C.rntuple_reader_stream(reader, cfields, C.size_t(len(fields)), 0, math.MaxUint64, C.uint64_t(batch), &stream)
	if err := check(status); err != nil {
		return nil, err
	}
	// The importer moves the stream into C memory of its own (ours is left released) and releases
	// it with the reader, or before returning an error.
	imported, err := cdata.ImportCRecordReader((*cdata.CArrowArrayStream)(unsafe.Pointer(&stream)), nil)
	if err != nil {
		return nil, fmt.Errorf("importing the Arrow stream: %w", err)
	}
	rr, ok := imported.(array.RecordReader)
	if !ok {
		return nil, errors.New("arrow-go's imported stream is not an array.RecordReader")
	}
	defer rr.Release()

	res := &result{File: path, Entries: uint64(entries), Fields: map[string]fieldSum{}}
	columns := make([]int, len(fields))
	for i, name := range fields {
		idx := rr.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("field %q: not in the stream's schema %s", name, rr.Schema())
		}
		columns[i] = idx[0]
		res.Fields[name] = fieldSum{}
	}
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		rows += rec.NumRows()
		res.Batches++
		for i, name := range fields {
			col := rec.Column(columns[i])
			s, n, err := sum(col, 0, col.Len())
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", name, err)
			}
			f := res.Fields[name]
			res.Fields[name] = fieldSum{Sum: f.Sum + jsonFloat(s), Values: f.Values + n}
		}
	}
	if err := rr.Err(); err != nil {
		return nil, fmt.Errorf("reading the Arrow stream: %w", err)
	}
	if uint64(rows) != res.Entries {
		return nil, fmt.Errorf("the stream gave %d entries of %d", rows, res.Entries)
	}
	return res, nil
}

func main() {
	ntuple := flag.String("ntuple", "", "the RNTuple to read (default: the file's only one)")
	batch := flag.Uint64("batch", 0, "entries per record batch (0: one batch per cluster)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: rntuple-go-sum [-ntuple NAME] [-batch N] FILE FIELD...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	res, err := run(flag.Arg(0), *ntuple, flag.Args()[1:], *batch)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rntuple-go-sum:", err)
		os.Exit(1)
	}
	if live := C.rntuple_live_handles(); live != 0 {
		fmt.Fprintf(os.Stderr, "rntuple-go-sum: %d handles left open\n", live)
		os.Exit(1)
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rntuple-go-sum:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

// rntuple.hpp: a header-only C++17 layer over the C ABI (rntuple.h): RAII handles, exceptions
// that carry the library's message and status, typed setters, and EntryBinder, which fills a
// struct of scalars, strings and std::vectors per entry (what an output module does). Reading entry
// by entry (views, EntryLoader, Reader::load) is in rntuple_view.hpp, included at the end.
//
//   rntuple::ParallelWriter w("out.root", "Events", R"({"pt": "float", "jets": "std::vector<float>"})");
//   std::thread t([&] {
//     rntuple::FillContext ctx = w.fill_context();
//     rntuple::EntryBinder<Event> bind(ctx);
//     bind.field("pt", &Event::pt).field("jets", &Event::jets);
//     for (const Event& e : events) bind.fill(e);
//     ctx.finish();
//   });
//   t.join();
//   w.commit();
#ifndef RNTUPLE_HPP
#define RNTUPLE_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#define RNTUPLE_HPP_SPAN 1
#endif

#include "rntuple.h"

namespace rntuple {

/// A failed call: the status code (RNTUPLE_ERR_*) and the library's message.
class Error : public std::runtime_error {
 public:
  Error(int32_t status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int32_t status() const noexcept { return status_; }

 private:
  int32_t status_;
};

namespace detail {
inline void check(int32_t status) {
  if (status != RNTUPLE_OK) throw Error(status, rntuple_last_error());
}

/// A string the library writes into a buffer: asked once with a guess, again at the right size.
template <class F>
std::string text(F&& call) {
  std::string s(64, '\0');
  size_t len = 0;
  int32_t st = call(s.data(), s.size(), &len);
  if (st == RNTUPLE_ERR_BUFFER) {
    s.assign(len + 1, '\0');
    st = call(s.data(), s.size(), &len);
  }
  check(st);
  s.resize(len);
  return s;
}

/// A handle freed by `Free` when its owner goes.
template <int32_t (*Free)(uint64_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(uint64_t h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, 0)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, 0);
    }
    return *this;
  }
  ~Handle() { reset(); }
  uint64_t get() const noexcept { return h_; }
  void reset() noexcept {
    if (h_) Free(h_);
    h_ = 0;
  }

 private:
  uint64_t h_ = 0;
};

/// The RNTUPLE_TYPE_* code of a fundamental C++ type (0 for others).
template <class T>
constexpr uint32_t type_code() {
  if constexpr (std::is_same_v<T, bool>) return RNTUPLE_TYPE_BOOL;
  else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, int8_t>) return RNTUPLE_TYPE_I8;
  else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, std::byte>) return RNTUPLE_TYPE_U8;
  else if constexpr (std::is_same_v<T, int16_t>) return RNTUPLE_TYPE_I16;
  else if constexpr (std::is_same_v<T, uint16_t>) return RNTUPLE_TYPE_U16;
  else if constexpr (std::is_same_v<T, int32_t>) return RNTUPLE_TYPE_I32;
  else if constexpr (std::is_same_v<T, uint32_t>) return RNTUPLE_TYPE_U32;
  else if constexpr (std::is_same_v<T, int64_t>) return RNTUPLE_TYPE_I64;
  else if constexpr (std::is_same_v<T, uint64_t>) return RNTUPLE_TYPE_U64;
  else if constexpr (std::is_same_v<T, float>) return RNTUPLE_TYPE_F32;
  else if constexpr (std::is_same_v<T, double>) return RNTUPLE_TYPE_F64;
  else return 0;
}
}  // namespace detail

/// Write options by name (ROOT's RNTupleWriteOptions in snake case), ROOT's defaults otherwise.
class Options {
 public:
  Options() {
    uint64_t h = 0;
    detail::check(rntuple_write_options_new(&h));
    h_ = detail::Handle<rntuple_write_options_free>(h);
  }
  Options& set(const std::string& name, const std::string& value) {
    detail::check(rntuple_write_options_set(h_.get(), name.c_str(), value.c_str()));
    return *this;
  }
  Options& set(const std::string& name, uint64_t value) { return set(name, std::to_string(value)); }
  Options& half(const std::string& field) {
    detail::check(rntuple_write_options_half(h_.get(), field.c_str()));
    return *this;
  }
  Options& truncate(const std::string& field, unsigned bits) {
    detail::check(rntuple_write_options_truncate(h_.get(), field.c_str(), bits));
    return *this;
  }
  Options& quantize(const std::string& field, double min, double max, unsigned bits) {
    detail::check(rntuple_write_options_quantize(h_.get(), field.c_str(), min, max, bits));
    return *this;
  }
  std::string get(const std::string& name) const {
    return detail::text([&](char* b, size_t c, size_t* l) { return rntuple_write_options_get(h_.get(), name.c_str(), b, c, l); });
  }
  uint64_t handle() const noexcept { return h_.get(); }

 private:
  detail::Handle<rntuple_write_options_free> h_;
};

/// A ROOT file open for reading, to open several of its RNTuples (Reader(file, name)) or to read it
/// through a memory map (File::mapped).
class File {
 public:
  /// The file at `path` (a path or URL), read with pread (a URL: with HTTP or S3 requests).
  explicit File(const std::string& path) {
    uint64_t h = 0;
    detail::check(rntuple_file_open(path.c_str(), &h));
    h_ = detail::Handle<rntuple_file_free>(h);
  }
  /// The local file at `path` through a read-only memory map (rntuple_file_open_mapped): pages are decompressed
  /// straight out of the page cache. The file must not shrink or change while this File or a Reader opened from
  /// it lives (SIGBUS otherwise).
  static File mapped(const std::string& path) {
    uint64_t h = 0;
    detail::check(rntuple_file_open_mapped(path.c_str(), &h));
    return File(detail::Handle<rntuple_file_free>(h));
  }
  /// The paths of its RNTuples, in key order.
  std::vector<std::string> ntuples() const {
    size_t n = 0;
    detail::check(rntuple_file_ntuple_count(h_.get(), &n));
    std::vector<std::string> out;
    for (size_t i = 0; i < n; i++)
      out.push_back(detail::text([&](char* b, size_t c, size_t* l) { return rntuple_file_ntuple_name(h_.get(), i, b, c, l); }));
    return out;
  }
  uint64_t handle() const noexcept { return h_.get(); }

 private:
  explicit File(detail::Handle<rntuple_file_free> h) : h_(std::move(h)) {}
  detail::Handle<rntuple_file_free> h_;
};

template <class T>
class View;

/// One RNTuple open for reading.
class Reader {
 public:
  /// The RNTuple `ntuple` of the file at `path` (a path or URL); empty: the file's only one.
  explicit Reader(const std::string& path, const std::string& ntuple = "") {
    uint64_t h = 0;
    detail::check(rntuple_open(path.c_str(), ntuple.empty() ? nullptr : ntuple.c_str(), &h));
    h_ = detail::Handle<rntuple_reader_free>(h);
  }
  /// The RNTuple `ntuple` of an open file; empty: the file's only one. The reader stays valid after the File goes.
  explicit Reader(const File& file, const std::string& ntuple = "") {
    uint64_t h = 0;
    detail::check(rntuple_reader_open(file.handle(), ntuple.empty() ? nullptr : ntuple.c_str(), &h));
    h_ = detail::Handle<rntuple_reader_free>(h);
  }
  /// The RNTuple `ntuple` of the local file at `path` read through a memory map (File::mapped: the file must not
  /// shrink or change while the reader lives).
  static Reader mapped(const std::string& path, const std::string& ntuple = "") { return Reader(File::mapped(path), ntuple); }
  uint64_t entries() const {
    uint64_t n = 0;
    detail::check(rntuple_reader_entries(h_.get(), &n));
    return n;
  }
  /// Readable top-level fields: (name, ROOT type name).
  std::vector<std::pair<std::string, std::string>> fields() const {
    size_t n = 0;
    detail::check(rntuple_reader_field_count(h_.get(), &n));
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < n; i++) {
      out.emplace_back(detail::text([&](char* b, size_t c, size_t* l) { return rntuple_reader_field_name(h_.get(), i, b, c, l); }),
                       detail::text([&](char* b, size_t c, size_t* l) { return rntuple_reader_field_type(h_.get(), i, b, c, l); }));
    }
    return out;
  }
  /// Clusters: (first entry, number of entries).
  std::vector<std::pair<uint64_t, uint64_t>> clusters() const {
    size_t n = 0;
    detail::check(rntuple_reader_cluster_count(h_.get(), &n));
    std::vector<std::pair<uint64_t, uint64_t>> out(n);
    for (size_t i = 0; i < n; i++) detail::check(rntuple_reader_cluster(h_.get(), i, &out[i].first, &out[i].second));
    return out;
  }
  /// An Arrow stream of the fields (all when empty) of entries [start, stop), batches of
  /// `batch_size` entries (0: per cluster). The caller releases it.
  ArrowArrayStream stream(const std::vector<std::string>& fields = {}, uint64_t start = 0, uint64_t stop = UINT64_MAX,
                          uint64_t batch_size = 0) const {
    std::vector<const char*> names;
    for (const auto& f : fields) names.push_back(f.c_str());
    ArrowArrayStream s{};
    detail::check(rntuple_reader_stream(h_.get(), names.empty() ? nullptr : names.data(), names.size(), start, stop, batch_size, &s));
    return s;
  }
  /// Bulk reads: the elements column `column` of `field` (a dotted path, "muons._0.pt"; column 0 of a
  /// leaf or of a collection's or string's offsets, 1 of a string's chars) holds in clusters
  /// [cluster_begin, cluster_end): what a buffer for read_column() must hold.
  uint64_t column_elements(const std::string& field, size_t cluster_begin, size_t cluster_end, uint32_t column = 0) const {
    uint64_t n = 0;
    detail::check(rntuple_reader_column_elements(h_.get(), field.c_str(), column, cluster_begin, cluster_end, &n, nullptr, nullptr));
    return n;
  }
  /// The RNTUPLE_TYPE_* code of the column's elements (RNTUPLE_TYPE_U64 for offsets, RNTUPLE_TYPE_I8 for chars).
  uint32_t column_type(const std::string& field, uint32_t column = 0) const {
    uint32_t code = 0;
    detail::check(rntuple_reader_column_elements(h_.get(), field.c_str(), column, 0, 0, nullptr, nullptr, &code));
    return code;
  }
  /// Decodes the column over clusters [cluster_begin, cluster_end) into out[0, n) and returns n; `T`
  /// must be the column's element type (offsets: uint64_t end offsets, global over the range). The
  /// reader keeps its decompression scratch, so a loop over clusters into one buffer allocates nothing.
  template <class T>
  uint64_t read_column(const std::string& field, size_t cluster_begin, size_t cluster_end, T* out, size_t n_out, uint32_t column = 0) const {
    static_assert(detail::type_code<T>() != 0, "read_column: bool, an 8- to 64-bit integer, float or double");
    check_type<T>("read_column", field, column);
    uint64_t n = 0;
    detail::check(rntuple_reader_read_column(h_.get(), field.c_str(), column, cluster_begin, cluster_end, out, n_out * sizeof(T), &n));
    return n;
  }
  /// Decodes elements [first, first + n_out) of the column in cluster `cluster` (indices within the cluster) into
  /// out[0, n_out) and returns n_out; `T` as for read_column(), but offsets are uint64_t end offsets local to the
  /// cluster. Chunks between consecutive column_page_ends() (from 0) decode every page once, so a buffer of the
  /// largest page reused from chunk to chunk stays in the processor's cache.
  template <class T>
  uint64_t read_column_range(const std::string& field, size_t cluster, uint64_t first, T* out, size_t n_out, uint32_t column = 0) const {
    static_assert(detail::type_code<T>() != 0, "read_column_range: bool, an 8- to 64-bit integer, float or double");
    check_type<T>("read_column_range", field, column);
    uint64_t n = 0;
    detail::check(rntuple_reader_read_column_range(h_.get(), field.c_str(), column, cluster, first, n_out, out, n_out * sizeof(T), &n));
    return n;
  }
  /// Where the column's pages end in cluster `cluster`: element indices within the cluster, ascending, the last
  /// the cluster's element count (column_elements(field, cluster, cluster + 1)).
  std::vector<uint64_t> column_page_ends(const std::string& field, size_t cluster, uint32_t column = 0) const {
    std::vector<uint64_t> ends(16);
    size_t n = 0;
    int32_t st = rntuple_reader_column_page_ends(h_.get(), field.c_str(), column, cluster, ends.data(), ends.size(), &n);
    if (st == RNTUPLE_ERR_BUFFER) {
      ends.resize(n);
      st = rntuple_reader_column_page_ends(h_.get(), field.c_str(), column, cluster, ends.data(), ends.size(), &n);
    }
    detail::check(st);
    ends.resize(n);
    return ends;
  }
#ifdef RNTUPLE_HPP_SPAN
  /// read_column() into a std::span (C++20).
  template <class T>
  uint64_t read_column(const std::string& field, size_t cluster_begin, size_t cluster_end, std::span<T> out, uint32_t column = 0) const {
    return read_column(field, cluster_begin, cluster_end, out.data(), out.size(), column);
  }
  /// read_column_range() of out.size() elements into a std::span (C++20).
  template <class T>
  uint64_t read_column_range(const std::string& field, size_t cluster, uint64_t first, std::span<T> out, uint32_t column = 0) const {
    return read_column_range(field, cluster, first, out.data(), out.size(), column);
  }
#endif
  /// A view of `field` read entry by entry as T (rntuple_view.hpp): float, std::vector<float>, std::string, ...
  template <class T>
  View<T> view(const std::string& field) const;
  /// Entry `entry` into `s`, the members rntuple::Members<S> binds (rntuple_view.hpp).
  template <class S>
  void load(uint64_t entry, S& s) const;
  uint64_t handle() const noexcept { return h_.get(); }

 private:
  /// Throws unless the column's elements are `T`s (`what` names the caller in the message).
  template <class T>
  void check_type(const char* what, const std::string& field, uint32_t column) const {
    uint32_t code = 0;
    detail::check(rntuple_reader_column_elements(h_.get(), field.c_str(), column, 0, 0, nullptr, nullptr, &code));
    if (code != detail::type_code<T>())
      throw Error(RNTUPLE_ERR_INVALID_ARGUMENT, std::string(what) + ": field '" + field + "' column " + std::to_string(column) +
                                                    " holds elements of type code " + std::to_string(code) + ", not of this buffer's type");
  }
  detail::Handle<rntuple_reader_free> h_;
};

namespace detail {
/// Entries gathered on the caller's side (by an EntryBinder), handed over by flush().
class Gathered {
 public:
  virtual void flush() = 0;

 protected:
  ~Gathered() = default;
};
}  // namespace detail

/// The typed setters of a writer or fill context: set each field of an entry, then fill().
class EntryTarget {
 public:
  /// The setters' slot of a top-level field.
  uint32_t field(const std::string& name) const {
    uint32_t slot = 0;
    detail::check(rntuple_entry_field(target(), name.c_str(), &slot));
    return slot;
  }
  void set(uint32_t slot, bool v) const { detail::check(rntuple_entry_set_bool(t(), slot, v)); }
  void set(uint32_t slot, int8_t v) const { detail::check(rntuple_entry_set_i8(t(), slot, v)); }
  void set(uint32_t slot, uint8_t v) const { detail::check(rntuple_entry_set_u8(t(), slot, v)); }
  void set(uint32_t slot, int16_t v) const { detail::check(rntuple_entry_set_i16(t(), slot, v)); }
  void set(uint32_t slot, uint16_t v) const { detail::check(rntuple_entry_set_u16(t(), slot, v)); }
  void set(uint32_t slot, int32_t v) const { detail::check(rntuple_entry_set_i32(t(), slot, v)); }
  void set(uint32_t slot, uint32_t v) const { detail::check(rntuple_entry_set_u32(t(), slot, v)); }
  void set(uint32_t slot, int64_t v) const { detail::check(rntuple_entry_set_i64(t(), slot, v)); }
  void set(uint32_t slot, uint64_t v) const { detail::check(rntuple_entry_set_u64(t(), slot, v)); }
  void set(uint32_t slot, float v) const { detail::check(rntuple_entry_set_f32(t(), slot, v)); }
  void set(uint32_t slot, double v) const { detail::check(rntuple_entry_set_f64(t(), slot, v)); }
  void set(uint32_t slot, std::string_view v) const { detail::check(rntuple_entry_set_string(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::string& v) const { set(slot, std::string_view(v)); }
  void set(uint32_t slot, const std::vector<int8_t>& v) const { detail::check(rntuple_entry_set_vec_i8(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<uint8_t>& v) const { detail::check(rntuple_entry_set_vec_u8(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<int16_t>& v) const { detail::check(rntuple_entry_set_vec_i16(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<uint16_t>& v) const { detail::check(rntuple_entry_set_vec_u16(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<int32_t>& v) const { detail::check(rntuple_entry_set_vec_i32(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<uint32_t>& v) const { detail::check(rntuple_entry_set_vec_u32(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<int64_t>& v) const { detail::check(rntuple_entry_set_vec_i64(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<uint64_t>& v) const { detail::check(rntuple_entry_set_vec_u64(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<float>& v) const { detail::check(rntuple_entry_set_vec_f32(t(), slot, v.data(), v.size())); }
  void set(uint32_t slot, const std::vector<double>& v) const { detail::check(rntuple_entry_set_vec_f64(t(), slot, v.data(), v.size())); }
  /// std::vector<bool> is packed: copied into bools first.
  void set(uint32_t slot, const std::vector<bool>& v) const {
    std::vector<unsigned char> tmp(v.begin(), v.end());
    detail::check(rntuple_entry_set_vec_bool(t(), slot, reinterpret_cast<const bool*>(tmp.data()), tmp.size()));
  }
  /// Ends the entry (every field set).
  void fill() const { detail::check(rntuple_entry_fill(t())); }
  /// The writer's or fill context's handle.
  uint64_t handle() const { return target(); }
  /// Hands over the entries the EntryBinders of this target gathered; every call of the target
  /// that adds entries or ends them (set, fill, append, flush_cluster, finish, entries, checkpoint,
  /// commit) does it first, so entries keep their order.
  void flush_gathered() const {
    for (detail::Gathered* g : gathered_) g->flush();
  }
  /// An EntryBinder of this target (it detaches itself when it goes).
  void attach(detail::Gathered* g) const { gathered_.push_back(g); }
  void detach(detail::Gathered* g) const noexcept {
    for (size_t k = 0; k < gathered_.size(); k++)
      if (gathered_[k] == g) {
        gathered_.erase(gathered_.begin() + static_cast<std::ptrdiff_t>(k));
        return;
      }
  }

 protected:
  virtual uint64_t target() const = 0;
  /// The handle, after the gathered entries were handed over.
  uint64_t t() const {
    if (!gathered_.empty()) flush_gathered();
    return target();
  }
  ~EntryTarget() = default;

 private:
  mutable std::vector<detail::Gathered*> gathered_;
};

/// A sequential writer of a new RNTuple in a new file; `schema_json`: {"field": "C++ type", ...}.
class Writer : public EntryTarget {
 public:
  Writer(const std::string& path, const std::string& ntuple, const std::string& schema_json, const Options* options = nullptr) {
    uint64_t h = 0;
    detail::check(rntuple_writer_create(path.c_str(), ntuple.c_str(), schema_json.c_str(), options ? options->handle() : 0, &h));
    h_ = detail::Handle<rntuple_writer_free>(h);
  }
  explicit Writer(uint64_t adopted) : h_(adopted) {}
  /// Appends a record batch (moved in; `schema` stays the caller's).
  void append(ArrowArray* batch, const ArrowSchema* schema) { detail::check(rntuple_writer_append(t(), batch, schema)); }
  uint64_t entries() const {
    uint64_t n = 0;
    detail::check(rntuple_writer_entries(t(), &n));
    return n;
  }
  void checkpoint() { detail::check(rntuple_writer_checkpoint(t())); }
  /// Commits; returns the file's size. A writer destroyed without a commit is aborted.
  uint64_t commit() {
    uint64_t bytes = 0;
    detail::check(rntuple_writer_commit(t(), &bytes));
    return bytes;
  }

 protected:
  uint64_t target() const override { return h_.get(); }

 private:
  detail::Handle<rntuple_writer_free> h_;
};

/// One thread's fill context of a ParallelWriter; finish() it (or let it go) before the commit.
class FillContext : public EntryTarget {
 public:
  explicit FillContext(uint64_t adopted) : h_(adopted) {}
  void append(ArrowArray* batch, const ArrowSchema* schema) { detail::check(rntuple_fill_context_append(t(), batch, schema)); }
  void flush_cluster() { detail::check(rntuple_fill_context_flush_cluster(t())); }
  void finish() { detail::check(rntuple_fill_context_finish(t())); }

 protected:
  uint64_t target() const override { return h_.get(); }

 private:
  detail::Handle<rntuple_fill_context_free> h_;
};

/// A parallel writer: one fill context per thread, each compressing its own clusters.
class ParallelWriter {
 public:
  ParallelWriter(const std::string& path, const std::string& ntuple, const std::string& schema_json, const Options* options = nullptr) {
    uint64_t h = 0;
    detail::check(rntuple_parallel_writer_create(path.c_str(), ntuple.c_str(), schema_json.c_str(), options ? options->handle() : 0, &h));
    h_ = detail::Handle<rntuple_parallel_writer_free>(h);
  }
  explicit ParallelWriter(uint64_t adopted) : h_(adopted) {}
  FillContext fill_context() const {
    uint64_t c = 0;
    detail::check(rntuple_parallel_writer_fill_context(h_.get(), &c));
    return FillContext(c);
  }
  uint64_t entries() const {
    uint64_t n = 0;
    detail::check(rntuple_parallel_writer_entries(h_.get(), &n));
    return n;
  }
  void checkpoint() { detail::check(rntuple_parallel_writer_checkpoint(h_.get())); }
  uint64_t commit() {
    uint64_t bytes = 0;
    detail::check(rntuple_parallel_writer_commit(h_.get(), &bytes));
    return bytes;
  }

 private:
  detail::Handle<rntuple_parallel_writer_free> h_;
};

/// A file of several RNTuples: writers of each, committed before the file.
class FileWriter {
 public:
  explicit FileWriter(const std::string& path, const Options* options = nullptr) {
    uint64_t h = 0;
    detail::check(rntuple_file_writer_create(path.c_str(), options ? options->handle() : 0, &h));
    h_ = detail::Handle<rntuple_file_writer_free>(h);
  }
  Writer writer(const std::string& ntuple, const std::string& schema_json, const Options* options = nullptr) {
    uint64_t w = 0;
    detail::check(rntuple_file_writer_writer(h_.get(), ntuple.c_str(), schema_json.c_str(), options ? options->handle() : 0, &w));
    return Writer(w);
  }
  ParallelWriter parallel_writer(const std::string& ntuple, const std::string& schema_json, const Options* options = nullptr) {
    uint64_t w = 0;
    detail::check(rntuple_file_writer_parallel_writer(h_.get(), ntuple.c_str(), schema_json.c_str(), options ? options->handle() : 0, &w));
    return ParallelWriter(w);
  }
  uint64_t commit() {
    uint64_t bytes = 0;
    detail::check(rntuple_file_writer_commit(h_.get(), &bytes));
    return bytes;
  }

 private:
  detail::Handle<rntuple_file_writer_free> h_;
};

#if defined(MPI_VERSION)
/// The distributed writer: every rank of `comm` fills its part of one file (include <mpi.h> before
/// this header). Creation and commit are collective; destroying a writer that was not committed
/// aborts the job (MPI_Abort). `strategy`: "send-data", "metadata" (default; it and "send-data"
/// need MPI_THREAD_MULTIPLE), "one-sided" or "file-lock".
class MpiWriter {
 public:
  MpiWriter(MPI_Comm comm, const std::string& path, const std::string& ntuple, const std::string& schema_json,
            const Options* options = nullptr, const char* strategy = nullptr, uint64_t align = 4096) {
    rntuple_mpi_options mpi;
    detail::check(rntuple_mpi_options_default(&mpi));
    mpi.strategy = strategy;
    mpi.align = align;
    uint64_t h = 0;
    detail::check(rntuple_mpi_writer_create(static_cast<int64_t>(MPI_Comm_c2f(comm)), path.c_str(), ntuple.c_str(),
                                            schema_json.c_str(), options ? options->handle() : 0, &mpi, &h));
    h_ = detail::Handle<rntuple_mpi_writer_free>(h);
  }
  FillContext fill_context() const {
    uint64_t c = 0;
    detail::check(rntuple_mpi_writer_fill_context(h_.get(), &c));
    return FillContext(c);
  }
  uint32_t rank() const {
    uint32_t r = 0;
    detail::check(rntuple_mpi_writer_rank(h_.get(), &r, nullptr));
    return r;
  }
  uint32_t size() const {
    uint32_t s = 0;
    detail::check(rntuple_mpi_writer_rank(h_.get(), nullptr, &s));
    return s;
  }
  /// Commits (collective); returns the file's size.
  uint64_t commit() {
    uint64_t bytes = 0;
    detail::check(rntuple_mpi_writer_commit(h_.get(), &bytes, nullptr, 0, nullptr));
    return bytes;
  }

 private:
  detail::Handle<rntuple_mpi_writer_free> h_;
};
#endif  // MPI_VERSION

namespace detail {
template <class T>
struct CType;
#define RNTUPLE_CTYPE(T, CODE) \
  template <>              \
  struct CType<T> {        \
    static constexpr uint32_t code = CODE; \
  };
RNTUPLE_CTYPE(bool, RNTUPLE_TYPE_BOOL)
RNTUPLE_CTYPE(int8_t, RNTUPLE_TYPE_I8)
RNTUPLE_CTYPE(uint8_t, RNTUPLE_TYPE_U8)
RNTUPLE_CTYPE(int16_t, RNTUPLE_TYPE_I16)
RNTUPLE_CTYPE(uint16_t, RNTUPLE_TYPE_U16)
RNTUPLE_CTYPE(int32_t, RNTUPLE_TYPE_I32)
RNTUPLE_CTYPE(uint32_t, RNTUPLE_TYPE_U32)
RNTUPLE_CTYPE(int64_t, RNTUPLE_TYPE_I64)
RNTUPLE_CTYPE(uint64_t, RNTUPLE_TYPE_U64)
RNTUPLE_CTYPE(float, RNTUPLE_TYPE_F32)
RNTUPLE_CTYPE(double, RNTUPLE_TYPE_F64)
#undef RNTUPLE_CTYPE

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
}  // namespace detail

namespace detail {
/// One bound member's values of the entries an EntryBinder gathered.
template <class S>
class BoundColumn {
 public:
  virtual ~BoundColumn() = default;
  /// Appends the member of `s`; returns the bytes added.
  virtual size_t push(const S& s) = 0;
  /// The gathered values as a column of the hand-over.
  virtual rntuple_column view() const = 0;
  virtual void clear() = 0;
};

/// std::vector<bool> is packed: bools are gathered as bytes of 0 and 1.
template <class T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;

template <class S, class T>
class ScalarColumn final : public BoundColumn<S> {
 public:
  ScalarColumn(uint32_t slot, T S::*m) : slot_(slot), m_(m) {}
  size_t push(const S& s) override {
    values_.push_back(static_cast<Stored<T>>(s.*m_));
    return sizeof(Stored<T>);
  }
  rntuple_column view() const override { return {slot_, CType<T>::code, values_.data(), values_.size(), nullptr}; }
  void clear() override { values_.clear(); }

 private:
  uint32_t slot_;
  T S::*m_;
  std::vector<Stored<T>> values_;
};

template <class S, class T, class A>
class VectorColumn final : public BoundColumn<S> {
 public:
  VectorColumn(uint32_t slot, std::vector<T, A> S::*m) : slot_(slot), m_(m), offsets_(1, 0) {}
  size_t push(const S& s) override {
    const std::vector<T, A>& x = s.*m_;
    items_.insert(items_.end(), x.begin(), x.end());
    offsets_.push_back(static_cast<int64_t>(items_.size()));
    return x.size() * sizeof(Stored<T>) + sizeof(int64_t);
  }
  rntuple_column view() const override { return {slot_, CType<T>::code, items_.data(), items_.size(), offsets_.data()}; }
  void clear() override {
    items_.clear();
    offsets_.resize(1);
  }

 private:
  uint32_t slot_;
  std::vector<T, A> S::*m_;
  std::vector<Stored<T>> items_;
  std::vector<int64_t> offsets_;
};

template <class S>
class StringColumn final : public BoundColumn<S> {
 public:
  StringColumn(uint32_t slot, std::string S::*m) : slot_(slot), m_(m), offsets_(1, 0) {}
  size_t push(const S& s) override {
    const std::string& x = s.*m_;
    bytes_.insert(bytes_.end(), x.begin(), x.end());
    offsets_.push_back(static_cast<int64_t>(bytes_.size()));
    return x.size() + sizeof(int64_t);
  }
  rntuple_column view() const override { return {slot_, RNTUPLE_TYPE_STRING, bytes_.data(), bytes_.size(), offsets_.data()}; }
  void clear() override {
    bytes_.clear();
    offsets_.resize(1);
  }

 private:
  uint32_t slot_;
  std::string S::*m_;
  std::vector<char> bytes_;
  std::vector<int64_t> offsets_;
};
}  // namespace detail

/// Fills entries from a struct `S`: each bound member (a fundamental type, std::string or std::vector
/// of a fundamental type) goes to the field of its name. fill() copies the members into typed
/// column buffers here (no call into the library per value); every 64 KiB of values (at most 4096
/// entries) the entries go to the library in one call, column by column
/// (rntuple_entry_fill_columns), and so do the entries gathered when the target is used otherwise
/// (its finish, commit, entries, checkpoint, set or append first hand over every binder's entries,
/// so entries keep their order) or when the binder goes. The member's C++ type must be the field's
/// own (an int32_t member for a std::int32_t field) and every field must be bound: the first fill()
/// checks both and throws RNTUPLE_ERR_SCHEMA_MISMATCH or RNTUPLE_ERR_INVALID_ARGUMENT. A string
/// that is not UTF-8 throws at the hand-over, and the entries of that hand-over are dropped. Bind
/// once per writer or fill context, after the target is in place (a target moved afterwards leaves
/// the binder behind); a binder is used by one thread.
template <class S>
class EntryBinder final : private detail::Gathered {
 public:
  explicit EntryBinder(const EntryTarget& target) : target_(&target) { target.attach(this); }
  EntryBinder(const EntryBinder&) = delete;
  EntryBinder& operator=(const EntryBinder&) = delete;
  /// Hands over what is gathered; an error here is lost (a destructor cannot throw): call
  /// flush(), or the target's finish()/commit(), to see it.
  ~EntryBinder() {
    target_->detach(this);
    try {
      flush();
    } catch (...) {
    }
  }

  template <class M>
  EntryBinder& field(const std::string& name, M S::*member) {
    flush();
    columns_.push_back(column(target_->field(name), member));
    checked_ = false;
    return *this;
  }

  /// Adds the entry `s`.
  void fill(const S& s) {
    if (!checked_) hand_over(0);  // the types and the set of fields, checked before the first entry
    checked_ = true;
    for (auto& c : columns_) bytes_ += c->push(s);
    if (++pending_ >= kBatchEntries || bytes_ >= kBatchBytes) flush();
  }

  /// Hands the gathered entries to the library now.
  void flush() override {
    if (pending_ == 0) return;
    size_t n = pending_;
    pending_ = 0;
    bytes_ = 0;
    try {
      hand_over(n);
    } catch (...) {
      for (auto& c : columns_) c->clear();
      throw;
    }
    for (auto& c : columns_) c->clear();
  }

 private:
  static constexpr size_t kBatchEntries = 4096;
  static constexpr size_t kBatchBytes = 64 << 10;

  void hand_over(size_t n) {
    views_.clear();
    for (auto& c : columns_) views_.push_back(c->view());
    detail::check(rntuple_entry_fill_columns(target_->handle(), n, views_.data(), views_.size()));
  }

  template <class M>
  static std::unique_ptr<detail::BoundColumn<S>> column(uint32_t slot, M S::*m) {
    if constexpr (std::is_same_v<M, std::string>) {
      return std::make_unique<detail::StringColumn<S>>(slot, m);
    } else if constexpr (detail::IsVector<M>::value) {
      return std::make_unique<detail::VectorColumn<S, typename M::value_type, typename M::allocator_type>>(slot, m);
    } else {
      return std::make_unique<detail::ScalarColumn<S, M>>(slot, m);
    }
  }

  const EntryTarget* target_;
  std::vector<std::unique_ptr<detail::BoundColumn<S>>> columns_;
  std::vector<rntuple_column> views_;
  size_t pending_ = 0;
  size_t bytes_ = 0;
  bool checked_ = false;
};

}  // namespace rntuple

#include "rntuple_view.hpp"

#endif  // RNTUPLE_HPP

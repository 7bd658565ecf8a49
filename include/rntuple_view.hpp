// rntuple_view.hpp: entry-wise reading in C++ over the C ABI's views (included by rntuple.hpp).
//
//   rntuple::Reader r("events.root");
//   auto pt = r.view<float>("MET_pt");                     // one value per entry
//   auto jets = r.view<std::vector<float>>("Jet_pt");      // a collection: rntuple::Items<float>
//   auto tag = r.view<std::string>("tag");                 // std::string_view
//   for (uint64_t i = 0; i < r.entries(); i++) sum += pt(i) + jets(i).size();
//
//   struct Event { float met; std::vector<float> jet_pt; };
//   template <> struct rntuple::Members<Event> {
//     static void bind(rntuple::EntryLoader<Event>& l) { l.field("MET_pt", &Event::met).field("Jet_pt", &Event::jet_pt); }
//   };
//   Event e;
//   r.load(42, e);                                         // every bound member of entry 42
//
// A view asks the library for the page holding the entry it needs (values, or offsets with their
// entries' items) and indexes it inline until an entry falls outside it, so a sequential loop
// makes one library call per page. Pages are decoded once into the view's cache (16 MiB by
// default, set_cache_budget()). A view is used by one thread; views of one Reader on many threads
// are safe.
#ifndef RNTUPLE_VIEW_HPP
#define RNTUPLE_VIEW_HPP

#include "rntuple.hpp"

namespace rntuple {
namespace detail {
/// What every view has: its handle, its cache's counters and budget.
class ViewBase {
 public:
  /// Pages this view decoded (each page once while it stays in the cache).
  uint64_t pages_decoded() const {
    uint64_t n = 0;
    check(rntuple_view_stats(h_.get(), &n, nullptr));
    return n;
  }
  /// Bytes of decoded pages the view holds.
  uint64_t cached_bytes() const {
    uint64_t n = 0;
    check(rntuple_view_stats(h_.get(), nullptr, &n));
    return n;
  }
  /// The bytes of decoded pages the view keeps (the page in use whatever the budget).
  void set_cache_budget(uint64_t bytes) { check(rntuple_view_set_cache_budget(h_.get(), bytes)); }
  uint64_t handle() const noexcept { return h_.get(); }

 protected:
  ViewBase(uint64_t reader, const std::string& field, uint32_t code, bool items) {
    uint64_t h = 0;
    check(items ? rntuple_view_create_items(reader, field.c_str(), code, &h) : rntuple_view_create(reader, field.c_str(), code, &h));
    h_ = Handle<rntuple_view_free>(h);
  }
  Handle<rntuple_view_free> h_;
};

/// The offsets window of a collection or string view, indexed inline.
template <class T>
class ItemsWindow : public ViewBase {
 protected:
  ItemsWindow(uint64_t reader, const std::string& field, uint32_t code, bool items) : ViewBase(reader, field, code, items) {}
  /// Entry i's items: their first and count.
  std::pair<const T*, size_t> at(uint64_t i) {
    uint64_t k = i - w_.first;
    if (k >= w_.count) {
      check(rntuple_view_items_window(h_.get(), i, &w_));
      k = i - w_.first;
    }
    uint64_t lo = k ? w_.ends[k - 1] : w_.base;
    return {static_cast<const T*>(w_.items) + (lo - w_.base), static_cast<size_t>(w_.ends[k] - lo)};
  }

 private:
  rntuple_items_window w_{0, 0, nullptr, 0, nullptr};
};
}  // namespace detail

/// An entry's items, lent by a view until it moves to another page (copy them to keep them).
template <class T>
class Items {
 public:
  Items(const T* data, size_t size) : data_(data), size_(size) {}
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  const T* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const T& operator[](size_t i) const noexcept { return data_[i]; }
  /// The items copied.
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

 private:
  const T* data_;
  size_t size_;
};

/// A field read entry by entry as `T`: a fundamental type (one value per entry: a top-level field
/// or a member of records, "rec.x"), std::vector<U> (a collection of U, or a member of records in a
/// collection, "Muon._0.pt"; read as Items<U>) or std::string (read as std::string_view). The
/// field's type must be T's (float for a float field); an entry past the end throws Error with
/// RNTUPLE_ERR_INVALID_ARGUMENT.
template <class T>
class View : public detail::ViewBase {
  static_assert(detail::type_code<T>() != 0, "View<T>: T is bool, an 8- to 64-bit integer, float, double, std::vector of one, or std::string");

 public:
  View(const Reader& r, const std::string& field) : ViewBase(r.handle(), field, detail::type_code<T>(), false) {}
  /// Entry i's value.
  T operator()(uint64_t i) {
    uint64_t k = i - first_;
    if (k >= count_) {
      const void* p = nullptr;
      detail::check(rntuple_view_window(h_.get(), i, &first_, &count_, &p));
      data_ = static_cast<const T*>(p);
      k = i - first_;
    }
    return data_[k];
  }

 private:
  uint64_t first_ = 0;
  uint64_t count_ = 0;
  const T* data_ = nullptr;
};

template <class U, class A>
class View<std::vector<U, A>> : public detail::ItemsWindow<U> {
  static_assert(detail::type_code<U>() != 0, "View<std::vector<U>>: U is bool, an 8- to 64-bit integer, float or double");

 public:
  View(const Reader& r, const std::string& field) : detail::ItemsWindow<U>(r.handle(), field, detail::type_code<U>(), true) {}
  /// Entry i's items.
  Items<U> operator()(uint64_t i) {
    auto [p, n] = this->at(i);
    return Items<U>(p, n);
  }
};

template <>
class View<std::string> : public detail::ItemsWindow<char> {
 public:
  View(const Reader& r, const std::string& field) : ItemsWindow<char>(r.handle(), field, RNTUPLE_TYPE_STRING, false) {}
  /// Entry i's string.
  std::string_view operator()(uint64_t i) {
    auto [p, n] = at(i);
    return std::string_view(p, n);
  }
};

template <class T>
View<T> Reader::view(const std::string& field) const {
  return View<T>(*this, field);
}

namespace detail {
/// A member of `S` loaded from a view.
template <class S>
class LoadedMember {
 public:
  virtual ~LoadedMember() = default;
  virtual void load(uint64_t entry, S& s) = 0;
};

template <class S, class M>
class ViewMember final : public LoadedMember<S> {
 public:
  ViewMember(const Reader& r, const std::string& field, M S::*m) : view_(r, field), m_(m) {}
  void load(uint64_t entry, S& s) override {
    if constexpr (IsVector<M>::value) {
      auto items = view_(entry);
      (s.*m_).assign(items.begin(), items.end());
    } else if constexpr (std::is_same_v<M, std::string>) {
      (s.*m_).assign(view_(entry));
    } else {
      s.*m_ = view_(entry);
    }
  }

 private:
  View<M> view_;
  M S::*m_;
};
}  // namespace detail

/// Loads entries into a struct `S`: each bound member (a fundamental type, std::string or
/// std::vector of a fundamental type) from the field of its name, through a view per member (each
/// page decoded once). The mirror of EntryBinder; used by one thread.
template <class S>
class EntryLoader {
 public:
  explicit EntryLoader(const Reader& r) : reader_(&r) {}
  template <class M>
  EntryLoader& field(const std::string& name, M S::*member) {
    members_.push_back(std::make_unique<detail::ViewMember<S, M>>(*reader_, name, member));
    return *this;
  }
  /// Entry `entry` of every bound member into `s`.
  void load(uint64_t entry, S& s) {
    for (auto& m : members_) m->load(entry, s);
  }
  size_t fields() const noexcept { return members_.size(); }

 private:
  const Reader* reader_;
  std::vector<std::unique_ptr<detail::LoadedMember<S>>> members_;
};

/// The members Reader::load() binds for `S`: specialize with
/// `static void bind(rntuple::EntryLoader<S>& l)` calling l.field() per member.
template <class S>
struct Members;

/// Loads entry `entry` into `s` through Members<S>. Each thread keeps the EntryLoader of its last
/// few readers (the 4 most recently used), so a loop calls bind() once.
template <class S>
void Reader::load(uint64_t entry, S& s) const {
  thread_local std::vector<std::pair<uint64_t, std::unique_ptr<EntryLoader<S>>>> loaders;
  size_t k = 0;
  while (k < loaders.size() && loaders[k].first != handle()) k++;
  if (k == loaders.size()) {
    auto l = std::make_unique<EntryLoader<S>>(*this);
    Members<S>::bind(*l);
    if (loaders.size() == 4) loaders.erase(loaders.begin());
    loaders.emplace_back(handle(), std::move(l));
    k = loaders.size() - 1;
  }
  loaders[k].second->load(entry, s);
}

}  // namespace rntuple

#endif  // RNTUPLE_VIEW_HPP

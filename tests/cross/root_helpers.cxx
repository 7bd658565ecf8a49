// C++ side of the cross-implementation test suite, JIT-compiled once per pytest session through
// ROOT.gInterpreter.Declare (see rootgen.py).
//
//  * xtypes.h: user types (interpreted classes: ROOT 6.40 streams them into RNTuple through the TClass that
//    cling provides; only some std::map instantiations need a compiled dictionary, see rootgen.py).
//  * namespace xgen:   the generators, one function per case, each writing one ROOT file with ROOT 6.40.
//  * namespace xoracle: the oracle. It reads an RNTuple with ROOT's own RNTupleReader and prints every entry
//    in the JSON form of `rntuple dump` (DESIGN.md, "CLI"), plus a JSON description of the descriptor
//    (fields, clusters, pages) so that tests can assert that a file really has the property it was made for.
//
// Why not RNTupleReader::Show(): in 6.40 it prints chars unquoted, strings unescaped, floats with 6 significant
// digits, NaN unquoted, bitsets as strings and "<unsupported type>" for std::variant. The oracle below walks the
// same in-memory values (RFieldBase::SplitValue, the mechanism Show() is built on) and prints them exactly.
//
// JSON extensions used by the oracle (decoded in rootgen.py, never produced by `rntuple dump`):
//   {"$f32": x}        a float (32 bit) value, x = shortest round-trip decimal of the float, or "nan"/"inf"/"-inf"
//   {"$unordered": [...]}  elements of an unordered container (their order is not defined, so compared as a multiset)

#include <ROOT/RColumnElementBase.hxx>
#include <ROOT/REntry.hxx>
#include <ROOT/RField.hxx>
#include <ROOT/RFieldBase.hxx>
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleFillContext.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleParallelWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RVec.hxx>

#include <ROOT/RError.hxx>
#include <TDirectory.h>
#include <TROOT.h>
#include <TFile.h>
#include <TH1F.h>
#include <TTree.h>

#include <array>
#include <atomic>
#include <bitset>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "xtypes.h"

namespace xoracle {

// Access to two private members of RVariantField (legal C++: explicit instantiation may name private members).
template <typename Tag, typename Tag::type M>
struct Rob {
   friend typename Tag::type Get(Tag) { return M; }
};
struct VariantTagOffsetTag {
   using type = std::size_t ROOT::RVariantField::*;
   friend type Get(VariantTagOffsetTag);
};
struct VariantOffsetTag {
   using type = std::size_t ROOT::RVariantField::*;
   friend type Get(VariantOffsetTag);
};
struct VariantGetTagTag {
   using type = std::uint8_t (*)(const void *, std::size_t);
   friend type Get(VariantGetTagTag);
};
// Not where rootcling makes the dictionary of this file (ACLiC, root_load.py): a dictionary cannot name them.
#ifndef __ROOTCLING__
template struct Rob<VariantTagOffsetTag, &ROOT::RVariantField::fTagOffset>;
template struct Rob<VariantOffsetTag, &ROOT::RVariantField::fVariantOffset>;
template struct Rob<VariantGetTagTag, &ROOT::RVariantField::GetTag>;
#endif

inline void AppendEscaped(std::string &o, const std::string &s)
{
   o += '"';
   for (unsigned char c : s) {
      switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      case '\b': o += "\\b"; break;
      case '\f': o += "\\f"; break;
      default:
         if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            o += buf;
         } else {
            o += static_cast<char>(c); // UTF-8 bytes pass through; Python decodes them
         }
      }
   }
   o += '"';
}

template <typename F>
void AppendReal(std::string &o, F v)
{
   if (std::isnan(v)) {
      o += "\"nan\"";
   } else if (std::isinf(v)) {
      o += v > 0 ? "\"inf\"" : "\"-inf\"";
   } else {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), v); // shortest representation that round-trips in F
      std::string txt(buf, r.ptr);
      // Keep it a JSON float for Python: "-0" would parse as the integer 0 (losing the sign), "1" as an int.
      if (txt.find_first_of(".eE") == std::string::npos)
         txt += ".0";
      o += txt;
   }
}

template <typename I>
void AppendInt(std::string &o, I v)
{
   o += std::to_string(v);
}

inline bool StartsWith(const std::string &s, const char *prefix)
{
   return s.rfind(prefix, 0) == 0;
}

void Emit(std::string &o, const ROOT::RFieldBase &field, const ROOT::RFieldBase::RValue &value);

inline void EmitList(std::string &o, const std::vector<ROOT::RFieldBase::RValue> &items)
{
   o += '[';
   bool first = true;
   for (const auto &item : items) {
      if (!first)
         o += ", ";
      first = false;
      Emit(o, item.GetField(), item);
   }
   o += ']';
}

void Emit(std::string &o, const ROOT::RFieldBase &field, const ROOT::RFieldBase::RValue &value)
{
   const std::string &t = field.GetTypeName();
   const void *p = value.GetPtr<void>().get();

   // Leaves by C++ type (type names are ROOT's normalized names).
   if (t == "bool") {
      o += *static_cast<const bool *>(p) ? "true" : "false";
      return;
   }
   if (t == "char") return AppendInt(o, static_cast<int>(*static_cast<const char *>(p)));
   if (t == "std::byte") return AppendInt(o, static_cast<unsigned>(*static_cast<const unsigned char *>(p)));
   if (t == "std::int8_t") return AppendInt(o, static_cast<int>(*static_cast<const std::int8_t *>(p)));
   if (t == "std::uint8_t") return AppendInt(o, static_cast<unsigned>(*static_cast<const std::uint8_t *>(p)));
   if (t == "std::int16_t") return AppendInt(o, *static_cast<const std::int16_t *>(p));
   if (t == "std::uint16_t") return AppendInt(o, *static_cast<const std::uint16_t *>(p));
   if (t == "std::int32_t") return AppendInt(o, *static_cast<const std::int32_t *>(p));
   if (t == "std::uint32_t") return AppendInt(o, *static_cast<const std::uint32_t *>(p));
   if (t == "std::int64_t") return AppendInt(o, *static_cast<const std::int64_t *>(p));
   if (t == "std::uint64_t") return AppendInt(o, *static_cast<const std::uint64_t *>(p));
   if (t == "ROOT::RNTupleCardinality<std::uint32_t>")
      return AppendInt(o, static_cast<std::uint32_t>(*static_cast<const ROOT::RNTupleCardinality<std::uint32_t> *>(p)));
   if (t == "ROOT::RNTupleCardinality<std::uint64_t>")
      return AppendInt(o, static_cast<std::uint64_t>(*static_cast<const ROOT::RNTupleCardinality<std::uint64_t> *>(p)));
   if (t == "float") {
      o += "{\"$f32\": ";
      AppendReal(o, *static_cast<const float *>(p));
      o += '}';
      return;
   }
   if (t == "double" || t == "Double32_t") return AppendReal(o, *static_cast<const double *>(p));
   if (t == "std::string") return AppendEscaped(o, *static_cast<const std::string *>(p));

   if (auto bitset = dynamic_cast<const ROOT::RBitsetField *>(&field)) {
      // Same word layout as RBitsetField on Linux: an array of unsigned long, bit i in word i / 64.
      const auto *words = static_cast<const unsigned long *>(p);
      const std::size_t bitsPerWord = 8 * sizeof(unsigned long);
      o += '[';
      for (std::size_t i = 0; i < bitset->GetN(); ++i) {
         if (i)
            o += ", ";
         o += ((words[i / bitsPerWord] >> (i % bitsPerWord)) & 1UL) ? "true" : "false";
      }
      o += ']';
      return;
   }

   if (auto variant = dynamic_cast<const ROOT::RVariantField *>(&field)) {
      const std::size_t tagOffset = variant->*Get(VariantTagOffsetTag());
      const std::size_t variantOffset = variant->*Get(VariantOffsetTag());
      const std::uint8_t tag = Get(VariantGetTagTag())(p, tagOffset); // 1-based, 0 = valueless
      if (tag == 0) {
         o += "null";
         return;
      }
      auto *item = const_cast<ROOT::RFieldBase *>(field.GetConstSubfields().at(tag - 1));
      auto owner = value.GetPtr<void>();
      std::shared_ptr<void> itemPtr(owner, static_cast<unsigned char *>(owner.get()) + variantOffset);
      auto itemValue = item->BindValue(itemPtr);
      Emit(o, *item, itemValue);
      return;
   }

   if (dynamic_cast<const ROOT::RNullableField *>(&field)) { // std::optional, std::unique_ptr
      auto items = field.SplitValue(value);
      if (items.empty())
         o += "null";
      else
         Emit(o, items[0].GetField(), items[0]);
      return;
   }

   if (dynamic_cast<const ROOT::RAtomicField *>(&field) || dynamic_cast<const ROOT::REnumField *>(&field)) {
      auto items = field.SplitValue(value);
      if (items.size() != 1)
         throw std::runtime_error("oracle: expected one subvalue for " + t);
      Emit(o, items[0].GetField(), items[0]);
      return;
   }

   if (dynamic_cast<const ROOT::RPairField *>(&field) || dynamic_cast<const ROOT::RTupleField *>(&field)) {
      EmitList(o, field.SplitValue(value));
      return;
   }

   if (field.GetStructure() == ROOT::ENTupleStructure::kRecord) { // user classes, untyped records
      auto items = field.SplitValue(value);
      o += '{';
      bool first = true;
      for (const auto &item : items) {
         if (!first)
            o += ", ";
         first = false;
         AppendEscaped(o, item.GetField().GetFieldName());
         o += ": ";
         Emit(o, item.GetField(), item);
      }
      o += '}';
      return;
   }

   if (field.GetStructure() == ROOT::ENTupleStructure::kCollection ||
       dynamic_cast<const ROOT::RArrayField *>(&field) || dynamic_cast<const ROOT::RArrayAsRVecField *>(&field) ||
       dynamic_cast<const ROOT::RArrayAsVectorField *>(&field)) {
      const bool unordered = StartsWith(t, "std::unordered_");
      if (unordered)
         o += "{\"$unordered\": ";
      EmitList(o, field.SplitValue(value));
      if (unordered)
         o += '}';
      return;
   }

   throw std::runtime_error("oracle: unsupported field type " + t + " (field " + field.GetQualifiedFieldName() + ")");
}

/// Writes the entries [start, stop) of every top-level field (descriptor order; projected fields included) as the
/// JSON array of `rntuple dump` to outPath. Returns the number of entries written.
/// `onlyFields`: comma-separated top-level field names to dump (in descriptor order); empty = all.
/// Classes without a dictionary (files from elsewhere) are emulated from the on-disk field tree.
std::uint64_t DumpJson(const std::string &ntupleName, const std::string &path, const std::string &outPath,
                       const std::string &onlyFields = "", std::uint64_t start = 0,
                       std::uint64_t stop = std::uint64_t(-1))
{
   ROOT::RNTupleDescriptor::RCreateModelOptions modelOpts;
   modelOpts.SetEmulateUnknownTypes(true);
   auto reader = ROOT::RNTupleReader::Open(modelOpts, ntupleName, path);
   std::set<std::string> only;
   for (std::size_t pos = 0; pos < onlyFields.size();) {
      auto comma = onlyFields.find(',', pos);
      if (comma == std::string::npos)
         comma = onlyFields.size();
      only.insert(onlyFields.substr(pos, comma - pos));
      pos = comma + 1;
   }
   std::vector<std::string> names;
   {
      const auto &desc = reader->GetDescriptor();
      for (const auto &f : desc.GetTopLevelFields())
         if (only.empty() || only.count(f.GetFieldName()))
            names.push_back(f.GetFieldName());
   }
   // Regular fields through the reader's model (LoadEntry), projected fields (not part of a reader's model)
   // through views.
   auto &entry = const_cast<ROOT::REntry &>(reader->GetModel().GetDefaultEntry());
   std::map<std::string, const ROOT::RFieldBase::RValue *> inModel;
   for (const auto &v : entry)
      inModel[v.GetField().GetFieldName()] = &v;
   std::vector<std::unique_ptr<ROOT::RNTupleView<void>>> views(names.size());
   for (std::size_t k = 0; k < names.size(); ++k)
      if (!inModel.count(names[k]))
         views[k] = std::make_unique<ROOT::RNTupleView<void>>(reader->GetView<void>(names[k]));
   const std::uint64_t n = reader->GetNEntries();
   if (stop > n)
      stop = n;
   std::ofstream out(outPath, std::ios::binary);
   std::string o;
   o += '[';
   for (std::uint64_t i = start; i < stop; ++i) {
      reader->LoadEntry(i);
      if (i != start)
         o += ",\n";
      o += '{';
      for (std::size_t k = 0; k < names.size(); ++k) {
         if (k)
            o += ", ";
         AppendEscaped(o, names[k]);
         o += ": ";
         if (views[k]) {
            (*views[k])(i);
            Emit(o, views[k]->GetField(), views[k]->GetValue());
         } else {
            const auto &v = *inModel[names[k]];
            Emit(o, v.GetField(), v);
         }
      }
      o += '}';
      if (o.size() > (1 << 22)) {
         out << o;
         o.clear();
      }
   }
   o += "]\n";
   out << o;
   return stop > start ? stop - start : 0;
}

/// For the files with huge pages: the field `fieldName` (a std::vector<float>) of every entry, read by ROOT, as
/// raw little-endian arrays: outPath + ".sizes" (u64 per entry) and outPath + ".values" (f32, concatenated).
std::uint64_t DumpFloatVectors(const std::string &ntupleName, const std::string &path, const std::string &fieldName,
                               const std::string &outPath)
{
   auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
   auto view = reader->GetView<std::vector<float>>(fieldName);
   std::ofstream sizes(outPath + ".sizes", std::ios::binary);
   std::ofstream values(outPath + ".values", std::ios::binary);
   std::uint64_t total = 0;
   for (auto i : reader->GetEntryRange()) {
      const auto &v = view(i);
      const std::uint64_t n = v.size();
      sizes.write(reinterpret_cast<const char *>(&n), sizeof(n));
      values.write(reinterpret_cast<const char *>(v.data()), n * sizeof(float));
      total += n;
   }
   return total;
}

/// JSON description of an RNTuple's metadata as ROOT sees it.
std::string Describe(const std::string &ntupleName, const std::string &path)
{
   auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
   const auto &desc = reader->GetDescriptor();
   std::string o = "{";
   o += "\"name\": ";
   AppendEscaped(o, desc.GetName());
   o += ", \"num_entries\": " + std::to_string(desc.GetNEntries());
   o += ", \"num_clusters\": " + std::to_string(desc.GetNClusters());
   o += ", \"num_cluster_groups\": " + std::to_string(desc.GetNClusterGroups());
   o += ", \"fields\": [";
   bool first = true;
   for (const auto &f : desc.GetTopLevelFields()) {
      if (!first)
         o += ", ";
      first = false;
      o += "{\"name\": ";
      AppendEscaped(o, f.GetFieldName());
      o += ", \"type\": ";
      AppendEscaped(o, f.GetTypeName());
      o += ", \"alias\": ";
      AppendEscaped(o, f.GetTypeAlias());
      o += ", \"projected\": ";
      o += f.IsProjectedField() ? "true" : "false";
      o += '}';
   }
   o += "], \"columns\": [";
   first = true;
   for (const auto &c : desc.GetColumnIterable()) {
      if (!first)
         o += ", ";
      first = false;
      o += "{\"logical_id\": " + std::to_string(c.GetLogicalId());
      o += ", \"physical_id\": " + std::to_string(c.GetPhysicalId());
      o += ", \"field\": ";
      AppendEscaped(o, desc.GetQualifiedFieldName(c.GetFieldId()));
      o += ", \"type\": ";
      AppendEscaped(o, ROOT::Internal::RColumnElementBase::GetColumnTypeName(c.GetType()));
      o += ", \"bits\": " + std::to_string(c.GetBitsOnStorage());
      o += '}';
   }
   // Pages: per cluster, per physical column: elements, bytes on storage, compression settings.
   o += "], \"clusters\": [";
   first = true;
   for (const auto &cl : desc.GetClusterIterable()) {
      if (!first)
         o += ", ";
      first = false;
      o += "{\"first_entry\": " + std::to_string(cl.GetFirstEntryIndex());
      o += ", \"num_entries\": " + std::to_string(cl.GetNEntries());
      o += ", \"columns\": [";
      bool firstCol = true;
      for (const auto &cr : cl.GetColumnRangeIterable()) {
         if (!firstCol)
            o += ", ";
         firstCol = false;
         const auto colId = cr.GetPhysicalColumnId();
         o += "{\"physical_id\": " + std::to_string(colId);
         o += ", \"suppressed\": ";
         o += cr.IsSuppressed() ? "true" : "false";
         o += ", \"compression\": ";
         o += cr.GetCompressionSettings() ? std::to_string(*cr.GetCompressionSettings()) : std::string("null");
         o += ", \"pages\": [";
         if (!cr.IsSuppressed()) {
            bool firstPage = true;
            for (const auto &pi : cl.GetPageRange(colId).GetPageInfos()) {
               if (!firstPage)
                  o += ", ";
               firstPage = false;
               o += "[" + std::to_string(pi.GetNElements()) + ", " +
                    std::to_string(pi.GetLocator().GetNBytesOnStorage()) + "]";
            }
         }
         o += "]}";
      }
      o += "]}";
   }
   o += "]}";
   return o;
}

} // namespace xoracle

namespace xgen {

using namespace xtypes;

inline ROOT::RNTupleWriteOptions Options(int compression)
{
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(compression);
   return opts;
}

// Deterministic pseudo-random numbers (so that every run writes the same values).
struct Lcg {
   std::uint64_t s;
   explicit Lcg(std::uint64_t seed) : s(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
   std::uint32_t Next()
   {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<std::uint32_t>(s >> 33);
   }
   float Uniform() { return static_cast<float>(Next() % 1000000) / 1000.0f - 500.0f; }
};

template <typename T, std::size_t N>
const T &Pick(const T (&arr)[N], std::size_t i)
{
   return arr[i % N];
}

// ------------------------------------------------------------------------------------------------------------
// Every field type the format and ROOT 6.40 support without a generated dictionary.
constexpr int kTypesEntries = 14;

void WriteTypes(const std::string &path)
{
   auto model = ROOT::RNTupleModel::Create();
   auto b = model->MakeField<bool>("b");
   auto c = model->MakeField<char>("c");
   auto by = model->MakeField<std::byte>("by");
   auto i8 = model->MakeField<std::int8_t>("i8");
   auto u8 = model->MakeField<std::uint8_t>("u8");
   auto i16 = model->MakeField<std::int16_t>("i16");
   auto u16 = model->MakeField<std::uint16_t>("u16");
   auto i32 = model->MakeField<std::int32_t>("i32");
   auto u32 = model->MakeField<std::uint32_t>("u32");
   auto i64 = model->MakeField<std::int64_t>("i64");
   auto u64 = model->MakeField<std::uint64_t>("u64");
   auto f = model->MakeField<float>("f");
   auto d = model->MakeField<double>("d");
   {
      auto fld = std::make_unique<ROOT::RField<double>>("d32");
      fld->SetDouble32();
      model->AddField(std::move(fld));
   }
   {
      auto fld = std::make_unique<ROOT::RField<float>>("f_half");
      fld->SetHalfPrecision();
      model->AddField(std::move(fld));
   }
   {
      auto fld = std::make_unique<ROOT::RField<float>>("f_trunc");
      fld->SetTruncated(20);
      model->AddField(std::move(fld));
   }
   {
      auto fld = std::make_unique<ROOT::RField<float>>("f_quant");
      fld->SetQuantized(16, {-10.0f, 10.0f});
      model->AddField(std::move(fld));
   }
   {
      auto fld = std::make_unique<ROOT::RField<double>>("d_half");
      fld->SetHalfPrecision();
      model->AddField(std::move(fld));
   }
   {
      auto fld = std::make_unique<ROOT::RField<double>>("d_trunc");
      fld->SetTruncated(14);
      model->AddField(std::move(fld));
   }
   {
      auto fld = std::make_unique<ROOT::RField<double>>("d_quant");
      fld->SetQuantized(25, {-1000.0, 1000.0});
      model->AddField(std::move(fld));
   }
   auto s = model->MakeField<std::string>("s");
   auto vf = model->MakeField<std::vector<float>>("vf");
   auto vi64 = model->MakeField<std::vector<std::int64_t>>("vi64");
   auto rv = model->MakeField<ROOT::RVec<double>>("rv");
   auto arr = model->MakeField<std::array<std::int16_t, 3>>("arr");
   auto arrs = model->MakeField<std::array<std::string, 2>>("arr_s");
   auto bs = model->MakeField<std::bitset<70>>("bs");
   auto bs5 = model->MakeField<std::bitset<5>>("bs5");
   auto pr = model->MakeField<std::pair<std::int32_t, std::string>>("pr");
   auto tu = model->MakeField<std::tuple<std::int64_t, float, std::string, bool>>("tu");
   auto opt = model->MakeField<std::optional<double>>("opt");
   auto optv = model->MakeField<std::optional<std::vector<std::int32_t>>>("opt_v");
   auto up = model->MakeField<std::unique_ptr<std::string>>("up");
   auto uprec = model->MakeField<std::unique_ptr<Point>>("up_rec");
   auto var = model->MakeField<std::variant<std::int32_t, std::string, std::vector<float>, Point>>("var");
   auto varx = model->MakeField<std::variant<std::int32_t, ThrowOnCopy>>("var_valueless");
   auto set = model->MakeField<std::set<std::int32_t>>("set");
   auto mset = model->MakeField<std::multiset<std::string>>("mset");
   auto uset = model->MakeField<std::unordered_set<std::int64_t>>("uset");
   auto umset = model->MakeField<std::unordered_multiset<std::int32_t>>("umset");
   auto map = model->MakeField<std::map<std::string, std::int32_t>>("map");
   auto mmap = model->MakeField<std::multimap<std::int32_t, float>>("mmap");
   auto umap = model->MakeField<std::unordered_map<std::int32_t, std::string>>("umap");
   auto ummap = model->MakeField<std::unordered_multimap<std::string, double>>("ummap");
   auto mapp = model->MakeField<std::map<std::string, Point>>("map_rec");
   auto at = model->MakeField<std::atomic<std::int32_t>>("at");
   auto en = model->MakeField<Color>("en");
   auto rec = model->MakeField<Derived>("rec");
   auto vpts = model->MakeField<std::vector<Point>>("vpts");
   auto vv = model->MakeField<std::vector<std::vector<std::int32_t>>>("vv");
   auto vvs = model->MakeField<std::vector<std::vector<std::string>>>("vvs");
   auto vb = model->MakeField<std::vector<bool>>("vb");
   auto vopt = model->MakeField<std::vector<std::optional<float>>>("vopt");
   auto rvv = model->MakeField<ROOT::RVec<ROOT::RVec<float>>>("rvv");

   // Projected fields: an alias of a float, of a member of a vector of structs, and collection sizes.
   model
      ->AddProjectedField(std::make_unique<ROOT::RField<float>>("proj_f"), [](const std::string &) { return "f"; })
      .ThrowOnError();
   model
      ->AddProjectedField(ROOT::RFieldBase::Create("proj_xs", "std::vector<float>").Unwrap(),
                          [](const std::string &name) {
                             return name == "proj_xs" ? std::string("vpts") : std::string("vpts._0.x");
                          })
      .ThrowOnError();
   model
      ->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RNTupleCardinality<std::uint64_t>>>("n_vf64"),
                          [](const std::string &) { return "vf"; })
      .ThrowOnError();
   model
      ->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RNTupleCardinality<std::uint32_t>>>("n_vpts32"),
                          [](const std::string &) { return "vpts"; })
      .ThrowOnError();

   auto &entry = model->GetDefaultEntry();
   auto d32 = entry.GetPtr<double>("d32");
   auto fHalf = entry.GetPtr<float>("f_half");
   auto fTrunc = entry.GetPtr<float>("f_trunc");
   auto fQuant = entry.GetPtr<float>("f_quant");
   auto dHalf = entry.GetPtr<double>("d_half");
   auto dTrunc = entry.GetPtr<double>("d_trunc");
   auto dQuant = entry.GetPtr<double>("d_quant");

   const float fInf = std::numeric_limits<float>::infinity();
   const double dInf = std::numeric_limits<double>::infinity();
   const float fNan = std::numeric_limits<float>::quiet_NaN();
   const double dNan = std::numeric_limits<double>::quiet_NaN();

   const char cs[] = {'a', 'Z', '0', ' ', '~', '\n', 127, 1};
   const std::int8_t i8s[] = {0, -128, 127, -1, 1, 42};
   const std::uint8_t u8s[] = {0, 255, 1, 128, 200};
   const std::int16_t i16s[] = {0, -32768, 32767, -1, 300};
   const std::uint16_t u16s[] = {0, 65535, 1, 40000};
   const std::int32_t i32s[] = {0, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), -1,
                                123456};
   const std::uint32_t u32s[] = {0, 4294967295u, 1, 3000000000u};
   const std::int64_t i64s[] = {0, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                -1, 9007199254740993LL};
   const std::uint64_t u64s[] = {0, std::numeric_limits<std::uint64_t>::max(), 1, 18446744073709551557ULL,
                                 9007199254740993ULL};
   const float fs[] = {0.0f, -0.0f, 0.1f, fNan, fInf, -fInf, 1e-45f, std::numeric_limits<float>::max(),
                       -3.25f, 1e10f, 123456.789f, std::numeric_limits<float>::min(), 16777217.0f, -1e-38f};
   const double ds[] = {0.0, -0.0, 0.1, dNan, dInf, -dInf, 5e-324, std::numeric_limits<double>::max(),
                        -3.25, 1e300, 1.0 / 3.0, std::numeric_limits<double>::min(), 9007199254740993.0, -2.5e-310};
   const double d32s[] = {0.0, 1.0 / 3.0, -2.5, 1e30, 3.14159265358979, -1e-20, dInf, 123456789.123};
   const float halfs[] = {0.0f, -0.0f, 1.5f, 65504.0f, fNan, fInf, -fInf, 5.96e-8f, -2.75f, 0.1f, 70000.0f, 1000.3f};
   const float truncs[] = {0.0f, 3.14159265f, -1e-10f, 1e30f, -7.5f, 0.1f, fNan, fInf, 65536.123f};
   const float quants[] = {-10.0f, 10.0f, 0.0f, 3.3f, -7.77f, 9.99999f, 0.001f, -0.001f, 5.0f};
   const double dtruncs[] = {0.0, 3.14159265358979, -1e-10, 1e30, -7.5, 0.1, dInf, 65536.123};
   const double dquants[] = {-1000.0, 1000.0, 0.0, 3.3, -777.77, 999.999, 0.001, 123.456};
   const std::string strs[] = {"",
                               "hello",
                               "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x8e\x89",
                               "quote \" backslash \\ slash /",
                               "new\nline\ttab\r\x01\x1f",
                               std::string(300, 'x'),
                               "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                               " "};
   const Color colors[] = {Color::kRed, Color::kGreen, Color::kBlue, Color::kBig};

   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "types", path, Options(505));
   for (int i = 0; i < kTypesEntries; ++i) {
      *b = (i % 3 == 0);
      *c = Pick(cs, i);
      *by = static_cast<std::byte>((i * 37 + 200) % 256);
      *i8 = Pick(i8s, i);
      *u8 = Pick(u8s, i);
      *i16 = Pick(i16s, i);
      *u16 = Pick(u16s, i);
      *i32 = Pick(i32s, i);
      *u32 = Pick(u32s, i);
      *i64 = Pick(i64s, i);
      *u64 = Pick(u64s, i);
      *f = Pick(fs, i);
      *d = Pick(ds, i);
      *d32 = Pick(d32s, i);
      *fHalf = Pick(halfs, i);
      *fTrunc = Pick(truncs, i);
      *fQuant = Pick(quants, i);
      *dHalf = Pick(halfs, i + 3);
      *dTrunc = Pick(dtruncs, i);
      *dQuant = Pick(dquants, i);
      *s = Pick(strs, i);

      vf->clear();
      for (int k = 0; k < i % 4; ++k)
         vf->push_back(k == 1 ? fNan : 0.5f * k - i);
      vi64->clear();
      for (int k = 0; k < (i * 7) % 5; ++k)
         vi64->push_back(Pick(i64s, i + k));
      rv->clear();
      for (int k = 0; k < (i + 2) % 3; ++k)
         rv->push_back(Pick(ds, i + k));
      *arr = {static_cast<std::int16_t>(i), static_cast<std::int16_t>(-i), Pick(i16s, i)};
      *arrs = {Pick(strs, i), Pick(strs, i + 1)};
      bs->reset();
      for (int k = 0; k < 70; ++k)
         if ((k * (i + 1)) % 7 == 0 || k == 69 - i)
            bs->set(k);
      *bs5 = std::bitset<5>(static_cast<unsigned long>(i * 3));
      *pr = {-i, Pick(strs, i + 2)};
      *tu = {Pick(i64s, i + 1), Pick(fs, i + 2), Pick(strs, i + 3), i % 2 == 1};
      if (i % 3 == 1)
         *opt = Pick(ds, i);
      else
         opt->reset();
      if (i % 4 == 0)
         optv->reset();
      else
         *optv = std::vector<std::int32_t>(i % 4 - 1, i);
      if (i % 2)
         *up = std::make_unique<std::string>(Pick(strs, i));
      else
         up->reset();
      if (i % 3 == 2)
         *uprec = std::make_unique<Point>(Point{1.5f * i, -0.25f});
      else
         uprec->reset();
      switch (i % 4) {
      case 0: *var = std::int32_t(-i); break;
      case 1: *var = Pick(strs, i); break;
      case 2: *var = std::vector<float>(i % 3, 2.5f); break;
      case 3: *var = Point{0.5f, -0.5f * i}; break;
      }
      if (i % 3 == 2) {
         ThrowOnCopy t;
         t.payload = i;
         try {
            varx->emplace<1>(t); // copy throws inside emplace: valueless_by_exception
         } catch (const std::runtime_error &) {
         }
         if (!varx->valueless_by_exception())
            throw std::runtime_error("could not make a valueless variant");
      } else if (i % 3 == 1) {
         ThrowOnCopy t;
         t.payload = 10 * i;
         varx->emplace<1>(std::move(t));
      } else {
         *varx = std::int32_t(i * 1000);
      }
      set->clear();
      for (int k = 0; k < i % 5; ++k)
         set->insert((k * 7919 + i) % 23 - 11);
      mset->clear();
      for (int k = 0; k < i % 4; ++k)
         mset->insert(Pick(strs, k % 2 + i));
      uset->clear();
      for (int k = 0; k < i % 6; ++k)
         uset->insert(Pick(i64s, k) + k);
      umset->clear();
      for (int k = 0; k < i % 5; ++k)
         umset->insert(k % 2);
      map->clear();
      for (int k = 0; k < i % 4; ++k)
         (*map)["key" + std::to_string(k) + Pick(strs, i + k)] = k * i - 5;
      mmap->clear();
      for (int k = 0; k < i % 5; ++k)
         mmap->insert({k % 2, 0.25f * k * i});
      umap->clear();
      for (int k = 0; k < i % 3; ++k)
         (*umap)[k * 100 - i] = Pick(strs, k + i);
      ummap->clear();
      for (int k = 0; k < i % 4; ++k)
         ummap->insert({k % 2 ? "odd" : "even", Pick(ds, k + i)});
      mapp->clear();
      for (int k = 0; k < i % 3; ++k)
         (*mapp)["p" + std::to_string(k)] = Point{float(k), float(-i)};
      at->store(Pick(i32s, i + 1));
      *en = Pick(colors, i);

      rec->base_id = -i;
      rec->base_tag = Pick(strs, i + 4);
      rec->id = Pick(i64s, i + 2);
      rec->mid.m = Pick(ds, i + 5);
      rec->mid.inner.x = Pick(fs, i + 6);
      rec->mid.inner.v.assign(i % 3, i);
      rec->inners.clear();
      for (int k = 0; k < i % 3; ++k) {
         Inner in;
         in.x = 0.5f * k;
         in.v.assign(k, -k);
         rec->inners.push_back(in);
      }
      vpts->clear();
      for (int k = 0; k < (i + 1) % 4; ++k)
         vpts->push_back(Point{float(i) + 0.125f * k, -float(k)});
      vv->clear();
      for (int k = 0; k < i % 4; ++k)
         vv->push_back(std::vector<std::int32_t>(k, k * i));
      vvs->clear();
      for (int k = 0; k < i % 3; ++k) {
         std::vector<std::string> inner;
         for (int m = 0; m < (k + i) % 3; ++m)
            inner.push_back(Pick(strs, m + k + i));
         vvs->push_back(inner);
      }
      vb->clear();
      for (int k = 0; k < (i * 5) % 11; ++k)
         vb->push_back((k + i) % 3 == 0);
      vopt->clear();
      for (int k = 0; k < i % 4; ++k) {
         if ((k + i) % 2)
            vopt->push_back(std::nullopt);
         else
            vopt->push_back(Pick(fs, k + i));
      }
      rvv->clear();
      for (int k = 0; k < i % 3; ++k)
         rvv->push_back(ROOT::RVec<float>(k + 1, 0.5f * i));

      writer->Fill();
      if (i == 6)
         writer->FlushCluster(); // two clusters
   }
}

// ------------------------------------------------------------------------------------------------------------
// A few fields, several clusters and many small pages, with the given compression setting.
void WriteCompression(const std::string &path, int compression, int nEntries)
{
   auto model = ROOT::RNTupleModel::Create();
   auto id = model->MakeField<std::int32_t>("id");
   auto x = model->MakeField<float>("x");
   auto vx = model->MakeField<std::vector<float>>("vx");
   auto s = model->MakeField<std::string>("s");
   auto opts = Options(compression);
   opts.SetMaxUnzippedPageSize(4096);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "comp", path, opts);
   Lcg rng(compression + 1);
   for (int i = 0; i < nEntries; ++i) {
      *id = i * 3 - 1000;
      *x = (i % 10 == 0) ? rng.Uniform() : 0.5f * (i % 17); // partly compressible
      vx->clear();
      for (std::uint32_t k = 0, n = rng.Next() % 9; k < n; ++k)
         vx->push_back(k % 2 ? rng.Uniform() : float(k));
      *s = (i % 5 == 0) ? std::string("row ") + std::to_string(rng.Next()) : std::string("common value ") + std::to_string(i % 4);
      writer->Fill();
      if ((i + 1) % 2000 == 0)
         writer->FlushCluster();
   }
}

// ------------------------------------------------------------------------------------------------------------
// One column whose single page is larger than 16 MiB uncompressed (ROOT compresses it in several blocks of at
// most 0xFFFFFF input bytes). maxKeySize > 0 also lowers the maximum key size, so that the page is written as a
// chunked blob (format spec section "Large blobs").
void WriteBigPage(const std::string &path, int compression, int nEntries, int perEntry, std::uint64_t maxKeySize)
{
   auto model = ROOT::RNTupleModel::Create();
   auto n = model->MakeField<std::int32_t>("n");
   auto v = model->MakeField<std::vector<float>>("v");
   auto opts = Options(compression);
   opts.SetMaxUnzippedPageSize(128 * 1024 * 1024);
   opts.SetApproxZippedClusterSize(512 * 1024 * 1024);
   opts.SetMaxUnzippedClusterSize(1024ull * 1024 * 1024);
   opts.SetPageBufferBudget(1024ull * 1024 * 1024);
   if (maxKeySize)
      ROOT::Internal::RNTupleWriteOptionsManip::SetMaxKeySize(opts, maxKeySize);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "big", path, opts);
   Lcg rng(7);
   for (int i = 0; i < nEntries; ++i) {
      *n = i;
      v->resize(perEntry);
      for (int k = 0; k < perEntry; ++k)
         (*v)[k] = (k % 64 == 0) ? rng.Uniform() : float((k + i) % 1024) * 0.25f;
      writer->Fill();
   }
}

// ------------------------------------------------------------------------------------------------------------
// RNTupleParallelWriter: nContexts fill contexts on as many threads, each flushing a cluster every flushEvery
// entries, so the RNTuple has hundreds of clusters in an order decided by the threads.
void WriteParallel(const std::string &path, int nContexts, int perContext, int flushEvery)
{
   ROOT::EnableThreadSafety();
   auto model = ROOT::RNTupleModel::CreateBare();
   model->MakeField<std::int64_t>("id");
   model->MakeField<std::int32_t>("ctx");
   model->MakeField<std::vector<float>>("vals");
   model->MakeField<std::string>("label");
   auto opts = Options(505);
   auto writer = ROOT::RNTupleParallelWriter::Recreate(std::move(model), "par", path, opts);
   std::vector<std::thread> threads;
   for (int t = 0; t < nContexts; ++t) {
      threads.emplace_back([&writer, t, perContext, flushEvery]() {
         auto ctx = writer->CreateFillContext();
         auto entry = ctx->CreateEntry();
         auto id = entry->GetPtr<std::int64_t>("id");
         auto cx = entry->GetPtr<std::int32_t>("ctx");
         auto vals = entry->GetPtr<std::vector<float>>("vals");
         auto label = entry->GetPtr<std::string>("label");
         for (int i = 0; i < perContext; ++i) {
            *id = std::int64_t(t) * 1000000 + i;
            *cx = t;
            vals->assign(i % 5, float(i) * 0.5f + t);
            *label = "ctx" + std::to_string(t) + "/" + std::to_string(i);
            ctx->Fill(*entry);
            if ((i + 1) % flushEvery == 0)
               ctx->FlushCluster();
         }
         ctx->FlushCluster();
      });
   }
   for (auto &th : threads)
      th.join();
}

// Sequential writer committing a cluster group every few clusters.
void WriteClusterGroups(const std::string &path, int nEntries, int clusterEvery, int groupEvery)
{
   auto model = ROOT::RNTupleModel::Create();
   auto x = model->MakeField<std::int32_t>("x");
   auto vs = model->MakeField<std::vector<std::string>>("vs");
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "groups", path, Options(505));
   int nClusters = 0;
   for (int i = 0; i < nEntries; ++i) {
      *x = i;
      vs->assign(i % 3, std::to_string(i));
      writer->Fill();
      if ((i + 1) % clusterEvery == 0) {
         ++nClusters;
         writer->CommitCluster(nClusters % groupEvery == 0);
      }
   }
}

// ------------------------------------------------------------------------------------------------------------
// Two RNTuples in one TFile, written at the same time (their clusters interleave in the file).
void WriteTwoNTuples(const std::string &path)
{
   std::unique_ptr<TFile> file(TFile::Open(path.c_str(), "RECREATE"));
   auto m1 = ROOT::RNTupleModel::Create();
   auto a = m1->MakeField<std::int32_t>("a");
   auto va = m1->MakeField<std::vector<double>>("va");
   auto m2 = ROOT::RNTupleModel::Create();
   auto name = m2->MakeField<std::string>("name");
   auto score = m2->MakeField<float>("score");
   auto tags = m2->MakeField<std::vector<std::string>>("tags");
   {
      auto w1 = ROOT::RNTupleWriter::Append(std::move(m1), "first", *file, Options(505));
      auto w2 = ROOT::RNTupleWriter::Append(std::move(m2), "second", *file, Options(101));
      for (int i = 0; i < 300; ++i) {
         *a = i * i;
         va->assign(i % 4, i / 7.0);
         w1->Fill();
         if (i % 3 == 0) {
            *name = "n" + std::to_string(i);
            *score = i * 0.1f;
            tags->assign(i % 2, "t" + std::to_string(i));
            w2->Fill();
         }
         if ((i + 1) % 100 == 0) {
            w1->FlushCluster();
            w2->FlushCluster();
         }
      }
   }
   file->Close();
}

// An RNTuple in a TFile beside a TTree, a TH1F and a TDirectory (itself holding a histogram and a tree).
void WriteMixed(const std::string &path)
{
   std::unique_ptr<TFile> file(TFile::Open(path.c_str(), "RECREATE"));
   {
      TTree tree("tree", "a TTree");
      int ti = 0;
      float tf = 0;
      std::vector<float> tv;
      tree.Branch("ti", &ti);
      tree.Branch("tf", &tf);
      tree.Branch("tv", &tv);
      for (int i = 0; i < 500; ++i) {
         ti = i;
         tf = i * 0.5f;
         tv.assign(i % 3, float(i));
         tree.Fill();
      }
      tree.Write();
   }
   TH1F hist("hist", "a histogram", 50, -5, 5);
   for (int i = 0; i < 1000; ++i)
      hist.Fill((i % 100) / 10.0 - 5);
   hist.Write();
   auto dir = file->mkdir("subdir");
   dir->cd();
   TH1F inner("inner_hist", "histogram in a directory", 10, 0, 1);
   inner.Fill(0.5);
   inner.Write();
   file->cd();

   auto model = ROOT::RNTupleModel::Create();
   auto px = model->MakeField<float>("px");
   auto jets = model->MakeField<std::vector<Point>>("jets");
   auto label = model->MakeField<std::string>("label");
   {
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "events", *file, Options(505));
      for (int i = 0; i < 250; ++i) {
         *px = i * 1.25f - 100;
         jets->clear();
         for (int k = 0; k < i % 4; ++k)
            jets->push_back(Point{float(k), float(i)});
         *label = (i % 2) ? "odd" : "";
         writer->Fill();
      }
   }
   file->Close();
}

// ------------------------------------------------------------------------------------------------------------
// Late model extension: fields added after entries and clusters were written (first update in the middle of a
// cluster, second one at a cluster boundary).
void WriteExtension(const std::string &path)
{
   auto model = ROOT::RNTupleModel::Create();
   auto a = model->MakeField<std::int32_t>("a");
   auto v = model->MakeField<std::vector<float>>("v");
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "ext", path, Options(505));
   int i = 0;
   for (; i < 50; ++i) {
      *a = i;
      v->assign(i % 3, i * 0.5f);
      writer->Fill();
      if (i == 19 || i == 39)
         writer->FlushCluster();
   }
   std::shared_ptr<std::int64_t> lateI;
   std::shared_ptr<std::vector<float>> lateV;
   std::shared_ptr<std::string> lateS;
   {
      auto updater = writer->CreateModelUpdater();
      updater->BeginUpdate();
      lateI = updater->MakeField<std::int64_t>("late_i");
      lateV = updater->MakeField<std::vector<float>>("late_v");
      lateS = updater->MakeField<std::string>("late_s");
      updater->CommitUpdate();
   }
   for (; i < 110; ++i) {
      *a = i;
      v->assign(i % 3, i * 0.5f);
      *lateI = -1000000000000LL * i;
      lateV->assign(i % 4, -0.25f * i);
      *lateS = "late " + std::to_string(i);
      writer->Fill();
      if ((i + 1) % 25 == 0)
         writer->FlushCluster();
   }
   writer->FlushCluster();
   std::shared_ptr<std::optional<double>> lateOpt;
   std::shared_ptr<Point> latePt;
   {
      auto updater = writer->CreateModelUpdater();
      updater->BeginUpdate();
      lateOpt = updater->MakeField<std::optional<double>>("late_opt");
      latePt = updater->MakeField<Point>("late_pt");
      updater->CommitUpdate();
   }
   for (; i < 140; ++i) {
      *a = i;
      v->assign(i % 3, i * 0.5f);
      *lateI = i;
      lateV->assign(i % 2, 1.0f * i);
      *lateS = std::string(i % 5, 'z');
      if (i % 2)
         *lateOpt = i / 3.0;
      else
         lateOpt->reset();
      *latePt = Point{float(i), -float(i)};
      writer->Fill();
   }
}

// An RNTuple without entries.
void WriteEmpty(const std::string &path)
{
   auto model = ROOT::RNTupleModel::Create();
   model->MakeField<std::int32_t>("x");
   model->MakeField<std::vector<std::string>>("vs");
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "empty", path, Options(505));
}

} // namespace xgen

// A C interface over XrdCl::File for rntuple-xrootd (src/lib.rs declares it). Every function
// returns 0 on success; on failure it returns the XRootD error number (or -1) and writes a
// NUL-terminated message into `err` (truncated to `errlen`). No C++ exception leaves a function.

#include <XrdCl/XrdClDefaultEnv.hh>
#include <XrdCl/XrdClEnv.hh>
#include <XrdCl/XrdClFile.hh>
#include <XrdCl/XrdClXRootDResponses.hh>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

namespace {

void put(char *err, size_t errlen, const std::string &msg) {
   if (!err || errlen == 0) return;
   size_t n = msg.size() < errlen - 1 ? msg.size() : errlen - 1;
   std::memcpy(err, msg.data(), n);
   err[n] = '\0';
}

int fail(const XrdCl::XRootDStatus &st, char *err, size_t errlen) {
   put(err, errlen, st.ToStr());
   return st.errNo ? static_cast<int>(st.errNo) : -1;
}

// Runs `f` (returning the function's status), turning any C++ exception into -1 and a message.
template <class F>
int guarded(char *err, size_t errlen, F f) {
   try {
      return f();
   } catch (const std::exception &e) {
      put(err, errlen, std::string("XrdCl: ") + e.what());
   } catch (...) {
      put(err, errlen, "XrdCl: an unknown C++ exception");
   }
   return -1;
}

} // namespace

extern "C" {

// Sets XrdCl's connection window (s), connection retries and request timeout (s) unless the user set
// them (XRD_CONNECTIONWINDOW, XRD_CONNECTIONRETRY, XRD_REQUESTTIMEOUT: XrdCl keeps values imported from
// the environment and refuses to overwrite them).
void rxrd_defaults(int connection_window, int connection_retry, int request_timeout) {
   try {
      XrdCl::Env *env = XrdCl::DefaultEnv::GetEnv();
      if (!env) return;
      env->PutInt("ConnectionWindow", connection_window);
      env->PutInt("ConnectionRetry", connection_retry);
      env->PutInt("RequestTimeout", request_timeout);
   } catch (...) {
   }
}

struct rxrd_file {
   XrdCl::File file;
};

int rxrd_open(const char *url, uint16_t timeout, rxrd_file **out, uint64_t *size, char *err, size_t errlen) {
   *out = nullptr;
   return guarded(err, errlen, [&]() -> int {
      rxrd_file *f = new rxrd_file();
      XrdCl::XRootDStatus st = f->file.Open(url, XrdCl::OpenFlags::Read, XrdCl::Access::None, timeout);
      if (!st.IsOK()) {
         int rc = fail(st, err, errlen);
         delete f;
         return rc;
      }
      XrdCl::StatInfo *info = nullptr;
      st = f->file.Stat(false, info, timeout);
      if (!st.IsOK() || !info) {
         int rc = st.IsOK() ? -1 : fail(st, err, errlen);
         if (st.IsOK()) put(err, errlen, "the server gave no stat information");
         delete info;
         (void)f->file.Close(timeout);
         delete f;
         return rc;
      }
      *size = info->GetSize();
      delete info;
      *out = f;
      return 0;
   });
}

int rxrd_read(rxrd_file *f, uint64_t offset, uint32_t len, void *buf, uint32_t *got, uint16_t timeout, char *err, size_t errlen) {
   return guarded(err, errlen, [&]() -> int {
      uint32_t n = 0;
      XrdCl::XRootDStatus st = f->file.Read(offset, len, buf, n, timeout);
      if (!st.IsOK()) return fail(st, err, errlen);
      *got = n;
      return 0;
   });
}

// One vector read (kXR_readv) of `n` chunks, chunk i into buffers[i] (lengths[i] bytes each); `got`
// receives the bytes the server returned in all.
int rxrd_readv(rxrd_file *f, uint32_t n, const uint64_t *offsets, const uint32_t *lengths, void *const *buffers, uint16_t timeout,
               uint64_t *got, char *err, size_t errlen) {
   return guarded(err, errlen, [&]() -> int {
      XrdCl::ChunkList chunks;
      chunks.reserve(n);
      for (uint32_t i = 0; i < n; ++i) chunks.emplace_back(offsets[i], lengths[i], buffers[i]);
      XrdCl::VectorReadInfo *info = nullptr;
      XrdCl::XRootDStatus st = f->file.VectorRead(chunks, nullptr, info, timeout);
      if (!st.IsOK()) {
         delete info;
         return fail(st, err, errlen);
      }
      *got = info ? info->GetSize() : 0;
      delete info;
      return 0;
   });
}

void rxrd_close(rxrd_file *f) {
   if (!f) return;
   try {
      (void)f->file.Close();
   } catch (...) {
   }
   delete f;
}

} // extern "C"

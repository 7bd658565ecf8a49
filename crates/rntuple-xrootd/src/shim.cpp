// A C interface over XrdCl::File for rntuple-xrootd (src/lib.rs declares it). Every function
// returns 0 on success; on failure it returns the server's XRootD error number (kXR_*, >= 3000),
// or minus XrdCl's own status code (e.g. -103 for a socket timeout), or -1, and writes a
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
   // errNo is the server's kXR_* number for an error response, but an errno for a socket error.
   if (st.code == XrdCl::errErrorResponse && st.errNo) return static_cast<int>(st.errNo);
   return st.code ? -static_cast<int>(st.code) : -1;
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

// Sets XrdCl's connection window (s), connection attempts, stream timeout (s: no byte for that long
// with a request outstanding breaks the connection), stream error window (s: how long a host that
// failed is not tried again) and timeout resolution (s: how often those are checked), except those
// the user set (XRD_CONNECTIONWINDOW, XRD_CONNECTIONRETRY, XRD_STREAMTIMEOUT, XRD_STREAMERRORWINDOW,
// XRD_TIMEOUTRESOLUTION: XrdCl keeps values imported from the environment and refuses to overwrite
// them).
void rxrd_settings(int connection_window, int connection_retry, int stream_timeout, int stream_error_window, int timeout_resolution) {
   try {
      XrdCl::Env *env = XrdCl::DefaultEnv::GetEnv();
      if (!env) return;
      env->PutInt("ConnectionWindow", connection_window);
      env->PutInt("ConnectionRetry", connection_retry);
      env->PutInt("StreamTimeout", stream_timeout);
      env->PutInt("StreamErrorWindow", stream_error_window);
      env->PutInt("TimeoutResolution", timeout_resolution);
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
      // XrdCl's own recovery of a read (reconnect, reopen, send again) has no bound: each attempt
      // gets a fresh timeout, so a server that stalls every connection is tried for ever. The
      // caller (src/lib.rs) reopens and retries instead, within its deadline.
      (void)f->file.SetProperty("ReadRecovery", "false");
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

void rxrd_close(rxrd_file *f, uint16_t timeout) {
   if (!f) return;
   try {
      (void)f->file.Close(timeout);
   } catch (...) {
   }
   delete f;
}

} // extern "C"

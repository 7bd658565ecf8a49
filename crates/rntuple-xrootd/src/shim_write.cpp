// Writing through XrdCl for rntuple-xrootd (src/write.rs declares it): a new file opened for
// writing, positioned writes, a checked close, and the file system's mv and rm. The conventions of
// shim.cpp: 0 on success, else the server's kXR_* number, minus XrdCl's status code, or -1, with a
// NUL-terminated message in `err`; no C++ exception leaves a function.

#include <XrdCl/XrdClFile.hh>
#include <XrdCl/XrdClFileSystem.hh>
#include <XrdCl/XrdClURL.hh>
#include <XrdCl/XrdClXRootDResponses.hh>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

namespace {

void put_w(char *err, size_t errlen, const std::string &msg) {
   if (!err || errlen == 0) return;
   size_t n = msg.size() < errlen - 1 ? msg.size() : errlen - 1;
   std::memcpy(err, msg.data(), n);
   err[n] = '\0';
}

int fail_w(const XrdCl::XRootDStatus &st, char *err, size_t errlen) {
   put_w(err, errlen, st.ToStr());
   if (st.code == XrdCl::errErrorResponse && st.errNo) return static_cast<int>(st.errNo);
   return st.code ? -static_cast<int>(st.code) : -1;
}

template <class F>
int guarded_w(char *err, size_t errlen, F f) {
   try {
      return f();
   } catch (const std::exception &e) {
      put_w(err, errlen, std::string("XrdCl: ") + e.what());
   } catch (...) {
      put_w(err, errlen, "XrdCl: an unknown C++ exception");
   }
   return -1;
}

} // namespace

extern "C" {

struct rxrd_wfile {
   XrdCl::File file;
};

// Creates `url` (which must not exist) for writing, mode 0644.
int rxrd_create(const char *url, uint16_t timeout, rxrd_wfile **out, char *err, size_t errlen) {
   *out = nullptr;
   return guarded_w(err, errlen, [&]() -> int {
      rxrd_wfile *f = new rxrd_wfile();
      using namespace XrdCl;
      Access::Mode mode = Access::UR | Access::UW | Access::GR | Access::OR;
      XRootDStatus st = f->file.Open(url, OpenFlags::New | OpenFlags::Write, mode, timeout);
      if (!st.IsOK()) {
         int rc = fail_w(st, err, errlen);
         delete f;
         return rc;
      }
      // XrdCl's own recovery of a write (reconnect, reopen, send again) has no bound in time, as
      // for reads (shim.cpp): a failed write fails the upload, which is then removed and reported.
      (void)f->file.SetProperty("WriteRecovery", "false");
      *out = f;
      return 0;
   });
}

int rxrd_write(rxrd_wfile *f, uint64_t offset, uint32_t len, const void *buf, uint16_t timeout, char *err, size_t errlen) {
   return guarded_w(err, errlen, [&]() -> int {
      XrdCl::XRootDStatus st = f->file.Write(offset, len, buf, timeout);
      return st.IsOK() ? 0 : fail_w(st, err, errlen);
   });
}

// Syncs and closes the file (a failure of either is reported); frees `f` in every case.
int rxrd_wclose(rxrd_wfile *f, uint16_t timeout, char *err, size_t errlen) {
   if (!f) return 0;
   int rc = guarded_w(err, errlen, [&]() -> int {
      XrdCl::XRootDStatus st = f->file.Sync(timeout);
      if (!st.IsOK()) return fail_w(st, err, errlen);
      st = f->file.Close(timeout);
      return st.IsOK() ? 0 : fail_w(st, err, errlen);
   });
   try {
      delete f;
   } catch (...) {
   }
   return rc;
}

// Renames `from` to `to` (both URLs of one server; only their paths are sent).
int rxrd_mv(const char *from, const char *to, uint16_t timeout, char *err, size_t errlen) {
   return guarded_w(err, errlen, [&]() -> int {
      XrdCl::URL src(from), dst(to);
      if (!src.IsValid() || !dst.IsValid()) {
         put_w(err, errlen, "not a valid XRootD URL");
         return -1;
      }
      XrdCl::FileSystem fs(src);
      XrdCl::XRootDStatus st = fs.Mv(src.GetPathWithParams(), dst.GetPath(), timeout);
      return st.IsOK() ? 0 : fail_w(st, err, errlen);
   });
}

// Removes `url`.
int rxrd_rm(const char *url, uint16_t timeout, char *err, size_t errlen) {
   return guarded_w(err, errlen, [&]() -> int {
      XrdCl::URL u(url);
      if (!u.IsValid()) {
         put_w(err, errlen, "not a valid XRootD URL");
         return -1;
      }
      XrdCl::FileSystem fs(u);
      XrdCl::XRootDStatus st = fs.Rm(u.GetPathWithParams(), timeout);
      return st.IsOK() ? 0 : fail_w(st, err, errlen);
   });
}

} // extern "C"

#!/usr/bin/env bash
# The C/C++ library package into one prefix, for `make install` and `make dist` alike:
#   install.sh PREFIX VERSION STATIC_LIBS EXTRA_LINK
# puts librntuple_c.so and .a (debug information stripped), include/rntuple.h, rntuple.hpp and rntuple_view.hpp, lib/pkgconfig/rntuple.pc
# and lib/cmake/rntuple/rntupleConfig{,Version}.cmake under PREFIX. The templates (this directory) hold no absolute
# path: the pkg-config and CMake files find the prefix from their own place, so the tree is relocatable.
# STATIC_LIBS: what a static link needs after librntuple_c.a (the .pc's Libs.private); EXTRA_LINK: the MPI link
# flags of rntuple::rntuple_static (empty when the library was built without MPI; XrdCl is loaded at run time).
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 PREFIX VERSION STATIC_LIBS EXTRA_LINK" >&2
  exit 2
fi
prefix=$1 version=$2 static_libs=$3 extra_link=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ -n "$version" ] || { echo "install.sh: no version" >&2; exit 2; }

install -d "$prefix/lib/pkgconfig" "$prefix/lib/cmake/rntuple" "$prefix/include"
install -m 644 "$repo/include/rntuple.h" "$repo/include/rntuple.hpp" "$repo/include/rntuple_view.hpp" "$prefix/include/"
install -m 755 "$repo/target/release/librntuple_c.so" "$prefix/lib/"
install -m 644 "$repo/target/release/librntuple_c.a" "$prefix/lib/"
strip --strip-debug "$prefix/lib/librntuple_c.so" "$prefix/lib/librntuple_c.a"
# sed replacements: '|' and '&' are sed's own in the replacement, so escape them in the substituted values.
esc() { printf '%s' "$1" | sed -e 's/[|&\\]/\\&/g'; }
sed -e "s|@VERSION@|$(esc "$version")|g" -e "s|@STATIC_LIBS@|$(esc "$static_libs")|g" \
  "$here/rntuple.pc.in" > "$prefix/lib/pkgconfig/rntuple.pc"
sed -e "s|@MPI_LINK@|$(esc "$extra_link")|g" "$here/rntupleConfig.cmake.in" > "$prefix/lib/cmake/rntuple/rntupleConfig.cmake"
sed -e "s|@VERSION@|$(esc "$version")|g" "$here/rntupleConfigVersion.cmake.in" > "$prefix/lib/cmake/rntuple/rntupleConfigVersion.cmake"
chmod 644 "$prefix/lib/pkgconfig/rntuple.pc" "$prefix/lib/cmake/rntuple/"*.cmake

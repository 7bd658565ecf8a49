#!/usr/bin/env bash
# `make dist`: the relocatable binary package, target/dist/rntuple-VERSION-OS-ARCH.tar.gz (OUT_DIR to change where):
#   dist.sh VERSION STATIC_LIBS EXTRA_LINK
# One top directory rntuple-VERSION-OS-ARCH/ with bin/rntuple (the CLI), the library package exactly as
# `make install` lays it out (install.sh: lib/, include/, lib/pkgconfig, lib/cmake/rntuple; nothing in it names the
# place it was built or unpacked), a README.md on using it and the licence. Debug information is stripped.
# Prints the tarball's path as its last line.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 VERSION STATIC_LIBS EXTRA_LINK" >&2
  exit 2
fi
version=$1 static_libs=$2 extra_link=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out_dir=${OUT_DIR:-$repo/target/dist}
platform=$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)
name=rntuple-$version-$platform
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
stage=$(mktemp -d "$out_dir/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
top=$stage/$name

bash "$here/install.sh" "$top" "$version" "$static_libs" "$extra_link"
install -d "$top/bin"
install -m 755 "$repo/target/release/rntuple" "$top/bin/"
strip --strip-debug "$top/bin/rntuple"
for f in LICENSE LICENSE.txt LICENSE.md COPYING NOTICE; do
  if [ -f "$repo/$f" ]; then install -m 644 "$repo/$f" "$top/"; fi
done

# What the binaries need of the system at run time: the shared libraries beyond glibc's and libgcc_s, and the newest
# glibc symbol version they use.
needed=$( { readelf -d "$top/bin/rntuple"; readelf -d "$top/lib/librntuple_c.so"; } \
  | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u \
  | grep -Ev '^(libc|libm|libdl|librt|libpthread|libutil|libgcc_s)\.so|^ld-linux' | sed 's/.*/`&`/' | paste -sd, - | sed 's/,/, /g' || true)
glibc=$( { objdump -T "$top/bin/rntuple"; objdump -T "$top/lib/librntuple_c.so"; } \
  | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
license=$(sed -n 's/^license = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)
esc() { printf '%s' "$1" | sed -e 's/[|&\\]/\\&/g'; }
sed -e "s|@VERSION@|$(esc "$version")|g" -e "s|@NAME@|$(esc "$name")|g" -e "s|@PLATFORM@|$(esc "$platform")|g" -e "s|@ARCH@|$(uname -m)|g" \
  -e "s|@NEEDED@|$(esc "${needed:-none}")|g" -e "s|@GLIBC@|$(esc "${glibc:-?}")|g" \
  -e "s|@LICENSE@|$(esc "${license:-see the source repository}")|g" \
  "$here/README.dist.md.in" > "$top/README.md"
chmod 644 "$top/README.md"

# The same bytes for the same inputs: names sorted, owner root, every time the commit's (or 0).
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)}
tarball=$out_dir/$name.tar.gz
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "$name" | gzip -n -6 > "$tarball.part"
mv "$tarball.part" "$tarball"
echo "$tarball ($(du -h "$tarball" | cut -f1))" >&2
echo "$tarball"

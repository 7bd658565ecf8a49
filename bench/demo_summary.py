"""Summary of `make demo`'s parallel write and read-back (the JSON of `rntuple bench write` and
`rntuple bench read`): entries, clusters, bytes, and MB/s both ways."""
import json
import sys


def main(write_json: str, read_json: str) -> None:
    w = json.load(open(write_json))
    r = json.load(open(read_json))
    mb = w["stored_bytes"] / 1e6
    expected = w["entries"] * (w["entries"] - 1) // 2  # eventIds are 0 .. entries-1, each once
    ok = r["entries"] == w["entries"] and r["checksum"] == expected
    print(f"file            : {w['output']}")
    print(f"entries         : {w['entries']:,} written by {w['threads']} threads ({w['mode']}, compression {w['compression']})")
    print(f"clusters        : {w['clusters']}, lock taken {w['lock']['acquisitions']} times, "
          f"at most {100 * w['lock']['max_lock_fraction']:.3f} % of a thread's time on the lock")
    print(f"bytes           : {mb:.1f} MB stored, {r['uncompressed_bytes'] / 1e6:.1f} MB uncompressed")
    print(f"write           : {w['seconds']:.3f} s, {w['stored_mb_per_second']:.0f} MB/s stored, "
          f"{w['entries_per_second'] / 1e6:.2f} M entries/s (fsync included)")
    print(f"read back       : {r['seconds']:.3f} s, {mb / r['seconds']:.0f} MB/s stored, "
          f"{r['uncompressed_bytes'] / 1e6 / r['seconds']:.0f} MB/s uncompressed, {r['entries'] / r['seconds'] / 1e6:.1f} M entries/s")
    print(f"every eventId once: {'yes' if ok else 'NO'} (sum {r['checksum']}, expected {expected})")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

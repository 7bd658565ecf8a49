"""Child process of test_hostile.py: ``rntuple.open(PATH)[NAME].arrays(entry_start=A, entry_stop=B)``.

Prints one JSON object on stdout: the number of entries read, their rows (``ak.to_list``) when at most
100, and whether every leaf value is zero. An ``RNTupleError`` is printed as one line on stderr with
exit code 1; anything else (a ``PanicException`` included) propagates, with its traceback.

Usage: arrays_child.py PATH NAME START STOP   (START/STOP may be ``-`` for the default)
"""

import json
import sys

import awkward as ak
import numpy as np

import rntuple


def _zero(arr) -> bool:
    """Whether every leaf value of every field is 0.

    Walks the layout once: looking fields up by name (``arr[f]``) costs a linear search per field in awkward,
    quadratic in the field count (36,000 fields took over 30 s for a one-entry array)."""
    stack = [ak.to_packed(arr).layout]
    while stack:
        node = stack.pop()
        if node.is_numpy:
            data = np.asarray(node.data)
            if data.size and not np.all(data == 0):
                return False
        elif node.is_record:
            stack.extend(node.contents)
        elif node.is_list or node.is_regular or node.is_option or node.is_indexed:
            stack.append(node.content)
        elif node.is_union:
            stack.extend(node.contents)
        elif not node.is_unknown:
            raise TypeError(f"layout node {type(node).__name__} not handled")
    return True


def main():
    path, name, start, stop = sys.argv[1:5]
    start = None if start == "-" else int(start)
    stop = None if stop == "-" else int(stop)
    try:
        arr = rntuple.open(path)[name].arrays(entry_start=start, entry_stop=stop)
    except rntuple.RNTupleError as e:
        print(f"{type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        sys.exit(1)
    n = len(arr)
    try:
        zeros = _zero(arr)
    except Exception as e:  # a layout the zero test does not handle: not part of the verdict
        zeros = f"not computed: {e}"
    out = {"n": n, "rows": ak.to_list(arr) if n <= 100 else None, "zeros": zeros}
    print(json.dumps(out, allow_nan=True))


if __name__ == "__main__":
    main()

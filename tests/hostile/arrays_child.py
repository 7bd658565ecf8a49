"""Child process of test_hostile.py: ``rntuple.open(PATH)[NAME].arrays(entry_start=A, entry_stop=B)``.

Prints one JSON object on stdout: the number of entries read, their rows (``ak.to_list``) when asked for
(ROWS ``rows``) and at most 100, and whether every leaf value is zero. The rows are made only when the test
compares them: ``ak.to_list`` of one entry of 100,000 fields took 28 MiB, measured as the read's. An ``RNTupleError`` is printed as one line on stderr with
exit code 1; anything else (a ``PanicException`` included) propagates, with its traceback.

Usage: arrays_child.py PATH NAME START STOP [ROWS]   (START/STOP may be ``-`` for the default; ROWS ``rows``
or ``no-rows``, by default ``rows``)
"""

import json
import sys

import awkward as ak
import numpy as np

import rntuple


def _zero(arr) -> bool:
    """Whether every leaf value of every field is 0.

    Walks the layout once: looking fields up by name (``arr[f]``) costs a linear search per field in awkward,
    quadratic in the field count (36,000 fields took over 30 s for a one-entry array). Each top-level field is
    packed (its values alone, past offsets and indices) when it is reached: packing the whole array at once
    copied every layout node, 27 MiB of this check's memory for 100,000 fields, measured as the read's."""
    top = arr.layout
    parts = (c[: top.length] for c in top.contents) if top.is_record else iter([top])
    stack = []
    while True:
        if not stack:
            part = next(parts, None)
            if part is None:
                break
            stack.append(ak.to_packed(part, highlevel=False))
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
    rows = (sys.argv[5] if len(sys.argv) > 5 else "rows") == "rows"
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
    out = {"n": n, "rows": ak.to_list(arr) if rows and n <= 100 else None, "zeros": zeros}
    print(json.dumps(out, allow_nan=True))


if __name__ == "__main__":
    main()

"""Part files of an engine's write (a file per task beside the output, merged at the end) and their removal, which
outlasts tasks of a failed job that still write for a moment."""

from __future__ import annotations

import os
import shutil
import time


def remove_quietly(path: str) -> None:
    """Removes ``path`` if it is there."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def remove_tree(folder: str, tries: int = 50) -> None:
    """Removes the parts' folder, again for a while if a task still writing recreates something in it."""
    for _ in range(tries):
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder):
            return
        time.sleep(0.1)

"""Sphinx configuration of the rntuple documentation site (`make docs`: target/docs/html)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))  # the site's own extension, cli_help.py


# The installed package's version (the workspace's: tests/python/test_version.py), which autodoc documents.
import rntuple  # noqa: E402

release = version = rntuple.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "cli_help",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md"]
root_doc = "index"

# Markdown: anchors for headings down to ###, so that `[text](#a-heading)` and `page.md#a-heading` resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The API reference documents the installed package; signatures as written, members in source order.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = True

# The CLI reference runs this binary (cli_help.py).
rntuple_bin = os.environ.get("RNTUPLE_BIN", str(ROOT / "target" / "release" / "rntuple"))

html_theme = "furo"
html_title = f"rntuple {release}"
html_static_path: list[str] = []
pygments_style = "sphinx"

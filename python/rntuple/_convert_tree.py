"""``python -m rntuple._convert_tree INPUT OUTPUT [options]``: what ``rntuple convert`` runs for a TTree (the
command line names this module); the converter is :mod:`rntuple._tools.convert_tree`."""

import sys

from ._tools.convert_tree import main

if __name__ == "__main__":
    sys.exit(main())

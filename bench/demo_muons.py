#!/usr/bin/env python3
"""A small muon dataset for `make demo` in a clone without the shared test files: prints 1000
entries (nMuon, Muon_pt, Muon_eta, Muon_phi, Muon_charge, as in the CMS open-data file the demo
uses otherwise) as the JSON array `rntuple import-json` reads; `--schema` prints its schema.
Standard library only, fixed seed."""

import json
import math
import random
import sys

SCHEMA = {
    "nMuon": "std::uint32_t",
    "Muon_pt": "std::vector<float>",
    "Muon_eta": "std::vector<float>",
    "Muon_phi": "std::vector<float>",
    "Muon_charge": "std::vector<std::int32_t>",
}


def entries(n=1000, seed=2012):
    rng = random.Random(seed)
    for _ in range(n):
        k = rng.choices(range(6), weights=(20, 30, 30, 10, 6, 4))[0]
        yield {
            "nMuon": k,
            "Muon_pt": [round(3 + rng.expovariate(1 / 15), 3) for _ in range(k)],
            "Muon_eta": [round(rng.uniform(-2.4, 2.4), 3) for _ in range(k)],
            "Muon_phi": [round(rng.uniform(-math.pi, math.pi), 3) for _ in range(k)],
            "Muon_charge": [rng.choice((-1, 1)) for _ in range(k)],
        }


if __name__ == "__main__":
    json.dump(SCHEMA if "--schema" in sys.argv else list(entries()), sys.stdout)

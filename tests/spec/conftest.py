"""Hypothesis profiles for the fuzzers, chosen by ARCHFORM_FUZZ (default: `dev`, small).

`ARCHFORM_FUZZ=ci` (set by .ci/run) is the long run: the fuzzers then make more than 10,000
command runs, summed across xdist workers and enforced by tests/support/fuzz_floor.py; each
fuzz test takes its share of the profile's max_examples (see fuzz_support.examples).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("dev", max_examples=20, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("ci", max_examples=400, **_COMMON)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("ARCHFORM_FUZZ", "dev"))

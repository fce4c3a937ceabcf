"""Default assumptions of the inference estimates, in a module that imports nothing.

Lint rule options (INF008, INF009) take their defaults from here when the rules are imported,
so a lint without an InferenceFleet never imports the estimate models (start-up time).
`archform.estimate.inference` re-exports them under the same names.
"""

from __future__ import annotations

DEFAULT_UTILIZATION = 0.9
KNEE_CONCURRENCY = 32
P99_FACTOR = 1.5

"""Blueprints: typed models, the hardware catalog, and a loader with exact positions.

`spec` knows nothing about linting, templates or deployment.

The package itself imports only the error types: the names below are loaded on first use, so
importing one submodule (`archform.spec.errors`, `archform.spec.slurm`) does not build every
blueprint model (`archform lint` start-up; see bench/lint_bench.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from archform.spec.errors import Pos, SpecError, SpecProblem, UsageError

if TYPE_CHECKING:
    from archform.spec.document import BlueprintSet, Document
    from archform.spec.loader import expand_paths, load_paths, load_text
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.platform import Platform
    from archform.spec.models.training import TrainingCluster

_LAZY = {
    "BlueprintSet": "archform.spec.document",
    "Document": "archform.spec.document",
    "expand_paths": "archform.spec.loader",
    "load_paths": "archform.spec.loader",
    "load_text": "archform.spec.loader",
    "InferenceFleet": "archform.spec.models.inference",
    "Platform": "archform.spec.models.platform",
    "TrainingCluster": "archform.spec.models.training",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'archform.spec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BlueprintSet",
    "Document",
    "InferenceFleet",
    "Platform",
    "Pos",
    "SpecError",
    "SpecProblem",
    "TrainingCluster",
    "UsageError",
    "expand_paths",
    "load_paths",
    "load_text",
]

"""Blueprints: typed models, the hardware catalog, and a loader with exact positions.

`spec` knows nothing about linting, templates or deployment.
"""

from archform.spec.document import BlueprintSet, Document
from archform.spec.errors import Pos, SpecError, SpecProblem, UsageError
from archform.spec.loader import expand_paths, load_paths, load_text
from archform.spec.models import InferenceFleet, Platform, TrainingCluster

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

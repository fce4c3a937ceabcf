"""Promotion: publish a training checkpoint to the model registry and point the fleet at it.

Layering: this package imports only `archform.spec` (for its error type); boto3 is
imported inside the functions that talk to the object store.
"""

from archform.promote.config import PromoteConfig, load_config
from archform.promote.manifest import ModelManifest, build_manifest
from archform.promote.run import PromoteError, PromoteResult, promote

__all__ = [
    "ModelManifest",
    "PromoteConfig",
    "PromoteError",
    "PromoteResult",
    "build_manifest",
    "load_config",
    "promote",
]

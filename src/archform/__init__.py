"""archform: typed GPU-infrastructure blueprints, linted and expanded into Pulumi and Ansible."""

from __future__ import annotations


def _version() -> str:
    """The build's version (the git tag, written by hatch-vcs), else the installed metadata's."""
    import importlib

    try:
        return str(importlib.import_module("archform._version").__version__)
    except (ImportError, AttributeError):
        pass
    from importlib import metadata  # only a never-built source tree gets here

    try:
        return metadata.version("archform")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


__version__ = _version()
__all__ = ["__version__"]

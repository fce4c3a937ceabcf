"""archform: typed GPU-infrastructure blueprints, linted and expanded into Pulumi and Ansible."""

__version__ = "0.1.0"
__all__ = ["__version__"]

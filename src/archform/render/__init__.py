"""Rendering: view-models -> one Jinja environment -> files written atomically."""

"""Bundled data files (archform/spec/data/*.yaml), read with the blueprint reader.

Pure-Python ruamel took 8-110 ms per file in every process (images.yaml alone about 100 ms
under a profiler, 27 ms without), which was most of `archform lint`'s start-up. The blueprint
reader (`spec.source`, libyaml through `spec.fastyaml`, YAML 1.2 values from ruamel's own
resolver and constructor) gives the same data in a few milliseconds;
tests/spec/test_datafile.py proves value-and-type equality with ruamel's safe loader for
every bundled file.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from archform.spec.source import parse_documents


def read_data(name: str) -> str:
    """The text of one bundled data file, e.g. ``images.yaml``."""
    return resources.files("archform.spec").joinpath("data/" + name).read_text("utf-8")


def load_data(name: str) -> Any:
    """The parsed content of one bundled YAML data file (a single document)."""
    documents = parse_documents(read_data(name), f"archform/spec/data/{name}")
    if len(documents) != 1:
        raise ValueError(f"data/{name}: expected one YAML document, found {len(documents)}")
    return documents[0].data

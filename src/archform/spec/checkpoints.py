"""Checkpoint layouts serving engines load (data/checkpoints.yaml), typed.

The Platform target records in promote.json which layout the fleet's server kind loads and
the model shape the blueprint declares; `archform promote` checks a checkpoint against both
before it uploads anything (archform.promote.checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.engines import engine


@dataclass(frozen=True, slots=True)
class SafetensorsFormat:
    """The safetensors file format: header length field, header limit, dtype sizes."""

    header_length_bytes: int
    max_header_bytes: int
    dtype_bits: dict[str, int]
    source: str


@dataclass(frozen=True, slots=True)
class ConfigKeys:
    """Where the engine reads the model's shape in the architecture file."""

    file: str
    text_config: str
    layers: tuple[str, ...]
    kv_heads: tuple[str, ...]
    attention_heads: str
    head_dim: tuple[str, ...]
    hidden_size: str
    source: str


@dataclass(frozen=True, slots=True)
class CheckpointFormat:
    """One model-folder layout (the engines that load it name it: Engine.checkpoint)."""

    name: str
    config: ConfigKeys
    weights_pattern: str
    weights_index: str
    weights_source: str
    tokenizer_any_of: tuple[tuple[str, ...], ...]
    tokenizer_source: str


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value)


@cache
def safetensors_format() -> SafetensorsFormat:
    """The bundled safetensors facts."""
    raw: dict[str, Any] = load_data("checkpoints.yaml")["safetensors"]
    return SafetensorsFormat(
        header_length_bytes=int(raw["header_length_bytes"]),
        max_header_bytes=int(raw["max_header_bytes"]),
        dtype_bits={str(k): int(v) for k, v in raw["dtype_bits"].items()},
        source=str(raw["source"]),
    )


@cache
def checkpoint_formats() -> dict[str, CheckpointFormat]:
    """Every bundled layout, by name."""
    out: dict[str, CheckpointFormat] = {}
    for name, raw in load_data("checkpoints.yaml")["formats"].items():
        config = raw["config"]
        out[str(name)] = CheckpointFormat(
            name=str(name),
            config=ConfigKeys(
                file=str(config["file"]),
                text_config=str(config["text_config"]),
                layers=_strs(config["layers"]),
                kv_heads=_strs(config["kv_heads"]),
                attention_heads=str(config["attention_heads"]),
                head_dim=_strs(config["head_dim"]),
                hidden_size=str(config["hidden_size"]),
                source=str(config["source"]),
            ),
            weights_pattern=str(raw["weights"]["pattern"]),
            weights_index=str(raw["weights"]["index"]),
            weights_source=str(raw["weights"]["source"]),
            tokenizer_any_of=tuple(_strs(s) for s in raw["tokenizer"]["any_of"]),
            tokenizer_source=str(raw["tokenizer"]["source"]),
        )
    return out


def format_for_server(kind: str) -> CheckpointFormat | None:
    """The layout `kind` loads from its model folder; None when archform has none on record."""
    name = engine(kind).checkpoint
    return None if name is None else checkpoint_formats()[name]

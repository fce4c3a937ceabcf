"""Refuse a checkpoint the fleet's serving engine cannot load, before anything is uploaded.

What a layout needs is data (spec/data/checkpoints.yaml, with the vendor files it was read
from): the architecture file, the weight files at the folder's root (every safetensors
header is parsed: 8-byte little-endian length, JSON header, offsets that index the whole
buffer; no tensor data is read), a complete tokenizer, and the model shape the blueprint
declares (layers, KV heads, head_dim) as the engine reads it from config.json.
Each refusal is one line: the file, what was expected, and a hint.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.spec import SpecError, UsageError
from archform.spec.checkpoints import (
    CheckpointFormat,
    SafetensorsFormat,
    checkpoint_formats,
    safetensors_format,
)
from archform.spec.files import read_regular

# config.json and the shard index are small; a multi-MiB one is not a model config.
_JSON_LIMIT = 16 * 1024 * 1024
_LAYOUT_HINT = (
    "promote the Hugging Face model folder (save_pretrained output): config.json, the "
    "*.safetensors weights and the tokenizer files at its root"
)


@dataclass(frozen=True, slots=True)
class CheckpointExpect:
    """What the fleet loads: the layout of its server kind and the blueprint's model shape."""

    server: str
    format: str | None  # None: archform has no layout on record for this server kind
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None


@dataclass(frozen=True, slots=True)
class CheckedCheckpoint:
    """What the check found (for the promotion's log)."""

    weight_files: int
    tensors: int
    shape: dict[str, int]


def check_checkpoint(
    checkpoint: Path, files: list[str], expect: CheckpointExpect, model: str
) -> CheckedCheckpoint | None:
    """Raise UsageError unless `expect.server` can load `checkpoint`; None: nothing to check.

    `files` are the checkpoint's relative POSIX paths (promote.manifest.checkpoint_files).
    """
    if expect.format is None:
        return None
    fmt = checkpoint_formats()[expect.format]
    root = {rel for rel in files if "/" not in rel}
    config = _config(checkpoint, root, fmt, expect.server)
    shape = _shape(checkpoint / fmt.config.file, config, fmt, expect, model)
    weights = _weight_files(checkpoint, files, root, fmt, expect.server)
    st = safetensors_format()
    tensors = sum(read_safetensors_header(checkpoint / rel, st) for rel in weights)
    if tensors == 0:
        raise UsageError(
            f"{checkpoint}: the *.safetensors files hold no tensors", "promote the trained weights"
        )
    if not any(set(names) <= root for names in fmt.tokenizer_any_of):
        wanted = " or ".join(" with ".join(names) for names in fmt.tokenizer_any_of)
        raise UsageError(
            f"{checkpoint}: no tokenizer at the folder's root (expected {wanted}); "
            f"{expect.server} loads the tokenizer from the model folder",
            "save the tokenizer into the same folder (tokenizer.save_pretrained)",
        )
    return CheckedCheckpoint(len(weights), tensors, shape)


def _read_json(path: Path) -> Any:
    try:
        raw = read_regular(path, str(path), _JSON_LIMIT)
    except SpecError as exc:
        raise UsageError(f"{path}: {exc.problems[0].message}", _LAYOUT_HINT) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is a ValueError
        raise UsageError(f"{path}: not JSON ({exc})", _LAYOUT_HINT) from None


def _config(checkpoint: Path, root: set[str], fmt: CheckpointFormat, server: str) -> dict[str, Any]:
    path = checkpoint / fmt.config.file
    if fmt.config.file not in root:
        raise UsageError(
            f"{path}: not found; {server} reads the model's architecture from "
            f"{fmt.config.file} at the root of the model folder",
            _LAYOUT_HINT,
        )
    config = _read_json(path)
    if not isinstance(config, dict):
        raise UsageError(f"{path}: expected a JSON object", _LAYOUT_HINT)
    return config


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _present(config: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """The first of `keys` the config sets (not null), with its value."""
    for key in keys:
        if config.get(key) is not None:
            return key, config[key]
    return None


def model_shape(config: dict[str, Any], fmt: CheckpointFormat) -> dict[str, tuple[str, Any]]:
    """(config key, value) of layers, kv_heads and head_dim as the engine derives them.

    A field is missing when none of the keys the engine reads for it is set.
    """
    keys = fmt.config
    nested = config.get(keys.text_config)
    text = nested if isinstance(nested, dict) else config
    where = f"{keys.text_config}." if text is not config else ""
    out: dict[str, tuple[str, Any]] = {}
    heads = _present(text, (keys.attention_heads,))
    if (layers := _present(text, keys.layers)) is not None:
        out["layers"] = (where + layers[0], layers[1])
    if (kv := _present(text, keys.kv_heads) or heads) is not None:
        out["kv_heads"] = (where + kv[0], kv[1])
    for key in keys.head_dim:
        value = _int(text.get(key))
        if value is not None and value > 0:
            out["head_dim"] = (where + key, value)
            break
    else:
        hidden = _int(text.get(keys.hidden_size))
        count = _int(heads[1]) if heads is not None else None
        if hidden is not None and count is not None and hidden > 0 and count > 0:
            name = f"{where}{keys.hidden_size} // {where}{keys.attention_heads}"
            out["head_dim"] = (name, hidden // count)
    return out


def _shape(
    path: Path,
    config: dict[str, Any],
    fmt: CheckpointFormat,
    expect: CheckpointExpect,
    model: str,
) -> dict[str, int]:
    found = model_shape(config, fmt)
    wanted = {"layers": expect.layers, "kv_heads": expect.kv_heads, "head_dim": expect.head_dim}
    keys = fmt.config
    candidates = {
        "layers": " or ".join(keys.layers),
        "kv_heads": " or ".join((*keys.kv_heads, keys.attention_heads)),
        "head_dim": " or ".join((*keys.head_dim, f"{keys.hidden_size} and {keys.attention_heads}")),
    }
    hint = (
        f"promote a checkpoint of {model}, or correct model.layers, model.kv_heads and "
        "model.head_dim in the blueprint"
    )
    for field, expected in wanted.items():
        if expected is None:
            continue
        if field not in found:
            raise UsageError(
                f"{path}: has no {candidates[field]}; expected {expected} "
                f"(model.{field} of {model} in the blueprint)",
                hint,
            )
        key, value = found[field]
        if _int(value) != expected:
            raise UsageError(
                f"{path}: {key} is {value!r}, expected {expected} "
                f"(model.{field} of {model} in the blueprint)",
                hint,
            )
    return {field: value for field, (_, value) in found.items() if _int(value) is not None}


def _weight_files(
    checkpoint: Path, files: list[str], root: set[str], fmt: CheckpointFormat, server: str
) -> list[str]:
    """The safetensors files the engine loads: the index's, else every one at the root."""
    at_root = sorted(r for r in root if fnmatch.fnmatchcase(r, fmt.weights_pattern))
    if fmt.weights_index in root:
        index = checkpoint / fmt.weights_index
        doc = _read_json(index)
        weight_map = doc.get("weight_map") if isinstance(doc, dict) else None
        if not isinstance(weight_map, dict) or not weight_map:
            raise UsageError(f'{index}: expected a non-empty "weight_map" object', _LAYOUT_HINT)
        named = sorted({str(v) for v in weight_map.values()})
        present = set(files)
        for rel in named:
            if rel not in present or not fnmatch.fnmatchcase(rel, fmt.weights_pattern):
                raise UsageError(
                    f"{index}: names {rel!r}, which is not a {fmt.weights_pattern} file of "
                    "the checkpoint",
                    "promote every shard the index names, or regenerate the index",
                )
        return sorted(set(named) | set(at_root))
    if not at_root:
        nested = [
            r for r in files if fnmatch.fnmatchcase(r.rsplit("/", 1)[-1], fmt.weights_pattern)
        ]
        found = f" (found {nested[0]}{' and others' if len(nested) > 1 else ''})" if nested else ""
        raise UsageError(
            f"{checkpoint}: no {fmt.weights_pattern} weights at the folder's root{found}; "
            f"{server} loads {fmt.weights_pattern} from the root of the model folder",
            "save with safetensors (save_pretrained(..., safe_serialization=True)) into the "
            "folder's root",
        )
    return at_root


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def read_safetensors_header(path: Path, fmt: SafetensorsFormat | None = None) -> int:
    """Parse and check one safetensors header; the number of tensors it describes.

    Only the header is read: the tensors' offsets are checked against the file's size.
    """
    fmt = fmt or safetensors_format()
    hint = "the file is truncated or not safetensors: write it again with safetensors"

    def bad(problem: str) -> UsageError:
        return UsageError(f"{path}: not a readable safetensors file: {problem}", hint)

    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(fmt.header_length_bytes)
        if len(head) < fmt.header_length_bytes:
            raise bad(
                f"{size} bytes, shorter than the {fmt.header_length_bytes}-byte header length"
            )
        length = int.from_bytes(head, "little")
        if length > fmt.max_header_bytes:
            raise bad(f"header length {length} exceeds the format's {fmt.max_header_bytes} bytes")
        if fmt.header_length_bytes + length > size:
            raise bad(f"header length {length} runs past the end of the file ({size} bytes)")
        raw = handle.read(length)
    if not raw.startswith(b"{"):
        raise bad("the header does not start with '{'")
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except ValueError as exc:
        raise bad(f"the header is not UTF-8 JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise bad("the header is not a JSON object")
    spans: list[tuple[int, int, str]] = []
    for name, info in doc.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise bad("__metadata__ must map strings to strings")
            continue
        spans.append(_tensor_span(name, info, fmt, bad))
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise bad(f"tensor {name!r} starts at {begin}, expected {position} (a hole or overlap)")
        position = end
    data = size - fmt.header_length_bytes - length
    if position != data:
        raise bad(f"the tensors index {position} bytes of data, the file holds {data}")
    return len(spans)


def _tensor_span(name: str, info: Any, fmt: SafetensorsFormat, bad: Any) -> tuple[int, int, str]:
    if not isinstance(info, dict):
        raise bad(f"tensor {name!r} is not an object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    bits = fmt.dtype_bits.get(dtype) if isinstance(dtype, str) else None
    if bits is None:
        raise bad(f"tensor {name!r} has dtype {dtype!r}, not one of {', '.join(fmt.dtype_bits)}")
    if not isinstance(shape, list) or any(_int(d) is None or d < 0 for d in shape):
        raise bad(f"tensor {name!r} has shape {shape!r}, expected a list of sizes")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or any(_int(o) is None or o < 0 for o in offsets)
        or offsets[1] < offsets[0]
    ):
        raise bad(f"tensor {name!r} has data_offsets {offsets!r}, expected [begin, end]")
    total = math.prod(shape) * bits
    if total % 8:
        raise bad(f"tensor {name!r} does not end on a byte boundary")
    if offsets[1] - offsets[0] != total // 8:
        raise bad(
            f"tensor {name!r} ({dtype} {shape}) needs {total // 8} bytes, "
            f"data_offsets give {offsets[1] - offsets[0]}"
        )
    return offsets[0], offsets[1], name

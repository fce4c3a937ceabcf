"""Published open models' shapes (data/open_models.yaml), each from its own config.json.

A blueprint may name one of them (`model.base` of an InferenceFleet, `training.model` of a
TrainingCluster) instead of restating its shape; rules read the trained context, head counts,
experts and native dtype from here. An entry without a `source` URL is refused: every number
in a finding must come from the blueprint, the catalog or a cited source.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.errors import UsageError

FILE = "open_models.yaml"
# Bytes per weight element of a native dtype.
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "fp8": 1}


@dataclass(frozen=True, slots=True)
class OpenModel:
    """One published model's architecture, as its config.json gives it."""

    name: str
    source: str
    params_source: str
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_context: int
    dtype: str
    params: float
    active_params: float | None = None
    experts: int | None = None
    active_experts: int | None = None
    expert_intermediate_size: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    rope_scaling: str | None = None  # "llama3 x8.0 from 8192", for messages

    @property
    def is_moe(self) -> bool:
        """Mixture of experts (every expert's weights are held, fewer are computed)."""
        return self.experts is not None

    @property
    def cache_kv_heads(self) -> int:
        """KV heads as the cache holds them: 1 latent "head" for MLA, else kv_heads."""
        return 1 if self.kv_lora_rank is not None else self.kv_heads

    @property
    def cache_head_dim(self) -> int:
        """Head width such that 2 x layers x cache_kv_heads x it = kv_elements_per_token."""
        if self.kv_lora_rank is not None:
            return (self.kv_lora_rank + (self.qk_rope_head_dim or 0)) // 2
        return self.head_dim

    @property
    def kv_elements_per_token(self) -> int:
        """KV-cache elements one token takes over all layers.

        GQA/MHA: 2 (K and V) x layers x kv_heads x head_dim. MLA (DeepSeek-V2/V3): layers x
        (kv_lora_rank + qk_rope_head_dim), the compressed latent vLLM caches
        (DeepSeek-V3 report, section 2.1.1: https://arxiv.org/abs/2412.19437).
        """
        if self.kv_lora_rank is not None:
            return self.layers * (self.kv_lora_rank + (self.qk_rope_head_dim or 0))
        return 2 * self.layers * self.kv_heads * self.head_dim


def _refuse(name: str, what: str) -> UsageError:
    return UsageError(
        f"archform/spec/data/{FILE}: model {name!r} {what}",
        "every entry needs `source:` (https URL of its config.json or paper) and its shape",
    )


def _entry(name: str, raw: Any) -> OpenModel:
    if not isinstance(raw, dict):
        raise _refuse(name, "is not a mapping")
    source = raw.get("source")
    if not isinstance(source, str) or not source.startswith("https://"):
        raise _refuse(name, "has no source URL")
    params_source = raw.get("params_source")
    if not isinstance(params_source, str) or not params_source.startswith("https://"):
        raise _refuse(name, "has no params_source URL")
    dtype = str(raw.get("dtype"))
    if dtype not in DTYPE_BYTES:
        raise _refuse(name, f"has unknown dtype {dtype!r}")
    rope = raw.get("rope_scaling")
    rope_text = None
    if isinstance(rope, dict):
        rope_text = f"{rope['type']} x{float(rope['factor']):g}"
        if "original_max_context" in rope:
            rope_text += f" from {int(rope['original_max_context'])}"

    def opt_int(key: str) -> int | None:
        value = raw.get(key)
        return None if value is None else int(value)

    try:
        return OpenModel(
            name=name,
            source=source,
            params_source=params_source,
            layers=int(raw["layers"]),
            hidden_size=int(raw["hidden_size"]),
            attention_heads=int(raw["attention_heads"]),
            kv_heads=int(raw["kv_heads"]),
            head_dim=int(raw["head_dim"]),
            intermediate_size=int(raw["intermediate_size"]),
            vocab_size=int(raw["vocab_size"]),
            max_context=int(raw["max_context"]),
            dtype=dtype,
            params=float(raw["params"]),
            active_params=None if raw.get("active_params") is None else float(raw["active_params"]),
            experts=opt_int("experts"),
            active_experts=opt_int("active_experts"),
            expert_intermediate_size=opt_int("expert_intermediate_size"),
            kv_lora_rank=opt_int("kv_lora_rank"),
            qk_rope_head_dim=opt_int("qk_rope_head_dim"),
            rope_scaling=rope_text,
        )
    except KeyError as missing:
        raise _refuse(name, f"lacks {missing.args[0]!r}") from None


def parse_table(data: Any) -> dict[str, OpenModel]:
    """The table from parsed YAML; refuses entries without a source."""
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise UsageError(f"archform/spec/data/{FILE}: expected a `models:` mapping")
    return {str(name): _entry(str(name), raw) for name, raw in models.items()}


@cache
def open_models() -> dict[str, OpenModel]:
    """Every bundled model, by archform name (llama-3.1-70b, qwen3-235b-a22b, ...)."""
    return parse_table(load_data(FILE))


def open_model(name: str) -> OpenModel | None:
    """One model by name (case-insensitive), or None."""
    return open_models().get(name.lower())


def known_names() -> str:
    """The names, for hints."""
    return ", ".join(open_models())


# Rounding a published parameter count (70.6e9 written as 70e9) is not a contradiction.
PARAMS_TOLERANCE = 0.05


def fill_from_named(
    data: Any, name_key: str, fields: dict[str, str], params_key: str | None
) -> Any:
    """Fill a raw blueprint mapping's shape from the model it names under `name_key`.

    `fields` maps blueprint keys to OpenModel attributes (exact match required when both are
    given); `params_key` is the parameter count, accepted within PARAMS_TOLERANCE. A name not
    in the table, or a given value that contradicts the named model, is an error at that key.
    """
    from archform.spec.errors import FieldError
    from archform.spec.models.common import count_value

    if not isinstance(data, dict) or data.get(name_key) is None:
        return data
    name = data[name_key]
    model = open_model(str(name)) if isinstance(name, str) else None
    if model is None:
        raise FieldError(
            name_key,
            f"{name!r} is not a model in archform's table",
            f"use one of {known_names()}, or drop {name_key} and give the shape",
        )
    out = dict(data)
    for key, attr in fields.items():
        want = getattr(model, attr)
        if key not in out:
            out[key] = want
        elif isinstance(out[key], int) and not isinstance(out[key], bool) and out[key] != want:
            raise FieldError(
                key,
                f"{key} {out[key]} contradicts {model.name}, for which archform's table "
                f"gives {want} ({model.source})",
                f"remove {key} (the named model fills it) or fix it to {want}",
            )
    if params_key is not None:
        if params_key not in out:
            out[params_key] = model.params
        else:
            given = count_value(out[params_key])
            if isinstance(given, float | int) and abs(given / model.params - 1) > PARAMS_TOLERANCE:
                raise FieldError(
                    params_key,
                    f"{params_key} {given / 1e9:g}B contradicts {model.name}'s "
                    f"{model.params / 1e9:g}B parameters ({model.params_source})",
                    f"remove {params_key} (the named model fills it) or fix it to "
                    f"{model.params / 1e9:g}B",
                )
    return out

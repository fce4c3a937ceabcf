"""Turn pydantic validation errors into located, hinted SpecProblems."""

from __future__ import annotations

import difflib
import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from archform.spec.errors import FieldError, HintedError, SpecProblem
from archform.spec.paths import Loc, format_path
from archform.spec.provider import names as provider_names
from archform.spec.provider import spec_of, spec_or_none
from archform.spec.source import RawDocument

# Product names users write for a generic kind, sold by more than one provider or none;
# each provider's own products are its `product_kinds`.
_SYNONYMS = {
    "exascaler": "lustre",
    "netapp": "nfs",
    "ib": "infiniband",
    "spectrum_x": "roce",
}


@cache
def _synonyms() -> dict[str, str]:
    """Product name -> generic kind: the shared ones and every provider's."""
    out = dict(_SYNONYMS)
    for name in provider_names():
        out.update(spec_of(name).product_kinds)
    return out


_TYPE_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "datetime_from_date_parsing": "a date (YYYY-MM-DD)",
}


def problems_from(
    exc: ValidationError, doc: RawDocument, model: type[BaseModel]
) -> list[SpecProblem]:
    """One SpecProblem per pydantic error, at the offending key or value."""
    out: list[SpecProblem] = []
    seen: set[tuple[Loc, str]] = set()
    errors = exc.errors(include_url=False)
    cleaned = [_clean_loc(doc.data, tuple(e["loc"])) for e in errors]
    # A typo'd key shows up twice: unknown 'nodez' and missing 'nodes'. Keep the first only.
    typos = {
        (loc[:-1], close)
        for err, loc in zip(errors, cleaned, strict=True)
        if err["type"] == "extra_forbidden" and loc
        for close in difflib.get_close_matches(
            str(loc[-1]), _fields_at(model, loc[:-1]), n=1, cutoff=0.6
        )
    }
    for err, loc in zip(errors, cleaned, strict=True):
        if err["type"] == "missing" and loc and (loc[:-1], str(loc[-1])) in typos:
            continue
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, FieldError):
            node: Any = doc.data
            for part in loc:
                if isinstance(node, dict):
                    node = node.get(part)
                elif isinstance(node, list) and isinstance(part, int):
                    node = node[part]
                else:
                    node = None
            if isinstance(node, dict) and cause.field in node:
                loc = (*loc, cause.field)
        message, hint, prefer = _describe(err, loc, model, doc.data)
        if err["type"] == "string_type" and isinstance(err.get("input"), float):
            written = doc.source.text_at(doc.source.locate(loc, prefer="value")).split("#")[0]
            written = written.strip().rstrip(",}]").strip() or repr(err["input"])
            hint = f'quote it ("{written}"): YAML reads an unquoted {written} as a number'
        elif err["type"] == "value_error" and isinstance(cause, FieldError):
            prefer = "key"
        if isinstance(cause, HintedError) and cause.hint and not hint:
            hint = cause.hint
        if (loc, message) in seen:
            continue
        seen.add((loc, message))
        pos = doc.source.locate(loc, prefer=prefer)
        path = format_path(loc)
        text = f"{path}: {message}" if path else message
        secondary = err["type"] == "missing"
        out.append(SpecProblem(doc.file, pos.line, pos.column, text, hint, path, secondary))
    return out


def _clean_loc(data: Any, loc: tuple[Any, ...]) -> Loc:
    """Keep only parts that address data (drop union-member tags pydantic adds)."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, dict) and isinstance(part, str):
            if part in node:
                out.append(part)
                node = node[part]
            elif last:
                out.append(part)
                node = None
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
    return tuple(out)


def _describe(
    err: ErrorDetails, loc: Loc, model: type[BaseModel], data: Any
) -> tuple[str, str, str]:
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        field = str(loc[-1]) if loc else "?"
        return f"missing required key {field!r}", _missing_hint(model, loc, data), "key"
    if kind == "extra_forbidden":
        field = str(loc[-1]) if loc else "?"
        allowed = sorted(_fields_at(model, loc[:-1]))
        close = difflib.get_close_matches(field, allowed, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else "allowed keys: " + ", ".join(allowed)
        return f"unknown key {field!r}", hint, "key"
    if kind in ("literal_error", "enum"):
        expected = str(ctx.get("expected", ""))
        options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        synonym = _synonyms().get(str(value).lower())
        close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.5)
        if synonym in options:
            hint = f"{value} is kind {synonym!r} here"
        elif close:
            hint = f"did you mean {close[0]!r}?"
        else:
            hint = f"use one of {expected}"
        return f"expected one of {expected}, got {_show(value)}", hint, "value"
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string_type" and is_number and loc and loc[-1] == "name":
        return (
            f"expected a string, got {value!r}",
            "names start with a letter, e.g. tc-42",
            "value",
        )
    if kind == "string_type" and isinstance(value, float):
        return (
            f"expected a string, got the number {value!r}",
            f'quote it ("{value}"): YAML reads 23.10 as the number 23.1',
            "value",
        )
    if kind in _TYPE_WORDS:
        hint = _type_hint(kind)
        span = _range_words(model, loc) if kind.startswith(("int", "float")) else ""
        if span:
            hint = f"{hint}; the range is {span}" if hint else f"use a number {span}"
        return f"expected {_TYPE_WORDS[kind]}, got {_show(value)}", hint, "value"
    if kind == "finite_number":
        span = _range_words(model, loc)
        return (
            f"expected a finite number, got {_show(value)}",
            f"use a number {span}" if span else "write a plain number",
            "value",
        )
    if kind == "string_pattern_mismatch":
        return (
            f"{_show(value)} is not allowed here (must match {ctx.get('pattern')})",
            _pattern_hint(loc),
            "value",
        )
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bound = next(iter(ctx.values()), "?")
        words = {
            "greater_than": "greater than",
            "greater_than_equal": "at least",
            "less_than": "less than",
            "less_than_equal": "at most",
        }[kind]
        span = _range_words(model, loc)
        return (
            f"must be {words} {_num(bound)}, got {_show(value)}",
            f"use a number {span}" if span else f"use a value {words} {_num(bound)}",
            "value",
        )
    if kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
        return err["msg"][0].lower() + err["msg"][1:], "", "value"
    if kind == "value_error":
        message = str(err["msg"]).removeprefix("Value error, ")
        return message, "", "value" if not isinstance(value, dict) else "key"
    if kind == "literal_error":  # pragma: no cover - handled above
        return err["msg"], "", "value"
    return err["msg"], "", "value"


def _num(value: Any) -> str:
    """A bound as people write it: 100,000 rather than 100000, 1e+18 kept short."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**15:
        return f"{value:,}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _range_words(model: type[BaseModel], loc: Loc) -> str:
    """'from 1 to 100,000' for the number field at `loc`, from its declared bounds."""
    field = _field_at(model, loc)
    if field is None:
        return ""
    low: tuple[str, Any] | None = None
    high: tuple[str, Any] | None = None
    for item in _constraints(field.annotation, list(field.metadata)):
        for attr, is_low in (("ge", True), ("gt", True), ("le", False), ("lt", False)):
            bound = getattr(item, attr, None)
            if bound is not None and isinstance(bound, int | float):
                if is_low:
                    low = (attr, bound)
                else:
                    high = (attr, bound)
    if low is None and high is None:
        return ""
    if low is not None and high is not None and low[0] == "ge" and high[0] == "le":
        return f"from {_num(low[1])} to {_num(high[1])}"
    words = {"ge": "at least", "gt": "greater than", "le": "at most", "lt": "below"}
    return " and ".join(f"{words[b[0]]} {_num(b[1])}" for b in (low, high) if b is not None)


def _constraints(tp: Any, found: list[Any]) -> list[Any]:
    """Bound objects (annotated_types Ge/Le/...) on a field, through Optional and Annotated."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        for meta in args[1:]:
            found.extend(getattr(meta, "metadata", None) or [meta])
        return _constraints(args[0], found)
    if origin in (typing.Union, types.UnionType):
        for member in typing.get_args(tp):
            if typing.get_origin(member) is typing.Annotated and typing.get_args(member)[0] in (
                int,
                float,
            ):
                _constraints(member, found)
    return found


def _field_at(model: type[BaseModel], loc: Loc) -> Any:
    """The pydantic FieldInfo of the key at `loc` (list indices skipped), or None."""
    while loc and isinstance(loc[-1], int):
        loc = loc[:-1]
    if not loc or not isinstance(loc[-1], str):
        return None
    parent = _model_at(model, loc[:-1])
    if parent is None:
        return None
    return parent.model_fields.get(loc[-1])


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _type_hint(kind: str) -> str:
    if kind.startswith("int"):
        return "write a plain number without quotes or units"
    if kind.startswith("bool"):
        return "write true or false"
    if kind.startswith("date"):
        return "write the date as 2027-03-31"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "indent the keys below this one"
    if kind == "list_type":
        return "write a list: [a, b] or one '- item' per line"
    return ""


def _pattern_hint(loc: Loc) -> str:
    field = str(loc[-1]) if loc else ""
    hints = {
        "name": "use lowercase letters, digits and '-', starting with a letter (max 39)",
        "region": "write a region id such as us-east-1, europe-west4 or eastus",
        "regions": "write region ids such as us-east-1, europe-west4 or eastus",
        "version": 'quote the version, e.g. "23.11" (Slurm) or "1.30" (Kubernetes)',
        "image": "write an image reference such as vllm/vllm-openai:v0.6.3",
        "bucket": "use a bucket name: lowercase letters, digits, '.' and '-'",
        "rule": "write a rule code such as TRN003",
    }
    if field in hints:
        return hints[field]
    if isinstance(field, str) and field:
        return "only letters, digits and a few separators are allowed; no quotes or spaces"
    return ""


def _missing_hint(model: type[BaseModel], loc: Loc, data: Any = None) -> str:
    field = str(loc[-1]) if loc else ""
    if field == "fabric" and loc == ("fabric",):
        return _fabric_hint(data)
    if field == "kind":
        return "add kind: TrainingCluster, InferenceFleet or Platform"
    if field == "version":
        return "add `version: 1` at the top of the document"
    parent = _model_at(model, loc[:-1])
    if parent is not None and field in parent.model_fields:
        desc = parent.model_fields[field].description
        if desc:
            return f"add `{field}:` ({desc.rstrip('.')})"
    return f"add `{field}:`; `archform schema` lists every key"


def _fabric_hint(data: Any) -> str:
    """Why `fabric:` is missing: on-prem must declare it; a cloud type fills it when known."""
    placement = data.get("placement") if isinstance(data, dict) else None
    provider = placement.get("provider") if isinstance(placement, dict) else None
    compute = data.get("compute") if isinstance(data, dict) else None
    itype = compute.get("instance_type") if isinstance(compute, dict) else None
    declare = "declare fabric: {kind, gbps_per_node}"
    spec = spec_or_none(provider)
    if spec is None or not spec.cloud or not isinstance(itype, str):
        return f"on-prem clusters must {declare}; cloud types fill it"
    return (
        f"archform's catalog does not know {provider} instance type {itype!r}, so it cannot "
        f"fill fabric: {declare}, or use a type the catalog knows"
    )


def _fields_at(model: type[BaseModel], loc: Loc) -> list[str]:
    target = _model_at(model, loc)
    return list(target.model_fields) if target is not None else []


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    tp: Any = model
    for part in loc:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if not isinstance(part, str) or part not in tp.model_fields:
                return None
            tp = tp.model_fields[part].annotation
        elif typing.get_origin(tp) is list:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) is dict:
            tp = typing.get_args(tp)[1]
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            tp = models[0] if models else members[0]
        else:
            return tp

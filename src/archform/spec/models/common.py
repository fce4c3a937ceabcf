"""Types shared by every blueprint kind: names, CIDRs, sizes, suppressions."""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from archform.spec.errors import HintedError
from archform.spec.provider import names, names_where

# The schema's provider names come from the provider registry (archform/providers/): every
# provider for a TrainingCluster, those with fleets for an InferenceFleet or a Platform.
if TYPE_CHECKING:
    Provider = str
    CloudProvider = str
else:
    Provider = Literal[names()]
    CloudProvider = Literal[names_where(lambda p: p.fleets)]


class Strict(BaseModel):
    """Base for every blueprint model: frozen, unknown keys rejected."""

    # strict: `nodes: true` is an error, not 1; `nodes: "32"` is an error, not 32.
    # allow_inf_nan=False: `.inf`, `.nan` and `1e999` are errors in every float field.
    # defer_build: a model's validator is built when it first validates, not at import, so
    # a command builds only the models of the kinds it reads (`archform lint` start-up).
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        str_strip_whitespace=False,
        strict=True,
        allow_inf_nan=False,
        defer_build=True,
    )


def _pattern(regex: str, what: str, example: str, hint: str) -> AfterValidator:
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise HintedError(
                f"{what} {value!r} is not valid; expected something like {example!r}", hint
            )
        return value

    return AfterValidator(check)


def _no_control(value: str) -> str:
    bad = [c for c in value if (ord(c) < 32 and c not in "\n\t") or ord(c) == 127]
    if bad:
        raise HintedError(
            f"control character {bad[0]!r} is not allowed in text",
            "remove it; only printable characters, tabs and newlines are allowed",
        )
    return value


DnsName = Annotated[
    str,
    Field(
        pattern=r"^[a-z][a-z0-9-]{0,38}$",
        description="A DNS label: lowercase letters, digits and '-', starting with a letter, "
        "at most 39 characters.",
    ),
]
Text = Annotated[str, Field(max_length=2000), AfterValidator(_no_control)]
Owner = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@+ -]{0,63}$")]
Region = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{1,40}[a-z0-9]$")]
Zone = Annotated[str, Field(pattern=r"^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$")]
InstanceType = Annotated[
    str,
    Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="Cloud instance or VM size."),
]
CloudId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,254}$")]
MountPath = Annotated[
    str,
    _pattern(
        r"^/(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9._/-]{0,200}$",
        "mount path",
        "/lustre/datasets",
        "an absolute path of letters, digits, '.', '_', '-' and '/', without '.' or '..' parts",
    ),
]
StorageUri = Annotated[
    str,
    _pattern(
        r"^(s3|gs|az|abfss|https|hf)://[A-Za-z0-9][A-Za-z0-9._~%/:@+-]{0,400}$",
        "storage URI",
        "s3://bucket/prefix/",
        "use s3://, gs://, az://, abfss://, https:// or hf://; no quotes, spaces or shell syntax",
    ),
]
LabelKey = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_.-]{0,62}$")]
LabelValue = Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{0,63}$")]
HostName = Annotated[str, Field(pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")]


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise HintedError(
            f"{value!r} is not a CIDR block ({exc})",
            "write the network address and prefix length, e.g. 10.0.0.0/8",
        ) from None
    return value


Cidr = Annotated[
    str,
    Field(description="A CIDR block such as 10.0.0.0/8.", examples=["10.0.0.0/8"]),
    AfterValidator(_cidr),
]


def _ipv4_only(value: str) -> str:
    if ipaddress.ip_network(value, strict=True).version != 4:
        raise HintedError(
            f"{value!r} is an IPv6 range where an IPv4 range is expected "
            "(the generated networks, security group rules and API allow-lists are IPv4)",
            "write an IPv4 range such as 10.0.0.0/8; IPv6 ranges are accepted only in "
            "access.ssh_cidrs",
        )
    return value


Ipv4Cidr = Annotated[
    str,
    Field(
        description="An IPv4 CIDR block such as 10.0.0.0/8 (IPv6 is not accepted here).",
        examples=["10.0.0.0/8"],
    ),
    AfterValidator(_cidr),
    AfterValidator(_ipv4_only),
]


def _address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not re.fullmatch(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?", value):
            raise HintedError(
                f"{value!r} is neither an IP address nor a host name",
                "write an address such as 10.1.0.5 or a host name such as node01.lab",
            ) from None
    return value


Address = Annotated[str, AfterValidator(_address)]

_SUFFIX = {"K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def _count(value: Any) -> Any:
    """Accept 70e9, 70000000000, "70e9", "70B", "1.5T", "4M" for large counts."""
    if isinstance(value, bool):
        raise HintedError(
            "expected a number such as 70e9 or 70B, not a boolean", "write 70e9 or 70B"
        )
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        match = re.fullmatch(r"(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([KMBGT]?)", text)
        if not match:
            raise HintedError(
                f"expected a number such as 70e9 or 70B, got {value!r}", "write 70e9 or 70B"
            )
        return float(match.group(1)) * _SUFFIX.get(match.group(2), 1.0)
    return value


def count_value(value: Any) -> Any:
    """A raw count as a number (70B -> 7e10); anything else unchanged, for later errors."""
    try:
        return _count(value)
    except HintedError:
        return value


Count = Annotated[
    float,
    BeforeValidator(_count),
    Field(gt=0, le=1e18, description="A count; 70e9 and 70B are both accepted."),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0, "maximum": 1e18},
                {"type": "string", "pattern": r"^\d+(\.\d+)?([eE][+-]?\d+)?\s*[KMBGT]?$"},
            ],
            "description": "A count; 70e9 and 70B are both accepted.",
        }
    ),
]


QuotaName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
RaisedQuotas = Annotated[
    dict[QuotaName, Annotated[int, Field(gt=0, le=10**7)]],
    Field(
        description=(
            "Quotas the provider account has had raised above the documented default: "
            "archform's quota name (`archform schema`, docs: Quotas) -> the raised value. "
            "Only adjustable quotas may be listed."
        )
    ),
]


class Suppression(Strict):
    """One governed lint suppression: which rule, why, who owns it, until when."""

    rule: Annotated[str, Field(pattern=r"^[A-Z]{3}\d{3}$", description="Rule code, e.g. TRN003.")]
    reason: Annotated[Text, Field(min_length=3, description="Why this finding is acceptable.")]
    owner: Owner | None = None
    expires: dt.date | None = Field(
        default=None, description="After this date the suppression stops working (LNT001)."
    )


class LintSection(Strict):
    """Per-blueprint lint settings."""

    ignore: list[Suppression] = Field(default_factory=list)


class Gpu(Strict):
    """GPUs per node; filled from the hardware catalog when the instance type is known."""

    model: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")]
    per_node: Annotated[int, Field(ge=1, le=64)]
    memory_gib: Annotated[float, Field(gt=0, le=4096)] | None = None


class CpuTopology(Strict):
    """CPU layout of an on-prem node, as `slurmd -C` reports it."""

    sockets: Annotated[int, Field(ge=1, le=16)]
    cores_per_socket: Annotated[int, Field(ge=1, le=512)]
    threads_per_core: Annotated[int, Field(ge=1, le=8)] = 1


class DocumentBase(Strict):
    """Fields every blueprint document carries."""

    version: Literal[1] = Field(description="Blueprint format version; always 1.")
    name: DnsName
    description: Text | None = None
    owner: Owner | None = None
    labels: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    lint: LintSection = Field(default_factory=LintSection)

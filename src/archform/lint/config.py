"""Lint configuration: `[tool.archform]` in pyproject.toml or `.archform.toml`, nearest wins.

Keys: `select`, `ignore` (codes or prefixes), `fail-on` (error|warning|info) and
`[tool.archform.rules.<CODE>]` tables of rule options. In `.archform.toml` the same keys
sit at the top level (a `[tool.archform]` table is accepted too). Unknown keys, unknown
rules and bad option values are usage errors with a hint.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from archform.lint.finding import RANK, Severity
from archform.lint.rule import Registry, Rule
from archform.spec.errors import UsageError

KEYS = ("select", "ignore", "fail-on", "rules")
CONFIG_NAMES = (".archform.toml", "pyproject.toml")


@dataclass
class LintConfig:
    """Settings from a config file, before command-line options are applied."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    fail_on: Severity = "error"
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: Path | None = None


def discover(starts: Iterable[Path]) -> Path | None:
    """The nearest config file above the first start path (then the cwd)."""
    for start in (*starts, Path.cwd()):
        folder = start.resolve()
        if not folder.is_dir():
            folder = folder.parent
        for candidate in (folder, *folder.parents):
            for name in CONFIG_NAMES:
                path = candidate / name
                if path.is_file() and _has_section(path):
                    return path
        break
    return None


def _has_section(path: Path) -> bool:
    if path.name == ".archform.toml":
        return True
    data = _read(path)
    return isinstance(data.get("tool"), dict) and "archform" in data["tool"]


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read config {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}", "check the quoting and brackets") from None


def load_config(path: Path) -> LintConfig:
    """Parse and check one config file."""
    data = _read(path)
    section: Any = data.get("tool", {}).get("archform") if "tool" in data else None
    if section is None:
        if path.name == "pyproject.toml":
            return LintConfig(source=path)
        section = data
    if not isinstance(section, dict):
        raise UsageError(f"{path}: [tool.archform] must be a table")
    where = f"{path}: [tool.archform]" if path.name == "pyproject.toml" else str(path)
    for key in section:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(KEYS)
            raise UsageError(f"{where}: unknown key {key!r}", hint)
    config = LintConfig(source=path)
    if "select" in section:
        config.select = _codes(section["select"], f"{where}.select")
    if "ignore" in section:
        config.ignore = _codes(section["ignore"], f"{where}.ignore")
    if "fail-on" in section:
        config.fail_on = parse_fail_on(section["fail-on"], f"{where}.fail-on")
    rules = section.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise UsageError(
            f"{where}.rules must hold one table per rule code",
            "write [tool.archform.rules.NET008] and the options below it",
        )
    config.rules = {str(k).upper(): dict(v) for k, v in rules.items()}
    return config


def _codes(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(
            f"{where} must be a list of rule codes or prefixes", 'e.g. ["TRN", "NET008"]'
        )
    return split_codes(value)


def split_codes(values: Iterable[str]) -> list[str]:
    """Flatten comma-separated selectors, upper-cased."""
    return [part.strip().upper() for v in values for part in v.split(",") if part.strip()]


def parse_fail_on(value: Any, where: str = "--fail-on") -> Severity:
    """Validate a severity threshold."""
    if value not in RANK:
        raise UsageError(f"{where}: {value!r} is not a severity", "use error, warning or info")
    sev: Severity = value
    return sev


def select_rules(registry: Registry, select: list[str] | None, ignore: list[str]) -> list[Rule]:
    """Rules matching any `select` prefix (default all) and no `ignore` prefix."""
    for selector in [*(select or []), *ignore]:
        if selector != "ALL" and not any(code.startswith(selector) for code in registry.codes):
            close = difflib.get_close_matches(selector, registry.codes, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else "see `archform rules` for the codes"
            raise UsageError(f"no rule matches {selector!r}", hint)
    chosen = []
    for r in registry:
        wanted = select is None or any(s == "ALL" or r.code.startswith(s) for s in select)
        if wanted and not any(s == "ALL" or r.code.startswith(s) for s in ignore):
            chosen.append(r)
    return chosen


def rule_options(registry: Registry, config: LintConfig) -> dict[str, BaseModel]:
    """Validated option models per rule code."""
    out: dict[str, BaseModel] = {}
    where = str(config.source) if config.source else "config"
    for code, raw in config.rules.items():
        rule = registry.get(code)
        if rule is None:
            close = difflib.get_close_matches(code, registry.codes, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else "see `archform rules`"
            raise UsageError(f"{where}: rules.{code}: no such rule", hint)
        try:
            out[code] = rule.options.model_validate(raw)
        except ValidationError as exc:
            fields = ", ".join(rule.options.model_fields) or "none"
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise UsageError(
                f"{where}: rules.{code}.{loc}: {err['msg']}", f"options of {code}: {fields}"
            ) from None
    return out

"""Lint configuration: `[tool.archform]` in pyproject.toml or `.archform.toml`, nearest wins.

Keys: `select`, `ignore` (codes or prefixes), `fail-on` (error|warning|info),
`exclude` / `extend-exclude` (glob patterns of files and folders not to lint, as ruff's;
`exclude` replaces the defaults, `extend-exclude` adds to them), `force-exclude` (apply
them to files named on the command line too) and `[tool.archform.rules.<CODE>]` tables of
rule options. In `.archform.toml` the same keys sit at the top level (a `[tool.archform]`
table is accepted too). Unknown keys, unknown rules and bad option values are usage errors
with a hint; a wrong type for `exclude`, `extend-exclude` or `force-exclude` is reported at
its line.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from archform.lint.finding import RANK, Severity
from archform.lint.rule import Registry, Rule
from archform.spec.errors import Pos, SpecError, UsageError

KEYS = ("select", "ignore", "fail-on", "exclude", "extend-exclude", "force-exclude", "rules")
CONFIG_NAMES = (".archform.toml", "pyproject.toml")


@dataclass
class LintConfig:
    """Settings from a config file, before command-line options are applied."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    fail_on: Severity = "error"
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    exclude: list[str] | None = None  # None: discovery.DEFAULT_EXCLUDE
    extend_exclude: list[str] = field(default_factory=list)
    force_exclude: bool = False
    source: Path | None = None

    @property
    def root(self) -> Path:
        """Where relative exclude patterns are anchored: the config's folder, else the cwd."""
        return self.source.parent if self.source is not None else Path.cwd()


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
    """Parse and check one config file: every wrong shape is a usage error at its line."""
    data = _read(path)
    tool = data.get("tool")
    if isinstance(tool, dict) and "archform" in tool:
        section: Any = tool["archform"]
    elif path.name == "pyproject.toml":
        return LintConfig(source=path)
    else:
        section = data
    if not isinstance(section, dict):
        raise SpecError.at(
            str(path),
            key_position(path, "archform"),
            "[tool.archform] must be a table",
            'e.g. [tool.archform] followed by select = ["NET"]',
        )
    for key in section:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(KEYS)
            where = "[tool.archform] " if path.name == "pyproject.toml" else ""
            raise SpecError.at(
                str(path), key_position(path, key), f"{where}unknown key {key!r}", hint
            )
    config = LintConfig(source=path)
    codes_example = 'select = ["TRN", "NET008"]'
    if "select" in section:
        config.select = _codes(section["select"], path, "select", codes_example)
    if "ignore" in section:
        config.ignore = _codes(section["ignore"], path, "ignore", 'ignore = ["NET008"]')
    if "fail-on" in section:
        value = section["fail-on"]
        if not isinstance(value, str) or value not in RANK:
            raise _at_key(
                path,
                "fail-on",
                f"{value!r} is not a severity (error, warning or info)",
                'fail-on = "warning"',
            )
        config.fail_on = parse_fail_on(value)
    rules = section.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise _at_key(
            path,
            "rules",
            "must hold one table per rule code",
            "[tool.archform.rules.NET008] and the options below it",
        )
    config.rules = {str(k).upper(): dict(v) for k, v in rules.items()}
    if "exclude" in section:
        config.exclude = _patterns(section["exclude"], path, "exclude")
    if "extend-exclude" in section:
        config.extend_exclude = _patterns(section["extend-exclude"], path, "extend-exclude")
    if "force-exclude" in section:
        value = section["force-exclude"]
        if not isinstance(value, bool):
            raise _at_key(path, "force-exclude", "must be true or false", "force-exclude = true")
        config.force_exclude = value
    return config


def _patterns(value: Any, path: Path, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _at_key(
            path,
            key,
            "must be a list of glob patterns (strings)",
            f'{key} = [".github", "deploy/k8s", "*.helm.yaml"]',
        )
    return list(value)


def _at_key(path: Path, key: str, expected: str, example: str) -> SpecError:
    """A config error at the line of `key` inside the archform table."""
    where = "[tool.archform] " if path.name == "pyproject.toml" else ""
    return SpecError.at(
        str(path), key_position(path, key), f"{where}{key} {expected}", f"e.g. {example}"
    )


def key_position(path: Path, key: str) -> Pos:
    """Line and column of `key = ...` in the archform part of a config (1:1 if not found).

    tomllib keeps no positions, so the text is scanned: inside `[tool.archform]` (or at the
    top of `.archform.toml`), or written as a dotted key (`tool.archform.exclude = ...`).
    """
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return Pos(1, 1)
    name = rf"(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')"
    header = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
    plain = re.compile(rf"^(\s*){name}\s*=")
    dotted = re.compile(rf"^(\s*)(?:tool\s*\.\s*)?archform\s*\.\s*{name}\s*=")
    table = "" if path.name == ".archform.toml" else None
    for number, line in enumerate(lines, start=1):
        match = header.match(line)
        if match:
            table = re.sub(r"\s+", "", match.group(1))
            continue
        inside = table in ("tool.archform", "") and table is not None
        hit = plain.match(line) if inside else None
        if hit is None and table in (None, "", "tool"):
            hit = dotted.match(line)
        if hit is not None:
            return Pos(number, len(hit.group(1)) + 1)
    return Pos(1, 1)


def _codes(value: Any, path: Path, key: str, example: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _at_key(path, key, "must be a list of rule codes or prefixes (strings)", example)
    return split_codes(value)


def split_codes(values: Iterable[str]) -> list[str]:
    """Flatten comma-separated selectors, upper-cased."""
    return [part.strip().upper() for v in values for part in v.split(",") if part.strip()]


def parse_fail_on(value: Any, where: str = "--fail-on") -> Severity:
    """Validate a severity threshold."""
    if not isinstance(value, str) or value not in RANK:
        raise UsageError(f"{where}: {value!r} is not a severity", "use error, warning or info")
    sev: Severity = value  # type: ignore[assignment]  # value is one of RANK's keys
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

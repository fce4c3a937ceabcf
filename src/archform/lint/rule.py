"""Rule metadata, the explicit registry, and loading the rules package.

A rule is one module under `archform.lint.rules.<area>`; its module docstring is the rule's
documentation (sections: What it does / Why is this bad? / Example / Use instead /
References) and its `check` function is registered with the `@rule(...)` decorator, which
rejects duplicate codes and names.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from archform.lint.finding import Hit, Severity

if TYPE_CHECKING:
    from archform.lint.context import RuleContext

CODE_RE = re.compile(r"^[A-Z]{3}\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "References")
Phase = Literal["model", "suppressions"]
Check = Callable[["RuleContext", Any], Iterable[Hit]]


class NoOptions(BaseModel):
    """A rule without options."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, allow_inf_nan=False, defer_build=True
    )


class Options(BaseModel):
    """Base for rule options (thresholds): unknown keys, `true` for a number, NaN refused.

    The validator is built on first use (defer_build): a lint that sets no option of a rule
    never builds that rule's options model.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, allow_inf_nan=False, defer_build=True
    )


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered lint rule."""

    code: str
    name: str
    severity: Severity
    since: str
    check: Check
    options: type[BaseModel]
    doc: str
    module: str
    phase: Phase = "model"

    @property
    def area(self) -> str:
        """The code's three-letter area, e.g. TRN."""
        return self.code[:3]

    @property
    def summary(self) -> str:
        """The docstring's first line."""
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else ""

    def section(self, title: str) -> str:
        """The text of one `## title` section of the docstring ('' when absent)."""
        return sections(self.doc).get(title, "")


def sections(doc: str) -> dict[str, str]:
    """Split a rule docstring into its `## ` sections."""
    out: dict[str, str] = {}
    current: str | None = None
    buf: list[str] = []
    for line in doc.splitlines():
        if line.startswith("## "):
            if current is not None:
                out[current] = "\n".join(buf).strip()
            current, buf = line[3:].strip(), []
        elif current is not None:
            buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf).strip()
    return out


class Registry:
    """Rules by code; registration rejects duplicate codes and names."""

    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}

    def add(self, rule: Rule) -> None:
        """Register a rule."""
        if not CODE_RE.fullmatch(rule.code):
            raise ValueError(f"rule code {rule.code!r} must look like ABC123")
        if not NAME_RE.fullmatch(rule.name):
            raise ValueError(f"rule name {rule.name!r} must be kebab-case")
        if rule.code in self._rules:
            other = self._rules[rule.code]
            raise ValueError(f"duplicate rule code {rule.code}: {other.module} and {rule.module}")
        for other in self._rules.values():
            if other.name == rule.name:
                raise ValueError(f"duplicate rule name {rule.name}: {other.code} and {rule.code}")
        self._rules[rule.code] = rule

    def get(self, code: str) -> Rule | None:
        """A rule by code (case-insensitive)."""
        return self._rules.get(code.upper())

    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self._rules.values(), key=lambda r: r.code))

    def __len__(self) -> int:
        return len(self._rules)

    @property
    def codes(self) -> list[str]:
        """All codes, sorted."""
        return sorted(self._rules)


REGISTRY = Registry()


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    since: str = "0.1.0",
    options: type[BaseModel] = NoOptions,
    phase: Phase = "model",
    registry: Registry | None = None,
) -> Callable[[Check], Check]:
    """Register `check` as a rule; its module docstring is the rule's documentation."""

    def register(check: Check) -> Check:
        module = getattr(check, "__module__", "")
        doc = getattr(sys.modules.get(module), "__doc__", None) or ""
        (registry or REGISTRY).add(
            Rule(code, name, severity, since, check, options, doc, module, phase)
        )
        return check

    return register


def rule_modules() -> list[str]:
    """Names of every module under `archform.lint.rules` (area packages and rule modules), sorted.

    The rules package is one level of area packages holding one module per rule; listing the
    folders directly costs a fraction of `pkgutil.walk_packages` (about 6 ms at start-up).
    tests/lint/test_startup.py proves both list the same modules.
    """
    import archform.lint.rules as package

    names: list[str] = []
    for root in package.__path__:
        for area in os.scandir(root):
            if not area.is_dir() or not Path(area.path, "__init__.py").is_file():
                continue
            prefix = f"{package.__name__}.{area.name}"
            names.append(prefix)
            names.extend(
                f"{prefix}.{entry.name[:-3]}"
                for entry in os.scandir(area.path)
                if entry.name.endswith(".py") and entry.name != "__init__.py" and entry.is_file()
            )
    return sorted(names)


@cache
def load_rules() -> Registry:
    """Import every module of `archform.lint.rules`, in sorted order, and return the registry."""
    for name in rule_modules():
        importlib.import_module(name)
    return REGISTRY

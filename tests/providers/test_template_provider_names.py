"""Shared templates name no provider: each provider's templates live in its package.

Counts the provider names (each provider package's name, and the Pulumi SDK module and
package names of those with an SDK) in the shared templates/ folder, everywhere it is code:
inside Jinja tags (``{{ }}``, ``{% %}``) of every file, in Ansible's conditions (``when:``,
``changed_when:``, ``failed_when:``, ``until:``), and in shipped Python and shell (strings and
identifiers, not comments or docstrings). Text outside tags is output (a README's prose), not
code that dispatches on a provider. What differs per provider is a fact its package supplies
or a template in its package's templates/ folder (`archform.render.env.provider_template`).
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import tokenize
from collections import Counter
from pathlib import Path

from jinja2 import Environment

from archform import providers
from archform.bundled import templates_dir
from archform.render.targets.common.clouds import cloud

CONDITION = re.compile(r"^\s*(?:-\s+)?(?:when|changed_when|failed_when|until)\s*:\s*(.*)$")
SHELLS = ("#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash", "#!/usr/bin/env sh")
PYTHONS = ("#!/usr/bin/env python", "#!/usr/bin/python")
# The lexer of archform's own environment (default delimiters, which Ansible uses too).
LEXER = Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def words() -> set[str]:
    """Every provider's name and its Pulumi SDK's package and module names."""
    found = set(providers.names())
    for name in providers.names():
        sdk = cloud(name).pulumi_sdk
        if sdk is not None:
            found |= {sdk[0], sdk[0].replace("-", "_"), sdk[0].removeprefix("pulumi-")}
    return found


def _patterns(names: set[str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(in strings: lower case as code writes it, in identifiers: any case) whole-word."""
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    word = r"(?<![A-Za-z0-9])(" + alternatives + r")(?![A-Za-z0-9])"
    return re.compile(word), re.compile(word, re.IGNORECASE)


def _count(found: Counter[str], pattern: re.Pattern[str], text: str) -> None:
    found.update(m.group(1).lower() for m in pattern.finditer(text))


def in_jinja(text: str, names: set[str]) -> Counter[str]:
    """Names inside Jinja tags: identifiers (snake_case parts) and string literals."""
    in_string, in_name = _patterns(names)
    found: Counter[str] = Counter()
    for _, kind, value in LEXER.lex(text):
        if kind == "name":
            _count(found, in_name, value.replace("_", " "))
        elif kind == "string":
            _count(found, in_string, value)
    return found


def in_conditions(text: str, names: set[str]) -> Counter[str]:
    """Names in Ansible conditions (bare Jinja): a key's value, or the list items under it."""
    _, in_name = _patterns(names)
    found: Counter[str] = Counter()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = CONDITION.match(line)
        if not match:
            continue
        expressions = [match.group(1)] if match.group(1).strip() else []
        indent = len(line) - len(line.lstrip())
        for item in lines[i + 1 :]:
            if not item.strip() or len(item) - len(item.lstrip()) <= indent:
                break
            expressions.append(item.strip().removeprefix("- "))
        for expression in expressions:
            _count(found, in_name, expression.replace("_", " "))
    return found


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            doc = body[0].value if body and isinstance(body[0], ast.Expr) else None
            if isinstance(doc, ast.Constant) and isinstance(doc.value, str):
                lines |= set(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return lines


def in_python(text: str, names: set[str]) -> Counter[str]:
    """Names in Python code: string literals and identifiers, not comments or docstrings."""
    in_string, in_name = _patterns(names)
    skip = _docstring_lines(ast.parse(text))
    found: Counter[str] = Counter()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.start[0] in skip:
            continue
        if tok.type == tokenize.NAME:
            _count(found, in_name, tok.string.replace("_", " "))
        elif tok.type == tokenize.STRING:
            _count(found, in_string, tok.string)
    return found


def in_shell(text: str, names: set[str]) -> Counter[str]:
    """Names in shell code: every word outside comments (a line's `#` and what follows)."""
    _, in_name = _patterns(names)
    found: Counter[str] = Counter()
    for line in text.splitlines():
        code = re.sub(r"(^|\s)#.*$", "", line)
        _count(found, in_name, code.replace("_", " "))
    return found


def _kind(path: Path, text: str) -> str:
    name = path.name.removesuffix(".j2")
    first = text.split("\n", 1)[0]
    if name.endswith(".py") or first.startswith(PYTHONS):
        return "python"
    if name.endswith(".sh") or first.startswith(SHELLS):
        return "shell"
    return "other"


def count(root: Path, names: set[str]) -> Counter[tuple[str, str]]:
    """(file under root, name) -> occurrences in code, over every file of the shared folder."""
    out: Counter[tuple[str, str]] = Counter()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        # tool caches (__pycache__, .ruff_cache, .mypy_cache) are not shipped: the wheel's
        # templates come from git's files
        if any(
            part == "__pycache__" or part.startswith(".") for part in path.relative_to(root).parts
        ):
            continue
        text = path.read_text("utf-8")
        found = Counter[str]()
        if path.suffix in (".j2", ".yml", ".yaml"):  # archform's Jinja, or Ansible's own
            found += in_jinja(text, names) + in_conditions(text, names)
        else:
            kind = _kind(path, text)
            if kind == "python":
                found += in_python(text, names)
            elif kind == "shell":
                found += in_shell(text, names)
        rel = path.relative_to(root).as_posix()
        out.update({(rel, name): n for name, n in found.items()})
    return out


def test_shared_templates_name_no_provider() -> None:
    assert dict(count(templates_dir(), words())) == {}


def test_every_provider_template_lives_in_a_provider_package() -> None:
    """No shared folder is named after a provider (its files belong in the provider's package)."""
    names = words()
    folders = {p.relative_to(templates_dir()).as_posix() for p in templates_dir().rglob("*")}
    assert sorted(f for f in folders for part in f.split("/") if part in names) == []


def test_the_count_sees_a_planted_name_in_each_kind_of_code(tmp_path: Path) -> None:
    """In a copy of templates/: one planted name per kind of code counts; prose does not."""
    root = tmp_path / "templates"
    shutil.copytree(templates_dir(), root, ignore=shutil.ignore_patterns("__pycache__"))
    names = words()
    assert count(root, names) == count(templates_dir(), names)
    plants = {
        # a branch in a Jinja tag
        "ansible/roles/health/files/nhc.conf.j2": '{% if view.provider == "gcp" %}x{% endif %}\n',
        # an Ansible condition in a role copied verbatim
        "ansible/roles/munge/tasks/main.yml": (
            "- name: Planted\n  ansible.builtin.debug: {msg: x}\n"
            "  when:\n    - archform_provider == 'onprem'\n"
        ),
        # an identifier in shipped Python
        "pulumi/fleet/workload.py": "AZURE_ONLY = True\n",
        # a word in a shipped shell script
        "ansible/roles/health/files/prolog.sh": "[ -e /etc/aws-only ] || true\n",
    }
    for rel, text in plants.items():
        path = root / rel
        path.write_text(path.read_text("utf-8") + text, "utf-8")
    added = count(root, names) - count(templates_dir(), names)
    assert dict(added) == {
        ("ansible/roles/health/files/nhc.conf.j2", "gcp"): 1,
        ("ansible/roles/munge/tasks/main.yml", "onprem"): 1,
        ("pulumi/fleet/workload.py", "azure"): 1,
        ("ansible/roles/health/files/prolog.sh", "aws"): 1,
    }


def test_prose_comments_and_docstrings_are_not_code() -> None:
    names = words()
    assert in_jinja("AWS Global Accelerator on aws {# gcp #}\n", names) == Counter()
    assert in_python('"""On aws."""\n# gcp\nX = 1\n', names) == Counter()
    assert in_shell("echo ok  # on azure\n# onprem\n", names) == Counter()
    assert in_conditions("- name: on aws\n  when: ready\n", names) == Counter()
    assert in_jinja("{{ fleet.aws_role_s }}", names) == Counter({"aws": 1})


def test_every_fleet_provider_defines_every_readme_section_the_shared_readme_calls() -> None:
    """A provider with fleets supplies each macro of the fleet README (else render fails)."""
    from archform.spec.provider import spec_of

    shared = (templates_dir() / "pulumi/fleet/README.md.j2").read_text("utf-8")
    called = set(re.findall(r"\bp\.(\w+)\(", shared))
    assert {"kubeconfig_plugin", "global_entry", "access"} <= called
    fleets = [name for name in providers.names() if spec_of(name).fleets]
    assert fleets
    for name in fleets:
        folder = providers.templates(name)
        assert folder is not None, name
        sections = (folder / "fleet/README.sections.j2").read_text("utf-8")
        defined = set(re.findall(r"\{% macro (\w+)\(", sections))
        assert defined == called, (name, sorted(called ^ defined))

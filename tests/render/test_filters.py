from __future__ import annotations

import ast
import json

import pytest
from ruamel.yaml import YAML

from archform.render.env import environment
from archform.render.filters import (
    FilterError,
    ansible_literal,
    conf_value,
    json_literal,
    py_literal,
    shell_quote,
    yaml_literal,
)

HOSTILE = [
    "plain",
    'it\'s "quoted"',
    "line1\nline2\r\n",
    "{{ lookup('pipe', 'id') }}",
    "{% for x in y %}",
    "$(rm -rf /)",
    "`id`",
    "&anchor *alias",
    "- not: a list",
    "'); import os; os.system('id'); ('",
    "\\x00\\u2028 \u2028 end",
    "# not a comment",
    "ünïcødé ✓",
    "emoji 😀 and U+10000 \U00010000 and U+10FFFF \U0010ffff",
    "\\ud83d\\ude00 is text, not an escape",
    "\\😀",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_python_literal_is_inert(value: str) -> None:
    source = f"x = {py_literal(value)}\n"
    tree = ast.parse(source)
    assert len(tree.body) == 1
    node = tree.body[0]
    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    assert node.value.value == value


@pytest.mark.parametrize("value", HOSTILE)
def test_yaml_literal_loads_back_to_the_same_value(value: str) -> None:
    text = f"key: {yaml_literal(value)}\nlist: [{yaml_literal(value)}]\n"
    data = YAML(typ="safe").load(text)
    assert data == {"key": value, "list": [value]}
    assert json.loads(json_literal(value)) == value


@pytest.mark.parametrize("value", HOSTILE)
def test_ansible_literal_marks_templatable_strings_unsafe(value: str) -> None:
    rendered = ansible_literal(value)
    if any(c in value for c in "{}%#`") or "$(" in value:
        assert rendered.startswith("!unsafe ")
    yaml = YAML(typ="rt")
    data = yaml.load(f"key: {rendered}\n")
    assert str(data["key"]) == value


@pytest.mark.parametrize("value", HOSTILE)
def test_shell_quote_is_one_word(value: str) -> None:
    import shlex

    assert shlex.split(f"echo {shell_quote(value)}") == ["echo", value]


def test_conf_value_refuses_injection() -> None:
    assert conf_value("gpu:h100:8") == "gpu:h100:8"
    assert conf_value(True) == "YES"
    for bad in ("a b", "x\nFoo=1", "x#y"):
        with pytest.raises(FilterError):
            conf_value(bad)


def test_filters_refuse_live_objects() -> None:
    with pytest.raises(FilterError):
        py_literal(object())
    with pytest.raises(FilterError):
        json_literal({"a": {1, 2}})
    with pytest.raises(FilterError):
        json_literal(float("nan"))


def test_nested_values_round_trip() -> None:
    value = {"a": [1, 2.5, None, True, "x'y"], "b": {"c": "$(id)"}}
    assert ast.literal_eval(py_literal(value)) == value
    assert json.loads(json_literal(value)) == value


def test_environment_is_strict_and_has_no_randomness() -> None:
    from jinja2 import UndefinedError

    env = environment()
    assert "random" not in env.filters and "tojson" not in env.filters
    assert "lipsum" not in env.globals and "cycler" not in env.globals
    with pytest.raises(UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.from_string("{{ v | py }}").render(v="a'b") == '"a\'b"'


def test_conf_filter_refuses_a_trailing_newline() -> None:
    """Issue 24: `$` in the config filter's pattern let `"x\\n"` through into slurm.conf."""
    from archform.render.filters import FilterError, conf_value

    assert conf_value("gpu:8") == "gpu:8"
    with pytest.raises(FilterError):
        conf_value("gpu:8\n")

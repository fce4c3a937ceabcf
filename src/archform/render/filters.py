"""Typed quoting filters: the only way a value enters generated code.

Each filter turns a plain value (str, int, float, bool, None, list, dict of those) into
a literal of one target language. A typed view record (frozen dataclass) is first turned
into plain data field by field (render.plain); anything else is refused, so a live object
can never leak into output.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import is_dataclass
from typing import Any

from archform.render.plain import plain

_JINJA_OR_ANSIBLE = re.compile(r"[{}%#]|\$\(|`")


class FilterError(ValueError):
    """A value that the target language cannot represent safely."""


def _unview(value: Any) -> Any:
    """View records (dataclasses) anywhere in `value` as plain dicts; the rest unchanged."""
    if is_dataclass(value) and not isinstance(value, type):
        return plain(value)
    if isinstance(value, list | tuple) and any(is_dataclass(v) for v in value):
        return [_unview(v) for v in value]
    return value


def _check_plain(value: Any, where: str = "value") -> None:
    if value is None or isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FilterError(f"{where}: non-finite float {value!r}")
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_plain(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise FilterError(f"{where}: mapping key {key!r} is not a string")
            _check_plain(item, f"{where}.{key}")
        return
    raise FilterError(f"{where}: {type(value).__name__} cannot be rendered as a literal")


def py_literal(value: Any) -> str:
    """A Python literal (str via repr, so quotes/newlines are escaped)."""
    value = _unview(value)
    _check_plain(value)
    return _py(value)


def _py(value: Any) -> str:
    if isinstance(value, str | bool | int) or value is None:
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"


# Characters written as \uXXXX escapes: controls, YAML's non-printables, the line breaks
# YAML 1.1 readers (PyYAML, Ansible) would fold (U+0085, U+2028, U+2029), the BOM and the
# surrogates. Everything else, emoji included, is written as UTF-8: escaping characters above
# U+FFFF as JSON surrogate pairs ("\ud83d\ude80") makes YAML readers decode two unpaired
# surrogates that cannot be encoded again.
_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_literal(value: Any) -> str:
    """A JSON literal; also a valid YAML flow scalar/collection. Keys keep their order."""
    value = _unview(value)
    _check_plain(value)
    return _dumps(value)


def yaml_literal(value: Any) -> str:
    """A YAML flow value: JSON syntax, which every YAML 1.2 parser reads back exactly."""
    return json_literal(value)


def ansible_literal(value: Any) -> str:
    """A YAML value for Ansible files: strings that could be templated are tagged !unsafe."""
    value = _unview(value)
    _check_plain(value)
    return _ansible(value)


def _ansible(value: Any) -> str:
    if isinstance(value, str):
        quoted = _dumps(value)
        return f"!unsafe {quoted}" if _JINJA_OR_ANSIBLE.search(value) else quoted
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_ansible(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_dumps(k)}: {_ansible(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, allow_nan=False)


def shell_quote(value: Any) -> str:
    """One shell word (POSIX quoting)."""
    if isinstance(value, bool) or value is None:
        raise FilterError(f"shell: refusing to quote {value!r}")
    if isinstance(value, int | float):
        return shlex.quote(str(value))
    if not isinstance(value, str):
        raise FilterError(f"shell: {type(value).__name__} is not a string")
    return shlex.quote(value)


_CONF_SAFE = re.compile(r"[A-Za-z0-9_./:,=+@%\[\]()-]*")


def conf_value(value: Any) -> str:
    """A value for key=value config files (slurm.conf, nccl.conf): no spaces, '#' or newlines."""
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, int | float):
        return str(value)
    if not isinstance(value, str) or not _CONF_SAFE.fullmatch(value):
        raise FilterError(f"config value {value!r} has characters a config file cannot hold")
    return value


FILTERS: dict[str, Callable[[Any], str]] = {
    "py": py_literal,
    "json": json_literal,
    "yaml": yaml_literal,
    "ansible": ansible_literal,
    "sh": shell_quote,
    "conf": conf_value,
}

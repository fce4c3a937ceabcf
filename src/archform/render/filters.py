"""Typed quoting filters: the only way a value enters generated code.

Each filter turns a plain value (str, int, float, bool, None, list, dict of those) into
a literal of one target language. Anything else is refused, so a live object can never
leak into output.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from typing import Any

_JINJA_OR_ANSIBLE = re.compile(r"[{}%#]|\$\(|`")


class FilterError(ValueError):
    """A value that the target language cannot represent safely."""


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


def json_literal(value: Any) -> str:
    """A JSON literal; also a valid YAML flow scalar/collection. Keys keep their order."""
    _check_plain(value)
    return json.dumps(value, ensure_ascii=True, allow_nan=False)


# JSON writes a character outside the BMP as a UTF-16 surrogate pair (backslash-u d83d,
# backslash-u de00). YAML reads each such escape as one code point, so the pair becomes two
# lone surrogates that no YAML reader can encode
# (https://yaml.org/spec/1.2.2/#57-escaped-characters): YAML output uses YAML's 32-bit
# escape (backslash-U and 8 hex digits) instead. The lookbehind keeps an escaped backslash
# followed by the letters "ud83d" intact.
_SURROGATE_PAIR = re.compile(r"(?<!\\)((?:\\\\)*)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})")


def _astral(match: re.Match[str]) -> str:
    high, low = int(match.group(2), 16), int(match.group(3), 16)
    code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
    return f"{match.group(1)}\\U{code:08x}"


def _yaml_json(value: Any) -> str:
    return _SURROGATE_PAIR.sub(_astral, json.dumps(value, ensure_ascii=True, allow_nan=False))


def yaml_literal(value: Any) -> str:
    """A YAML flow value: JSON syntax with astral characters as YAML 32-bit escapes."""
    _check_plain(value)
    return _yaml_json(value)


def ansible_literal(value: Any) -> str:
    """A YAML value for Ansible files: strings that could be templated are tagged !unsafe."""
    _check_plain(value)
    return _ansible(value)


def _ansible(value: Any) -> str:
    if isinstance(value, str):
        quoted = _yaml_json(value)
        return f"!unsafe {quoted}" if _JINJA_OR_ANSIBLE.search(value) else quoted
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_ansible(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_yaml_json(k)}: {_ansible(v)}" for k, v in value.items()) + "}"
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


_CONF_SAFE = re.compile(r"^[A-Za-z0-9_./:,=+@%\[\]()-]*$")


def conf_value(value: Any) -> str:
    """A value for key=value config files (slurm.conf, nccl.conf): no spaces, '#' or newlines."""
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, int | float):
        return str(value)
    if not isinstance(value, str) or not _CONF_SAFE.match(value):
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

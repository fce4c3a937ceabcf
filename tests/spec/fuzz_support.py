"""Shared by the command fuzzers: in-process CLI runs, blueprint mutation, value strategies."""

from __future__ import annotations

import datetime as dt
import io
import ipaddress
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import typer
from hypothesis import settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from typer.testing import CliRunner

from archform.cli import _core, app
from support import bundled_blueprints

# Command invocations per command name, for the run summary and the CI case-count check.
RUNS: Counter[str] = Counter()


def examples(weight: float) -> int:
    """This test's max_examples: `weight` times the loaded profile's max_examples."""
    return max(3, round(settings.default.max_examples * weight))


@cache
def _command() -> Any:
    return typer.main.get_command(app)


@dataclass(frozen=True, slots=True)
class Outcome:
    """Exit code and output of one in-process run."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def crashed(self) -> bool:
        """Exit 3 (the internal-error path) or a traceback anywhere in the output."""
        return self.code == 3 or "Traceback" in self.stderr or "Traceback" in self.stdout

    def explain(self) -> str:
        return f"archform {' '.join(self.args)} -> {self.code}\n{self.stderr[-1500:]}"


class _Main:
    """What `_core.run` calls: the Typer app with fixed arguments (the command is built once)."""

    def __init__(self, args: Sequence[str]) -> None:
        self.args = list(args)

    def __call__(self, standalone_mode: bool = False) -> Any:
        return _command().main(
            args=self.args, prog_name="archform", standalone_mode=standalone_mode
        )


_RUNNER = CliRunner()


def invoke(*args: str) -> Outcome:
    """Run `archform ARGS` in process through the real entry point's error handling."""
    RUNS[args[0]] += 1
    with _RUNNER.isolation() as streams:
        out, err = streams[0], streams[1]
        try:
            _core.run(_Main(args))  # type: ignore[arg-type]
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace") if err is not None else ""
    return Outcome(tuple(args), code, stdout, stderr)


def assert_no_crash(outcome: Outcome) -> None:
    assert not outcome.crashed(), outcome.explain()


# --- blueprints as data ------------------------------------------------------------------
TEXTS = {p.stem: p.read_text("utf-8") for p in bundled_blueprints()}


@cache
def _docs() -> list[tuple[str, int, Any]]:
    yaml = YAML(typ="safe")
    return [
        (stem, i, doc) for stem, text in TEXTS.items() for i, doc in enumerate(yaml.load_all(text))
    ]


def documents() -> list[tuple[str, int, Any]]:
    """(blueprint stem, document index, plain data) of every bundled document."""
    return _docs()


def copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [copy(v) for v in data]
    return data


def locations(data: Any, loc: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in a document."""
    out = [loc] if loc else []
    if isinstance(data, dict):
        for k, v in data.items():
            out += locations(v, (*loc, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += locations(v, (*loc, i))
    return out


def put(data: Any, loc: tuple[Any, ...], value: Any) -> None:
    node = data
    for part in loc[:-1]:
        node = node[part]
    node[loc[-1]] = value


def dump(docs: Sequence[Any]) -> str:
    """YAML as a user would write it (block style, unicode kept)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.allow_unicode = True
    yaml.default_flow_style = False
    yaml.width = 4096
    buf = io.StringIO()
    yaml.dump_all(list(docs), buf)
    return buf.getvalue()


def blueprint_with(stem: str, index: int, data: Any) -> str:
    """The blueprint `stem` with document `index` replaced by `data`, as YAML text."""
    docs = [copy(d) for s, _, d in documents() if s == stem]
    docs[index] = data
    return dump(docs)


# --- values -----------------------------------------------------------------------------
FREE_TEXT = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85\ufeff"
    )
    | st.sampled_from("\t\n'\"\\$`{}%#&*!|>:- "),
    min_size=3,
    max_size=60,
).filter(lambda s: s.strip() != "")

DATES = st.one_of(
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 1, 1)),
    st.sampled_from(["2027-02-30", "2026-13-01", "2026-00-10", "9999-99-99", "2026-2-3"]),
    st.builds(
        lambda y, m, d: f"{y:04d}-{m:02d}-{d:02d}",
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
    ),
)

NUMBERS = st.one_of(
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, 0.0, -0.0]),
    st.sampled_from([".inf", "-.inf", ".nan", "1e999", "-1e999", "Infinity", "NaN"]),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.builds(lambda n: 10**n, st.integers(18, 400)),
)


def _net(version: int, bits: int, prefix: int) -> str:
    width = 32 if version == 4 else 128
    prefix = prefix % (width + 1)
    value = (bits % (1 << width)) >> (width - prefix) << (width - prefix) if prefix else 0
    net = ipaddress.ip_network((value, prefix))
    return str(net)


CIDRS = st.one_of(
    st.builds(lambda b, p: _net(4, b, p), st.integers(0, 2**32 - 1), st.integers(0, 32)),
    st.builds(lambda b, p: _net(6, b, p), st.integers(0, 2**128 - 1), st.integers(0, 128)),
    st.sampled_from(["0.0.0.0/0", "::/0", "2000::/3", "0.0.0.0/1", "::ffff:10.0.0.0/104"]),
)

VALUES: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(min_value=-1e6, max_value=1e6),
    FREE_TEXT,
    DATES.map(str),
    CIDRS,
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@dataclass(frozen=True, slots=True)
class Raw:
    """A YAML token written verbatim (an impossible date, `.inf`, a 5,000-digit integer)."""

    token: str


def dump_raw(docs: Sequence[Any]) -> str:
    """Like `dump`, with every Raw value written as its bare token."""
    tokens: list[str] = []

    def swap(node: Any) -> Any:
        if isinstance(node, Raw):
            tokens.append(node.token)
            return f"RAWTOKEN{len(tokens) - 1}X"
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return node

    text = dump([swap(d) for d in docs])
    for i, token in enumerate(tokens):
        text = text.replace(f"RAWTOKEN{i}X", token)
    return text


HAZARDS: st.SearchStrategy[Any] = st.one_of(
    NUMBERS,
    DATES,
    st.sampled_from(
        ["2027-02-30", "2026-13-01", ".inf", "-.inf", ".nan", "1e999", "0x1F", "0o17", "1_000"]
    ).map(Raw),
    st.integers(4290, 6000).map(lambda n: Raw("9" * n)),
    st.builds(
        lambda y, m, d: Raw(f"{y:04d}-{m:02d}-{d:02d}"),
        st.integers(1, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
    ),
)

"""Is a config option known to a Slurm release? Read from the release's own parser tables.

Slurm's parser matches keys case-insensitively (src/common/parse_config.c compares them
with xstrcasecmp), so lookups here do too. A key missing from the release's table makes
slurmctld fail with "Parsing error at unrecognized key"; a key with the `_defunct_option`
handler is accepted and logged as defunct; some keys are read and then refused or ignored
with an "obsolete"/"has been removed" message (e.g. FastSchedule).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Literal

from archform.spec.slurm.releases import (
    SlurmVersion,
    parse_version,
    release_data,
    supported_releases,
)

Kind = Literal["unknown", "removed", "added_later", "defunct", "obsolete", "plugin"]

# slurm.conf options whose value names plugins: option -> plugin type (src/plugins/<type>/)
PLUGIN_OPTIONS = {
    "accountingstoragetype": "accounting_storage",
    "authtype": "auth",
    "credtype": "cred",
    "jobacctgathertype": "jobacct_gather",
    "jobcomptype": "jobcomp",
    "mpidefault": "mpi",
    "preempttype": "preempt",
    "prioritytype": "priority",
    "proctracktype": "proctrack",
    "schedulertype": "sched",
    "selecttype": "select",
    "switchtype": "switch",
    "taskplugin": "task",
    "topologyplugin": "topology",
}


@dataclass(frozen=True)
class Finding:
    """Why an option is not (fully) accepted by a release."""

    kind: Kind
    message: str
    hint: str


def known_options(
    release: str, file: str = "slurm.conf", line: str | None = None
) -> dict[str, str]:
    """Option name -> 'accepted' | 'defunct' for a file (or one line kind, e.g. NodeName)."""
    conf = release_data(release)["files"][file]
    table: dict[str, str] = conf["lines"].get(line, {}) if line else conf["options"]
    return table


def _lookup(table: dict[str, str], key: str) -> tuple[str, str] | None:
    low = key.lower()
    for name, status in table.items():
        if name.lower() == low:
            return name, status
    return None


def _history(key: str, file: str) -> tuple[str | None, str | None, str | None]:
    """(canonical name, last release that had it, first release that had it) over all tables."""
    canonical = last = first = None
    for release in supported_releases():
        hit = _lookup(known_options(release, file), key)
        if hit:
            canonical = hit[0]
            first = first or release
            last = release
    return canonical, last, first


def _other_file(key: str, file: str) -> str | None:
    """The other config file (of any release) whose table has `key`, if any."""
    for release in reversed(supported_releases()):
        for other, conf in release_data(release)["files"].items():
            if other != file and _lookup(conf["options"], key):
                return str(other)
    return None


def _suggest(key: str, table: dict[str, str]) -> str | None:
    lowered = {name.lower(): name for name, status in table.items() if status == "accepted"}
    close = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[close[0]] if close else None


def _next_release(release: str) -> str:
    releases = supported_releases()
    return releases[releases.index(release) + 1]


def _plugin_finding(version: SlurmVersion, key: str, value: str) -> Finding | None:
    kind = PLUGIN_OPTIONS.get(key.lower())
    if kind is None:
        return None
    data = release_data(version.release)
    have: list[str] = data["plugins"].get(kind, [])
    aliases = [a.lower() for a in data.get("topology_plugin_aliases", [])]
    for item in (v.strip() for v in value.split(",") if v.strip()):
        if kind == "topology" and (
            item.lower() in aliases or any(a in item.lower() for a in aliases if "/" not in a)
        ):
            continue  # read_config.c maps it to the release's flat topology plugin
        prefix, _, name = item.partition("/")
        if prefix.lower() != kind.replace("_", "") and prefix.lower() != kind:
            continue  # not a plugin name (e.g. MpiDefault=none)
        if name in have:
            continue
        was = [r for r in supported_releases() if name in release_data(r)["plugins"].get(kind, [])]
        when = (
            f"removed in Slurm {_next_release(was[-1])}"
            if was and parse_version(was[-1]) < version
            else f"added in Slurm {was[0]}"
            if was
            else "not a plugin of any supported Slurm"
        )
        close = difflib.get_close_matches(name, have, n=1)
        hint = f"use {key}={kind}/{close[0]}" if close else f"choose one of {', '.join(have)}"
        return Finding(
            "plugin",
            f"{key}={item}: plugin {item} is not in Slurm {version.release} ({when})",
            hint,
        )
    return None


def check_option(
    version: SlurmVersion, key: str, value: Any = None, file: str = "slurm.conf"
) -> Finding | None:
    """None when `key=value` is a live option of the release; else why not, with a hint."""
    table = known_options(version.release, file)
    hit = _lookup(table, key)
    if hit is None:
        canonical, last, first = _history(key, file)
        if canonical and last and parse_version(last) < version:
            return Finding(
                "removed",
                f"{canonical} was removed in Slurm {_next_release(last)} (last in {last}); "
                f"the blueprint declares Slurm {version}",
                "drop it (slurmctld stops with 'Parsing error at unrecognized key')",
            )
        if canonical and first:
            return Finding(
                "added_later",
                f"{canonical} is not in Slurm {version.release} (added in {first})",
                f"upgrade to Slurm {first} or drop it",
            )
        elsewhere = _other_file(key, file)
        if elsewhere:
            return Finding(
                "unknown",
                f"{key} is not a {file} option of Slurm {version.release}: it is a "
                f"{elsewhere} option",
                f"drop it from slurm_conf ({elsewhere} is written by archform)",
            )
        guess = _suggest(key, table)
        return Finding(
            "unknown",
            f"{key} is not a {file} option of Slurm {version.release}",
            f"did you mean {guess}?" if guess else "see `man slurm.conf` for the option names",
        )
    name, status = hit
    if status == "defunct":
        return Finding(
            "defunct",
            f"{name} is defunct in Slurm {version.release}: accepted and ignored (slurmctld "
            "logs 'The option is defunct')",
            "drop it",
        )
    text = "" if value is None else str(value)
    if isinstance(value, bool):
        text = "yes" if value else "no"
    for entry in release_data(version.release)["obsolete"]:
        if entry["option"].lower() != name.lower() or file != "slurm.conf":
            continue
        wanted = entry["value"]
        if wanted is not None and wanted.lower() not in [p.lower() for p in text.split(",")]:
            continue
        if wanted is None and any(
            e["option"] == entry["option"]
            and e["value"] is not None
            and e["value"].lower() == text.lower()
            for e in release_data(version.release)["obsolete"]
        ):
            continue  # the value-specific message applies instead
        return Finding(
            "obsolete",
            f"{name}{'=' + text if text else ''} is obsolete in Slurm {version.release}: "
            f"slurmctld logs '{entry['message']}'"
            + (" and stops" if entry["level"] == "fatal" else ""),
            "drop it",
        )
    if file == "slurm.conf" and text:
        return _plugin_finding(version, name, text)
    return None

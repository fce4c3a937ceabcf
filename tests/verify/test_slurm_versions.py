"""Generated Slurm files checked by the parser of the declared release (issue 15).

Parsers: Debian 12's slurmctld 22.05 (/usr) and 24.11.5 / 26.05.5 built from Debian's
source packages by scripts/build-slurm.sh into /opt/archform/slurm/<version>. A missing
parser is a skip locally and a failure in CI (ARCHFORM_REQUIRE_TOOLS=1).

The option tables (archform/spec/data/slurm/<release>.json, read from each release's
src/common/read_config.c) are cross-checked against the real parsers: every option the
table says a release accepts is recognized by its slurmctld; options the table says were
removed or not yet added are refused ("Parsing error at unrecognized key"); defunct and
obsolete options are logged as such.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

import support
from archform.lint.engine import lint
from archform.lint.rule import load_rules
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths, load_text, slurm
from archform.spec.models.training import TrainingCluster
from archform.verify import Result
from archform.verify.checks import slurm as slurm_check
from archform.verify.checks import slurm_parsers
from archform.verify.checks.slurm_parsers import Parser
from archform.verify.checks.slurm_sandbox import rewrite_slurm_conf

BUILT = ("22.05", "24.11", "26.05")  # the parsers CI installs (.ci/run)
# Keys that open a line of their own (parsed by a handler) or are arrays: not probed alone.
LINE_TYPES = {"S_P_ARRAY", "S_P_LINE", "S_P_EXPLINE", "S_P_POINTER", "S_P_PLAIN_STRING"}
DUMMY = {
    "S_P_STRING": "x",
    "S_P_BOOLEAN": "yes",
    "S_P_FLOAT": "1.0",
    "S_P_DOUBLE": "1.0",
    "S_P_LONG_DOUBLE": "1.0",
}


def _unobtainable(release: str) -> str | None:
    """Why scripts/build-slurm.sh could not fetch `release`'s source here, if it said so.

    The script leaves ``<root>/<version>.unobtainable`` when the Debian mirror this machine
    reaches does not serve the source tarball (a 404 is a final answer, not a tool missing
    from the machine); a build that fails for any other reason leaves no such file.
    """
    root = Path(os.environ.get("ARCHFORM_SLURM_BUILD_ROOT", "/opt/archform/slurm"))
    for marker in sorted(root.glob(f"{release}.*.unobtainable")):
        return marker.read_text(errors="replace").strip() or str(marker)
    return None


def _parser(release: str) -> Parser:
    for parser in slurm_parsers.installed():
        if parser.version.release == release:
            return parser
    unobtainable = _unobtainable(release)
    if unobtainable:
        # A fact about the registry, recorded by build-slurm.sh from the mirror's own answer
        # (404 for 26.05.5's .dsc and orig tarball, though `apt-cache showsrc` lists it): no
        # build can exist, so this skips in CI too and says why (tests/test_skip_sites.py).
        pytest.skip(f"slurmctld {release}: its source cannot be fetched here ({unobtainable})")
    reason = (
        f"needs slurmctld {release} (run scripts/build-slurm.sh, or set "
        f"{slurm_parsers.ENV}; searched {', '.join(slurm_parsers.prefixes())})"
    )
    if support.REQUIRE_TOOLS:
        pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
    pytest.skip(reason)


def _variant(tmp_path: Path, stem: str, **changes: object) -> Path:
    doc = next(
        d
        for d in load_paths([support.BLUEPRINTS / f"{stem}.yaml"]).documents
        if isinstance(d.model, TrainingCluster)
    )
    data = doc.model.model_dump(mode="json", exclude_none=True)
    for key, value in changes.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    loaded = load_text(json.dumps(data), "variant.yaml")
    out = tmp_path / "variant"
    write_tree(out, build_files(loaded))
    return out


def _by(results: list[Result], suffix: str) -> list[Result]:
    return [r for r in results if r.artifact.endswith(suffix)]


def _parse_log(parser: Parser, extra: list[str], tmp: Path) -> str:
    """Start `parser` on the smoke blueprint's sandboxed slurm.conf plus `extra` lines; log."""
    tree = _variant(tmp, "onprem-cpu-smoke", scheduler={"version": parser.version.release})
    text = (tree / "ansible/roles/slurm/files/slurm.conf").read_text()
    sandbox = tmp / "sandbox"
    sandbox.mkdir()
    conf, _ = rewrite_slurm_conf(text, sandbox, socket.gethostname().split(".")[0])
    (sandbox / "slurm.conf").write_text(conf + "\n".join(extra) + "\n")
    (sandbox / "cgroup.conf").write_text("CgroupPlugin=autodetect\n")
    try:
        proc = subprocess.run(
            [str(parser.slurmctld), "-D", "-c", "-i", "-f", str(sandbox / "slurm.conf")],
            capture_output=True,
            text=True,
            timeout=20,
            env={"SLURM_CONF": str(sandbox / "slurm.conf"), "PATH": "/usr/bin:/bin"},
        )
        out = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:  # it started: parsing went through
        out = (exc.stdout or b"").decode() + (exc.stderr or b"").decode()
    log = sandbox / "slurmctld.log"
    return out + (log.read_text(errors="replace") if log.exists() else "")


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("release", slurm.supported_releases())
def test_each_release_renders_and_starts_its_own_or_neighbouring_slurmctld(
    tmp_path: Path, release: str
) -> None:
    if support.REQUIRE_TOOLS:
        for built in BUILT:
            if not _unobtainable(built):
                _parser(built)
    installed = [p.version for p in slurm_parsers.installed()]
    if not installed:
        _parser(release)  # skips (or fails in CI) with the reason
    tree = _variant(
        tmp_path,
        "aws-p5-efa-fsx",
        scheduler={"version": release, "health_checks": ["nhc", "dcgm"]},
    )
    results = slurm_check.run_check(tree)
    daemons = _by(results, "(slurmctld)")
    for result in daemons:
        assert result.status == "passed", result.detail
        assert " UP; 0 error/warning line(s)" in result.detail, result.detail
    (versions,) = _by(results, "(versions)")
    assert versions.status == "passed", versions.detail
    older = [v for v in installed if v.release < release]
    newer = [v for v in installed if v.release > release]
    if release in {v.release for v in installed}:
        assert len(daemons) == 1
        assert f"validated by its own release's parser, {release}." in versions.detail
        assert f"rendered for and validated with Slurm {release}" in daemons[0].detail
    elif older and newer:
        assert len(daemons) == 2
        assert (
            f"validated by the nearest older and newer parsers, {max(older)} and {min(newer)}"
            in versions.detail
        )
        for daemon in daemons:
            assert f"rendered for Slurm {release}; validated with the installed" in daemon.detail
    else:
        assert len(daemons) == 1
        assert f"validated by the nearest parser, {max(older or newer)}" in versions.detail


@pytest.mark.integration
@pytest.mark.parametrize("release", BUILT)
def test_every_option_the_table_accepts_is_recognized_by_that_release(
    tmp_path: Path, release: str
) -> None:
    parser = _parser(release)
    table = slurm.release_data(release)["files"]["slurm.conf"]
    probe = [
        f"{key}={DUMMY.get(kind, '1')}"
        for key, kind in table["types"].items()
        if kind not in LINE_TYPES and table["options"][key] == "accepted"
    ]
    assert len(probe) > 180  # the table is the parser's, not a sample
    # A key no release knows, last: its error proves the parser read every line before it.
    log = _parse_log(parser, [*probe, "ArchformProbeNotAnOption=1"], tmp_path)
    unknown = [line for line in log.splitlines() if "unrecognized key" in line]
    assert unknown and all("ArchformProbeNotAnOption" in line for line in unknown), unknown


def _unknown_in(release: str) -> list[str]:
    """slurm.conf options of other supported releases that `release`'s table lacks."""
    mine = {k.lower() for k in slurm.known_options(release)}
    types: dict[str, str] = {}
    for other in slurm.supported_releases():
        for key, kind in slurm.release_data(other)["files"]["slurm.conf"]["types"].items():
            if key.lower() not in mine and kind not in LINE_TYPES:
                types[key] = kind
    return sorted(types)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("release", BUILT)
def test_options_the_table_lacks_are_refused_by_that_release(tmp_path: Path, release: str) -> None:
    parser = _parser(release)
    missing = _unknown_in(release)
    assert missing, f"every other release's options are in {release}'s table"
    for key in missing:
        with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
            log = _parse_log(parser, [f"{key}=1"], Path(tmp))
        assert f"unrecognized key: {key}" in log, f"{release} accepted {key}: {log[-400:]}"


@pytest.mark.integration
@pytest.mark.parametrize("release", BUILT)
def test_defunct_and_obsolete_options_are_logged_as_such(tmp_path: Path, release: str) -> None:
    parser = _parser(release)
    defunct = [k for k, s in slurm.known_options(release).items() if s == "defunct"]
    lines = [f"{k}=1" for k in defunct] + ["FastSchedule=1"]
    log = _parse_log(parser, lines, tmp_path)
    assert "Ignoring obsolete FastSchedule=1 option" in log
    for key in defunct:
        assert f'"{key}" is defunct' in log, key


@pytest.mark.integration
@pytest.mark.parametrize(
    ("release", "option", "value", "daemon_says"),
    [
        ("24.11", "FastSchedule", 1, "Ignoring obsolete FastSchedule=1 option"),
        ("26.05", "FrontendName", "fe1", "unrecognized key: FrontendName"),
        ("24.11", "SelectType", "select/cons_res", "select/cons_res"),
    ],
)
def test_seeded_removed_option_is_caught_by_sch001_and_the_real_parser(
    tmp_path: Path, release: str, option: str, value: object, daemon_says: str
) -> None:
    _parser(release)
    tree = _variant(
        tmp_path, "onprem-cpu-smoke", scheduler={"version": release, "slurm_conf": {option: value}}
    )
    results = slurm_check.run_check(tree)
    (daemon,) = _by(results, "(slurmctld)")
    assert daemon.status == "failed" and daemon_says in daemon.detail, daemon.detail
    blueprint = tmp_path / "seeded.yaml"
    doc = load_paths([support.BLUEPRINTS / "onprem-cpu-smoke.yaml"]).documents[0].model
    data = doc.model_dump(mode="json", exclude_none=True)
    data["scheduler"] |= {"version": release, "slurm_conf": {option: value}}
    blueprint.write_text(json.dumps(data))
    rule = load_rules().get("SCH001")
    assert rule is not None
    findings = lint(load_paths([blueprint]), rules=[rule]).findings
    assert len(findings) == 1 and option in findings[0].message

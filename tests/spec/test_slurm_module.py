"""archform.spec.slurm: one version parser, the per-release option tables and feature gates.

Expected facts come from SchedMD's published release notes and upgrade guide, not from the
tables themselves:
- https://slurm.schedmd.com/upgrades.html (Compatibility Window: 2 releases, 3 from 24.11)
- RELEASE_NOTES of 23.11 (select/cons_res removed; topology/block added), 24.05
  (BlockSizes), 24.11 (AutoDetect=nvidia), 25.05 (front end mode removed, topology/flat).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from archform.spec import slurm
from archform.spec.slurm import check_option, parse_version
from support import REQUIRE_TOOLS

ROOT = Path(__file__).resolve().parents[2]


def test_one_parser_reads_blueprint_and_daemon_forms() -> None:
    assert parse_version("24.11") == slurm.SlurmVersion(24, 11)
    assert parse_version("24.11.5") == slurm.SlurmVersion(24, 11, 5)
    assert parse_version("slurm 22.05.8") == slurm.SlurmVersion(22, 5, 8)
    assert parse_version("slurm-wlm 22.05.8").release == "22.05"
    for bad in ("24", "24.1", "v24.11", "24.11.5.1", ""):
        with pytest.raises(ValueError):
            parse_version(bad)


def test_versions_order_numerically_not_as_strings() -> None:
    texts = ["25.05", "24.11.10", "24.11.5", "24.11", "22.05"]
    ordered = sorted(parse_version(t) for t in texts)
    assert [str(v) for v in ordered] == ["22.05", "24.11", "24.11.5", "24.11.10", "25.05"]
    assert parse_version("24.11.10") > parse_version("24.11.9")  # "10" < "9" as strings


def test_supported_releases_are_22_05_through_26_05() -> None:
    assert slurm.supported_releases() == (
        "22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05",
    )  # fmt: skip


@pytest.mark.parametrize("release", ["22.05", "23.02", "23.11", "24.05", "24.11", "25.11", "26.05"])
def test_each_table_records_the_tag_it_was_read_from(release: str) -> None:
    data = slurm.release_data(release)
    assert data["tag"].startswith("slurm-" + release.replace(".", "-") + "-")
    assert data["tag_url"] == f"https://github.com/SchedMD/slurm/tree/{data['tag']}"
    for conf in ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf"):
        sources = data["files"][conf]["sources"]
        assert sources and all(data["tag"] in url for url in sources)


@pytest.mark.parametrize(
    ("target", "window"), [("23.02", 2), ("23.11", 2), ("24.05", 2), ("24.11", 3), ("26.05", 3)]
)
def test_upgrade_window(target: str, window: int) -> None:
    assert slurm.upgrade_window(parse_version(target)) == window


def test_nearest_releases_prefers_the_exact_release_else_both_neighbours() -> None:
    have = [parse_version(v) for v in ("22.05.8", "24.11.5", "26.05.5")]
    assert slurm.nearest_releases(parse_version("24.11"), have) == [parse_version("24.11.5")]
    assert slurm.nearest_releases(parse_version("23.11"), have) == [
        parse_version("22.05.8"),
        parse_version("24.11.5"),
    ]
    assert slurm.nearest_releases(parse_version("26.05.1"), have) == [parse_version("26.05.5")]
    assert slurm.nearest_releases(parse_version("25.11"), have[:2]) == [parse_version("24.11.5")]


@pytest.mark.parametrize(
    ("gate", "first"),
    [("topology_block", "23.11"), ("block_sizes", "24.05"), ("gres_autodetect_nvidia", "24.11")],
)
def test_feature_gates_open_at_the_release_notes_version(gate: str, first: str) -> None:
    for release in slurm.supported_releases():
        v = parse_version(release)
        assert slurm.feature(v, gate) is (v >= parse_version(first)), release


@pytest.mark.parametrize(
    ("release", "plugin"),
    [("22.05", "topology/none"), ("23.11", "topology/default"), ("24.11", "topology/default"),
     ("25.05", "topology/flat"), ("26.05", "topology/flat")],
)  # fmt: skip
def test_flat_topology_plugin(release: str, plugin: str) -> None:
    assert slurm.flat_topology_plugin(parse_version(release)) == plugin


def test_fastschedule_is_reported_obsolete_with_slurms_own_message() -> None:
    found = check_option(parse_version("23.11"), "FastSchedule", 1)
    assert found is not None and found.kind == "obsolete"
    assert "Ignoring obsolete FastSchedule=1 option" in found.message
    two = check_option(parse_version("23.11"), "FastSchedule", 2)
    assert two is not None and "has been removed" in two.message and "stops" in two.message


def test_misspelled_option_gets_a_suggestion_and_case_does_not_matter() -> None:
    found = check_option(parse_version("24.11"), "SchedulerParamters", "bf_continue")
    assert found is not None and found.kind == "unknown"
    assert found.hint == "did you mean SchedulerParameters?"
    assert check_option(parse_version("24.11"), "schedulerparameters", "bf_continue") is None
    nothing = check_option(parse_version("24.11"), "Zzzzzz", "1")
    assert nothing is not None and "did you mean" not in nothing.hint


def test_removed_and_added_options_and_plugins() -> None:
    gone = check_option(parse_version("25.05"), "FrontendName", "fe1")
    assert gone is not None and gone.kind == "removed" and "removed in Slurm 25.05" in gone.message
    assert check_option(parse_version("24.11"), "FrontendName", "fe1") is None
    res = check_option(parse_version("23.11"), "SelectType", "select/cons_res")
    assert res is not None and "removed in Slurm 23.11" in res.message
    assert res.hint == "use SelectType=select/cons_tres"
    assert check_option(parse_version("23.02"), "SelectType", "select/cons_res") is None
    flat = check_option(parse_version("24.11"), "TopologyPlugin", "topology/flat")
    assert flat is not None and "added in Slurm 25.05" in flat.message
    # 25.05's read_config.c maps topology/default to topology/flat: accepted.
    assert check_option(parse_version("25.05"), "TopologyPlugin", "topology/default") is None


def test_options_of_other_files_and_defunct_options() -> None:
    other = check_option(parse_version("23.11"), "CgroupAutomount", True)
    assert other is not None and "cgroup.conf option" in other.message
    defunct = check_option(parse_version("23.11"), "CgroupAutomount", True, file="cgroup.conf")
    assert defunct is not None and defunct.kind == "defunct"
    assert check_option(parse_version("22.05"), "CgroupAutomount", True, file="cgroup.conf") is None


# The release CI builds (.ci/run: scripts/build-slurm.sh) whose tarball is the very tag its
# option table is read from (scripts/gen-slurm-options TAGS: 24.11 <- slurm-24-11-5-1).
TARBALL_RELEASE = "24.11.5"


def _slurm_source() -> list[str]:
    """gen-slurm-options arguments naming Slurm's source: ARCHFORM_SLURM_GIT (a SchedMD/slurm
    git dir, every release), else the release tarball scripts/build-slurm.sh keeps.

    Skips locally without either; fails under ARCHFORM_REQUIRE_TOOLS=1 (CI builds it)."""
    git_dir = os.environ.get("ARCHFORM_SLURM_GIT")
    if git_dir:
        return ["--git", git_dir]
    root = Path(os.environ.get("ARCHFORM_SLURM_BUILD_ROOT", "/opt/archform/slurm"))
    tarball = root / f"{TARBALL_RELEASE}.orig.tar.gz"
    if not tarball.is_file():
        reason = (
            f"needs Slurm's source: {tarball} (scripts/build-slurm.sh {TARBALL_RELEASE} keeps "
            "it) or ARCHFORM_SLURM_GIT set to a SchedMD/slurm git dir"
        )
        if REQUIRE_TOOLS:
            pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
        pytest.skip(reason)
    return ["--src", str(tarball)]


def _gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-slurm-options"), *args],
        capture_output=True,
        text=True,
    )


def test_tables_regenerate_from_a_slurm_checkout() -> None:
    """scripts/gen-slurm-options --check: the committed tables are what Slurm's source gives."""
    proc = _gen(*_slurm_source(), "--check")
    assert proc.returncode == 0, proc.stderr


def test_a_table_edited_by_hand_is_reported_stale(tmp_path: Path) -> None:
    source = _slurm_source()
    data = ROOT / "src/archform/spec/data/slurm"
    for table in data.glob("*.json"):
        (tmp_path / table.name).write_text(table.read_text())
    edited = tmp_path / "24.11.json"
    text = edited.read_text()
    assert '"AccountingStorageHost": "accepted"' in text
    edited.write_text(
        text.replace('"AccountingStorageHost": "accepted"', '"AccountingStorageHost": "defunct"')
    )
    proc = _gen(*source, "--check", "--out", str(tmp_path))
    assert proc.returncode == 1 and f"stale: {edited}" in proc.stderr, proc.stderr
    # and regenerating writes the committed bytes back
    assert _gen(*source, "--out", str(tmp_path)).returncode == 0
    assert edited.read_text() == (data / "24.11.json").read_text()


def test_data_files_are_plain_json_with_every_release() -> None:
    names = sorted(p.name for p in (ROOT / "src/archform/spec/data/slurm").glob("*.json"))
    assert [n for n in names if n != "upgrades.json"] == [
        f"{r}.json" for r in slurm.supported_releases()
    ]
    assert json.loads((ROOT / "src/archform/spec/data/slurm/upgrades.json").read_text())["source"]

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Tests marked `daemons` install system packages and start daemons on this machine (munged,
# slurmctld, slurmd on localhost): one at a time, also across pytest-xdist workers. They share
# the xdist group "daemons", so under `--dist loadgroup` (.ci/run) one worker runs them in turn
# while the others run the rest.
SYSTEM_LOCK = Path("/tmp/archform-system-tests.lock")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="Rewrite the golden trees (tests/goldens/) instead of comparing: "
        "pytest -m golden --update-goldens",
    )


def _updating(config: pytest.Config) -> bool:
    return bool(config.getoption("--update-goldens"))


def pytest_configure(config: pytest.Config) -> None:
    """--update-goldens: golden tests stage their trees in one folder (shared with the
    pytest-xdist workers); the controller folds them into tests/goldens at the end."""
    from support import goldens

    if not _updating(config):
        return
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        os.environ[goldens.STAGING_ENV] = workerinput["golden_staging"]
        return
    os.environ[goldens.STAGING_ENV] = tempfile.mkdtemp(prefix="archform-goldens-")


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: the controller, per worker
def pytest_configure_node(node: object) -> None:
    from support import goldens

    if _updating(node.config):  # type: ignore[attr-defined]
        node.workerinput["golden_staging"] = os.environ[goldens.STAGING_ENV]  # type: ignore[attr-defined]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A `daemons` test outside the xdist group "daemons" would take SYSTEM_LOCK on a second
    worker and leave it idle while the first holds it (see support.DAEMONS). A test that takes
    the `update_goldens` fixture is a golden test: marked `golden`."""
    for item in items:
        if "update_goldens" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.golden)
        if item.get_closest_marker("daemons") is None:
            continue
        groups = [m.args[0] for m in item.iter_markers("xdist_group") if m.args]
        if groups != ["daemons"]:
            raise pytest.UsageError(f"{item.nodeid}: mark daemon tests with support.DAEMONS")


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker under --dist loadgroup, xdist suffixes each grouped test's node id
    with "@group"; pytest 9.2 silently stopped that from taking effect (pytest-dev/pytest-xdist
    #1386), which spreads the daemon tests over both workers again. Fail instead of degrading."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    stray = [
        i.nodeid
        for i in session.items
        if i.get_closest_marker("daemons") is not None and not i.nodeid.endswith("@daemons")
    ]
    if stray:
        raise pytest.UsageError(
            f"--dist loadgroup did not group {stray[0]} (pytest-xdist #1386: pytest must be < 9.2)"
        )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(autouse=True)
def _one_daemon_test_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("daemons") is None:
        yield
        return
    with SYSTEM_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _fresh_verify_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets an empty verify cache: `archform verify` reuses results by default, and
    a test that patches a check must not see another test's stored results (or the user's)."""
    monkeypatch.setenv("ARCHFORM_VERIFY_CACHE", str(tmp_path_factory.mktemp("verify-cache")))


# The fuzz floor (support/fuzz_floor.py): counted across xdist workers, enforced in CI.
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from support import fuzz_floor

    fuzz_floor.session_finish(session)
    _fold_goldens(session, exitstatus)


def _fold_goldens(session: pytest.Session, exitstatus: int) -> None:
    from support import goldens

    config = session.config
    if not _updating(config) or getattr(config, "workerinput", None) is not None:
        return
    staging = os.environ.pop(goldens.STAGING_ENV, "")
    if not staging:
        return
    try:
        if exitstatus != pytest.ExitCode.INTERRUPTED:
            dropped = goldens.consolidate(Path(staging))
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                for key in dropped:
                    reporter.write_line(f"goldens: dropped {key} (its test no longer exists)")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: the controller, per worker
def pytest_testnodedown(node: object, error: object) -> None:
    from support import fuzz_floor

    fuzz_floor.node_down(node.config, node)  # type: ignore[attr-defined]

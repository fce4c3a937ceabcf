"""Every skip in the suite either fails under ARCHFORM_REQUIRE_TOOLS or says why it may not.

CI sets ARCHFORM_REQUIRE_TOOLS=1 (.ci/run): a test that skips there for a missing tool,
package, privilege or source proves nothing while reading as green. The helpers in
tests/support (require_tool, require_module, missing) fail instead; a `pytest.skip` written
elsewhere must be guarded by REQUIRE_TOOLS just above it, or be one of the skips below, which
depend on the test's own parameters or on timing, never on the machine.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SKIP = re.compile(r"pytest\.skip\(|pytest\.mark\.skip(?:if)?\b|pytest\.importorskip\(")
GUARD_LINES = 3  # `if REQUIRE_TOOLS: pytest.fail(...)` right above the skip
# (file, text of the skip call's line): why it is not about the machine.
NOT_ABOUT_THE_MACHINE = {
    ("spec/test_images.py", 'pytest.skip("no training cluster")'): "a parameter: fleets only",
    ("render/fleet/test_weights_pipeline.py", 'pytest.skip("GKE Workload Identity")'): (
        "a parameter: the other providers' fleets"
    ),
    ("render/fleet/test_weights_pipeline.py", "pytest.skip("): "a parameter: non-AWS fleets",
    ("cli/test_interrupt.py", 'pytest.skip(f"lint finished within {delay}s'): (
        "timing: the command ended before the signal"
    ),
    ("render/pulumi/test_pulumi_goldens.py", 'pytest.skip(f"{package} not installed")'): (
        "after support.require_module, which fails under ARCHFORM_REQUIRE_TOOLS"
    ),
    ("verify/test_slurm_versions.py", 'pytest.skip(f"slurmctld {release}: its source'): (
        "the registry: build-slurm.sh found the release's source missing from Debian's mirror "
        "(<version>.unobtainable holds the mirror's answer); a build that fails for any other "
        "reason fails the test"
    ),
    ("rules/test_meta.py", 'pytest.skip("shared/design/rules-v1.md'): (
        "the rule catalog contract is a design document outside the repository"
    ),
}


def _sites() -> list[tuple[str, int, str, list[str]]]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if rel in ("support/__init__.py", "test_skip_sites.py") or rel.startswith("goldens/"):
            continue
        lines = path.read_text("utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if SKIP.search(line) and not line.lstrip().startswith("#"):
                above = lines[max(0, number - 1 - GUARD_LINES) : number - 1]
                found.append((rel, number, line.strip(), above))
    return found


def test_every_skip_fails_in_ci_or_is_about_the_test_itself() -> None:
    sites = _sites()
    assert len(sites) > 10, sites  # the scan sees the suite
    unguarded = [
        f"tests/{rel}:{number}: {text}"
        for rel, number, text, above in sites
        if not any("REQUIRE_TOOLS" in line for line in above)
        and not any(rel == f and text.startswith(t) for f, t in NOT_ABOUT_THE_MACHINE)
    ]
    assert not unguarded, "use support.missing / require_tool / require_module:\n" + "\n".join(
        unguarded
    )


def test_every_listed_exception_still_exists() -> None:
    sites = {(rel, text) for rel, _, text, _ in _sites()}
    for f, t in NOT_ABOUT_THE_MACHINE:
        assert any(rel == f and text.startswith(t) for rel, text in sites), (f, t)

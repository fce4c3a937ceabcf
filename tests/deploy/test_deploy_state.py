"""The deploy state machine: phases recorded as they finish, --from resumes, failures
leave earlier phases done. The generate phase is the real one; the later phases are
recording stand-ins (their real implementations need clouds and root)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

import support
from archform.deploy import DeployFailed, build_plan, deploy
from archform.deploy.engine import default_runners
from archform.deploy.phases import Context, PhaseError
from archform.deploy.progress import Reporter
from archform.spec import UsageError, load_paths

SMOKE = support.BLUEPRINTS / "onprem-cpu-smoke.yaml"


class Recorder:
    """Phase stand-ins that record calls and can be told to fail."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail: set[str] = set()

    def runners(self) -> dict[str, Callable[[Context], None]]:
        real = default_runners()

        def make(phase: str) -> Callable[[Context], None]:
            def run(ctx: Context) -> None:
                self.calls.append(phase)
                if phase == "generate":
                    real["generate"](ctx)
                if phase in self.fail:
                    raise PhaseError(f"{phase} broke")

            return run

        return {p: make(p) for p in ("generate", "pulumi", "ansible", "acceptance")}


def _ctx(out: Path, blueprint: Path = SMOKE) -> tuple[Context, Console]:
    loaded = load_paths([blueprint])
    docs = list(loaded.documents)
    console = Console(record=True, width=120, force_terminal=False)
    return Context(build_plan(loaded, docs, out), loaded, docs, Reporter(console, None)), console


def _state(out: Path) -> dict[str, str]:
    data = json.loads((out / ".archform-deploy" / "state.json").read_text())
    return dict(data["phases"])


def test_a_full_run_records_every_phase_and_writes_a_log(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rec = Recorder()
    ctx, console = _ctx(out)
    deploy(ctx, runners=rec.runners())
    assert rec.calls == ["generate", "ansible", "acceptance"]
    assert _state(out) == {"generate": "done", "ansible": "done", "acceptance": "done"}
    assert (out / "ansible" / "site.yml").is_file()
    log = (out / ".archform-deploy" / "deploy.log").read_text()
    assert "[1/3] generate" in log and "[3/3] acceptance" in log and "deploy finished" in log
    assert "[2/3] ansible" in console.export_text()


def test_a_failed_phase_is_resumed_with_from_without_redoing_finished_ones(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    rec = Recorder()
    rec.fail = {"ansible"}
    ctx, _ = _ctx(out)
    with pytest.raises(DeployFailed) as caught:
        deploy(ctx, runners=rec.runners())
    assert caught.value.phase == "ansible"
    assert rec.calls == ["generate", "ansible"]
    assert _state(out) == {"generate": "done", "ansible": "failed", "acceptance": "pending"}

    rec.calls.clear()
    rec.fail.clear()
    ctx, _ = _ctx(out)
    deploy(ctx, start="ansible", runners=rec.runners())
    assert rec.calls == ["ansible", "acceptance"], "generate must not run again"
    assert _state(out) == {"generate": "done", "ansible": "done", "acceptance": "done"}


def test_a_phase_killed_while_running_stays_not_done(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rec = Recorder()
    ctx, _ = _ctx(out)

    class Killed(BaseException):
        pass

    runners = rec.runners()

    def killed(ctx: Context) -> None:
        raise Killed  # like SIGKILL: no handler runs, nothing is recorded after this

    runners["ansible"] = killed
    with pytest.raises(Killed):
        deploy(ctx, runners=runners)
    assert _state(out)["ansible"] == "running"
    ctx, _ = _ctx(out)
    with pytest.raises(UsageError, match="ansible has not finished"):
        deploy(ctx, start="acceptance", runners=rec.runners())
    deploy(ctx, start="ansible", runners=rec.runners())
    assert _state(out)["acceptance"] == "done"


def test_from_refuses_to_skip_phases_that_never_finished(tmp_path: Path) -> None:
    rec = Recorder()
    ctx, _ = _ctx(tmp_path / "out")
    with pytest.raises(UsageError, match="generate has not finished"):
        deploy(ctx, start="ansible", runners=rec.runners())
    with pytest.raises(UsageError, match="no pulumi phase"):
        deploy(ctx, start="pulumi", runners=rec.runners())
    with pytest.raises(UsageError, match="unknown phase"):
        deploy(ctx, start="terraform", runners=rec.runners())
    assert rec.calls == []
    assert not (tmp_path / "out").exists()


def test_from_refuses_when_the_blueprint_changed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rec = Recorder()
    deploy(_ctx(out)[0], runners=rec.runners())
    edited = tmp_path / "smoke.yaml"
    edited.write_text(SMOKE.read_text().replace("max_time_hours: 1", "max_time_hours: 2"))
    with pytest.raises(UsageError, match="blueprint changed"):
        deploy(_ctx(out, edited)[0], start="ansible", runners=rec.runners())
    rec.calls.clear()
    deploy(_ctx(out, edited)[0], runners=rec.runners())  # a full run takes the new one
    assert rec.calls == ["generate", "ansible", "acceptance"]
    assert "max_time_hours: 2" in (out / "resolved-blueprint.yaml").read_text()


def test_rerunning_after_success_regenerates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rec = Recorder()
    deploy(_ctx(out)[0], runners=rec.runners())
    before = {
        p: p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and ".archform-deploy" not in p.parts
    }
    ctx, console = _ctx(out)
    deploy(ctx, runners=rec.runners())
    after = {
        p: p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and ".archform-deploy" not in p.parts
    }
    assert after == before
    assert " 0 written," in console.export_text()

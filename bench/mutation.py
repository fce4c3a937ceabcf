"""Mutation testing with cosmic-ray over the modules whose logic the tests must pin.

One command (CONTRIBUTING.md, "Mutation testing"):

    python bench/mutation.py                 # every target, writes bench/RESULTS-mutation.md
    python bench/mutation.py --only hostlist --only policy   # some targets, merged in

Each target is one module (or the validator functions of one) with the tests that exercise
it; every mutant of that module runs only those tests (`-x`, stop at the first failure).
cosmic-ray (https://cosmic-ray.readthedocs.io) writes the mutants and records the outcomes;
the tests run through a fork server (`serve`/`client` below): a process that has pytest,
pydantic and the other third-party imports loaded forks once per mutant, and the child
imports archform fresh from the mutated copy. The run works on a copy of the tree under
`.mutation/`, never on the checkout, and runs `nice -n 10`.

cosmic-ray lives outside the shared virtualenv (the `mutation` extra in pyproject.toml):
this script runs under the interpreter that has it (`--cosmic-ray-python`, default: the
one running it) and the tests under `--test-python` (default: the one running it).

Surviving mutants are listed in the results with the reason each one cannot be killed,
from bench/mutation-equivalents.toml (keyed by a hash of the module and the mutant's diff,
without line numbers, so unrelated edits do not orphan an explanation).
tests/test_mutation_results.py fails when the recorded score drops below 85% or a survivor
has no explanation.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
RESULTS_JSON = ROOT / "bench" / "results" / "mutation.json"
RESULTS_MD = ROOT / "bench" / "RESULTS-mutation.md"
EQUIVALENTS = ROOT / "bench" / "mutation-equivalents.toml"
FLOOR = 85.0
PENDING = "pending: not run before the session stopped"
PYTEST = ["-x", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "not system"]
RULE_TESTS = [
    "tests/rules/test_fixtures.py",
    "tests/rules/test_meta.py",
    "tests/rules/test_computed_messages.py",
    "tests/rules/test_step_model_messages.py",
    # one file per rule (test_<code>.py), selected by -k <CODE> like the rest
    "tests/rules/per_rule",
]


@dataclass(frozen=True)
class Target:
    """One module to mutate, the tests that must kill its mutants, and its group."""

    name: str
    group: str
    module: str
    tests: tuple[str, ...]
    keyword: str | None = None
    # Only the mutants inside these functions (decorators included) count; None: all.
    functions: tuple[str, ...] | None = None


def _rule_targets() -> list[Target]:
    out = []
    for path in sorted((ROOT / "src/archform/lint/rules").glob("*/*.py")):
        if path.name == "__init__.py":
            continue
        code = path.name.split("_", 1)[0].upper()
        out.append(
            Target(
                name=code,
                group="lint rules",
                module=str(path.relative_to(ROOT)),
                tests=tuple(RULE_TESTS),
                keyword=code,
            )
        )
    return out


def _validators(module: str) -> tuple[str, ...]:
    """Names of the pydantic model validators in a spec model module."""
    tree = ast.parse((ROOT / module).read_text("utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for deco in node.decorator_list:
                call = deco.func if isinstance(deco, ast.Call) else deco
                if isinstance(call, ast.Name) and call.id.endswith("_validator"):
                    names.append(node.name)
    return tuple(sorted(set(names)))


# the policy table's own tests; test_placement_impact.py generates whole programs (slow) and
# test_cli.py drives git: the first three cover every row and refinement
DIFF_TESTS = (
    "tests/diff/test_policy.py",
    "tests/diff/test_impact_table.py",
    "tests/diff/test_provider_impact.py",
)
# refine.py's refinements called one edit at a time (no loader, no bundled blueprints): one run
# takes about 2 s in a forked child where the three above take about 8.5 s (2 cores under load)
REFINE_TESTS = ("tests/diff/test_refine_rules.py",)
# in process (the broken and unbuildable corpora run the CLI once per file: minutes)
SPEC_TESTS = (
    "tests/spec/test_validators.py",
    "tests/spec/test_loader.py",
)


def targets() -> list[Target]:
    """Every target, in run order (the small ones first)."""
    return [
        Target(
            "hostlist",
            "hostlist",
            "src/archform/render/hostlist.py",
            ("tests/render/test_hostlist.py",),
        ),
        Target("policy", "diff policy", "src/archform/diff/policy.py", DIFF_TESTS),
        Target(
            "policy_training",
            "diff policy",
            "src/archform/diff/policy_training.py",
            DIFF_TESTS,
        ),
        Target("refine", "diff policy", "src/archform/diff/refine.py", REFINE_TESTS),
        Target(
            "training-validators",
            "spec validators",
            "src/archform/spec/models/training.py",
            (*SPEC_TESTS, "tests/spec/test_training_validator_edges.py"),
            functions=_validators("src/archform/spec/models/training.py"),
        ),
        Target(
            "inference-validators",
            "spec validators",
            "src/archform/spec/models/inference.py",
            SPEC_TESTS,
            functions=_validators("src/archform/spec/models/inference.py"),
        ),
        Target(
            "loader-checks",
            "spec validators",
            "src/archform/spec/loader.py",
            (
                *SPEC_TESTS,
                "tests/spec/test_network_overlaps.py",
                "tests/spec/test_platform_checks.py",
            ),
            functions=("_check_platform", "_check_platform_networks", "_check_registry_source"),
        ),
        *_rule_targets(),
    ]


# ---------------------------------------------------------------- fork server (test side)


def serve(sock_path: str, forbidden: set[str], preload: list[str]) -> None:
    """Answer one test run per connection: fork, run pytest in the child, send its status.

    `forbidden`: the mutated module and every archform module that imports it; none may be
    loaded here, so each child imports them fresh, mutant included.
    """
    for name in preload:
        with contextlib.suppress(Exception):
            __import__(name)
    stale = sorted(forbidden & set(sys.modules))
    if stale:
        raise SystemExit(f"preloading imported {stale[0]}: it would not see the mutant")
    import pytest

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        Path(sock_path).unlink()
    server.bind(sock_path)
    server.listen(1)
    while True:
        conn, _ = server.accept()
        with conn:
            request = json.loads(conn.makefile("r").readline())
            if request.get("stop"):
                return
            pid = os.fork()
            if pid == 0:
                conn.detach()
                server.close()
                out = os.open(request.get("log") or os.devnull, os.O_WRONLY | os.O_CREAT, 0o644)
                os.dup2(out, 1)
                os.dup2(out, 2)
                signal.alarm(int(request["timeout"]))
                # the preloaded plugins are imported before pytest could rewrite their asserts
                quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
                code = pytest.main([*quiet, *request["args"]])
                os._exit(int(code))
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):
                conn.sendall(f"{code}\n".encode())


def client(sock_path: str, timeout: float, args: list[str], log: str | None = None) -> int:
    """The test command cosmic-ray runs per mutant: exit with the forked pytest's status.

    A run the server's alarm ended prints `timeout` (the results count it apart).
    """
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    for _ in range(600):  # the server may still be importing (bound, not yet listening)
        try:
            conn.connect(sock_path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            time.sleep(0.1)
    else:
        conn.connect(sock_path)
    conn.sendall((json.dumps({"args": args, "timeout": timeout, "log": log}) + "\n").encode())
    answer = conn.makefile("r").readline().strip()
    code = int(answer) if answer.lstrip("-").isdigit() else 99
    if code == -signal.SIGALRM:
        print("timeout")
        return 124
    return code


# ---------------------------------------------------------------- driver (cosmic-ray side)


def _copy_tree(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in files:
        if not raw:
            continue
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file() or rel.startswith(".mutation/"):
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)


def _sync_tests(tree: Path, chosen: list[Target]) -> None:
    """Bring today's tests into a kept tree whose sources are still the ones mutated."""
    for target in chosen:
        if (tree / target.module).read_bytes() != (ROOT / target.module).read_bytes():
            raise SystemExit(f"{target.module} changed since its session: run it afresh")
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z", "tests"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in filter(None, files):
        rel = raw.decode()
        if (ROOT / rel).is_file():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, tree / rel)


def _test_args(target: Target) -> list[str]:
    args = [*PYTEST, *target.tests]
    if target.keyword:
        args += ["-k", target.keyword]
    return args


def _preload_modules(test_python: str, tree: Path, args: list[str]) -> list[str]:
    """Modules a collection of these tests imports, less the test modules themselves."""
    probe = (
        "import json, sys, pytest\n"
        f"pytest.main({['--co', '-q', *args]!r})\n"
        "import os\n"
        "here = os.path.join(os.getcwd(), 'tests')\n"
        "names = [n for n, m in sys.modules.items()\n"
        "         if not (getattr(m, '__file__', None) or '').startswith(here)]\n"
        "print('\\nPRELOAD' + json.dumps(sorted(names)))\n"
    )
    run = subprocess.run(
        [test_python, "-c", probe], cwd=tree, env=_env(tree), capture_output=True, text=True
    )
    line = next(x for x in run.stdout.splitlines() if x.startswith("PRELOAD"))
    names = json.loads(line[len("PRELOAD") :])
    return [n for n in names if n != "__main__"]


def _module_name(tree: Path, path: Path) -> str:
    rel = path.relative_to(tree / "src").with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def importers(tree: Path, module: str) -> set[str]:
    """`module` and every archform module that imports it, directly or not (any import
    statement, at any depth: lazy imports count), so none of them is preloaded."""
    graph: dict[str, set[str]] = {}
    for path in (tree / "src" / "archform").rglob("*.py"):
        name = _module_name(tree, path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[: len(up) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                deps.add(base)
                deps.update(f"{base}.{a.name}" for a in node.names)
        # importing a.b.c runs a and a.b first: what it names, and its own packages
        graph[name] = {p for d in [*deps, name] for p in _prefixes(d)} - {name}
    out = {module}
    changed = True
    while changed:
        changed = False
        for name, deps in graph.items():
            if name not in out and deps & out:
                out.add(name)
                changed = True
    return out


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{tree / 'src'}{os.pathsep}{tree / 'tests'}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _in_scope_lines(module: Path, functions: tuple[str, ...] | None) -> set[int] | None:
    if functions is None:
        return None
    lines: set[int] = set()
    for node in ast.walk(ast.parse(module.read_text("utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in functions:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            lines.update(range(first, (node.end_lineno or node.lineno) + 1))
    return lines


def _annotation_spans(module: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where a mutant changes nothing that runs: annotations no code evaluates.

    With `from __future__ import annotations` a signature's annotations stay strings
    (PEP 563) and archform never resolves them (no get_type_hints or signature() calls in
    src/); a local variable's annotation is never evaluated at all (PEP 526). Class-level
    annotations are not listed: pydantic and dataclasses evaluate them.
    """
    tree = ast.parse(module.read_text("utf-8"))
    future = any(
        isinstance(n, ast.ImportFrom)
        and n.module == "__future__"
        and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    nodes: list[ast.expr] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if future:
            a = fn.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            nodes += [p.annotation for p in params if p is not None and p.annotation]
            if fn.returns is not None:
                nodes.append(fn.returns)
        for stmt in ast.walk(fn):
            if isinstance(stmt, ast.AnnAssign) and stmt is not fn:
                nodes.append(stmt.annotation)
    return [
        ((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0)) for n in nodes
    ]


def mutant_id(module: str, diff: str) -> str:
    """Stable id of a mutant: its module and the diff's changed lines, no line numbers."""
    body = [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return hashlib.sha256("\n".join([module, *body]).encode()).hexdigest()[:12]


def _count_inert(
    session: Path, spans: list[tuple[tuple[int, int], tuple[int, int]]], scope: set[int] | None
) -> int:
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(session), WorkDB.Mode.open) as db:
        return sum(
            1
            for item in db.work_items
            if (scope is None or item.mutations[0].start_pos[0] in scope)
            and any(
                lo <= tuple(item.mutations[0].start_pos) and tuple(item.mutations[0].end_pos) <= hi
                for lo, hi in spans
            )
        )


def _forget_survivors(session: Path) -> int:
    """Drop the survivors' results from a session, so `exec` runs them again."""
    from cosmic_ray.work_db import WorkDB, WorkResultStorage, use_db
    from cosmic_ray.work_item import TestOutcome

    with use_db(str(session), WorkDB.Mode.open) as db, db._session_maker.begin() as orm:
        survived = WorkResultStorage.test_outcome == TestOutcome.SURVIVED
        rows = orm.query(WorkResultStorage).filter(survived)
        return int(rows.delete())


def run_target(
    target: Target, tree: Path, sock: str, nice: bool, timeout: float, rerun: bool = False
) -> dict[str, Any]:
    """Init, scope and execute one cosmic-ray session; the outcome counts and survivors.

    `rerun`: keep the session's outcomes and run only its survivors again (after new tests).
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    session = tree / ".sessions" / f"{target.name}.sqlite"
    session.parent.mkdir(parents=True, exist_ok=True)
    config = session.with_suffix(".toml")
    script = str(tree.parent / "mutation_client.py")  # frozen: edits to this file mid-run
    client_cmd = [sys.executable, script, "client", sock, f"{timeout:.0f}", "--"]
    command = " ".join(f"'{a}'" for a in [*client_cmd, *_test_args(target)])
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{target.module}"\n'
        f"timeout = {timeout + 30:.0f}.0\n"
        "excluded-modules = []\n"
        f'test-command = "{command.replace(chr(34), chr(92) + chr(34))}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n',
        "utf-8",
    )
    cr = [sys.executable, "-m", "cosmic_ray.cli"]
    prefix = ["nice", "-n", "10"] if nice else []
    scope = _in_scope_lines(tree / target.module, target.functions)
    spans = _annotation_spans(tree / target.module)
    annotations = 0
    if rerun:
        # only the survivors run again: a session stopped part way keeps its rest pending
        with use_db(str(session), WorkDB.Mode.open) as db:
            held = [item.job_id for item in db.pending_work_items]
            db.set_multiple_results(
                held, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=PENDING)
            )
        _forget_survivors(session)
    else:
        subprocess.run([*cr, "init", str(config), str(session), "--force"], cwd=tree, check=True)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in db.work_items:
            mutation = item.mutations[0]
            start, end = tuple(mutation.start_pos), tuple(mutation.end_pos)
            inert = any(lo <= start and end <= hi for lo, hi in spans)
            if (scope is not None and start[0] not in scope) or inert:
                if inert and (scope is None or start[0] in scope):
                    annotations += 1
                if rerun:
                    continue
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
    started = time.monotonic()
    subprocess.run([*prefix, *cr, "exec", str(config), str(session)], cwd=tree, check=True)
    return collect(target, session, time.monotonic() - started, annotations)


def collect(target: Target, session: Path, seconds: float, annotations: int) -> dict[str, Any]:
    """The outcome counts and survivors recorded in a session (`pending`: not run yet)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome

    counts = {"killed": 0, "survived": 0, "timeout": 0, "incompetent": 0}
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        pending = len(db.pending_work_items)
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                pending += result.output == PENDING
                continue
            mutation = item.mutations[0]
            outcome = result.test_outcome.value if result.test_outcome else "incompetent"
            if outcome == "killed" and (result.output or "").strip() == "timeout":
                outcome = "timeout"
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome in ("survived", "incompetent"):
                diff = result.diff or ""
                survivors.append(
                    {
                        "id": mutant_id(target.module, diff),
                        "outcome": outcome,
                        "line": mutation.start_pos[0],
                        "col": mutation.start_pos[1],
                        "operator": mutation.operator_name,
                        "diff": [
                            x
                            for x in diff.splitlines()
                            if x[:1] in "+-" and not x.startswith(("+++", "---"))
                        ],
                    }
                )
    survivors.sort(key=lambda s: (s["line"], s["col"], s["operator"]))
    return {
        "group": target.group,
        "module": target.module,
        "tests": [*target.tests, *(["-k " + target.keyword] if target.keyword else [])],
        "functions": list(target.functions) if target.functions else None,
        "seconds": round(seconds, 1),
        "annotations": annotations,
        "pending": pending,
        **counts,
        "survivors": survivors,
    }


def score(entry: dict[str, Any]) -> float:
    """Killed (timeouts included) over every mutant that ran."""
    dead = entry["killed"] + entry["timeout"]
    total = dead + entry["survived"] + entry["incompetent"]
    return 100.0 * dead / total if total else 100.0


def _load_equivalents() -> dict[str, str]:
    import tomllib

    if not EQUIVALENTS.exists():
        return {}
    data = tomllib.loads(EQUIVALENTS.read_text("utf-8"))
    return {e["id"]: e["why"] for e in data.get("equivalent", [])}


def write_markdown(results: dict[str, Any]) -> None:
    """bench/RESULTS-mutation.md from the merged JSON results."""
    why = _load_equivalents()
    modules = results["modules"]
    groups: dict[str, dict[str, Any]] = {}
    for entry in modules.values():
        g = groups.setdefault(
            entry["group"],
            {
                "killed": 0,
                "survived": 0,
                "timeout": 0,
                "incompetent": 0,
                "annotations": 0,
                "seconds": 0.0,
                "pending": 0,
            },
        )
        for key in g:
            g[key] += entry.get(key, 0)
    total = {k: sum(g[k] for g in groups.values()) for k in next(iter(groups.values()))}
    lines = [
        "# Mutation testing",
        "",
        "Produced by `python bench/mutation.py` (cosmic-ray "
        f"{results.get('cosmic_ray', '?')}, all operators; see CONTRIBUTING.md). A mutant is",
        "killed when the target's tests fail on it, or time out; the score is killed over",
        "all mutants that ran. Each mutant runs only its module's tests (column `tests`).",
        "`not run`: mutants of annotations no code evaluates (signature annotations under",
        "`from __future__ import annotations`, PEP 563; local variable annotations, PEP 526),",
        "which no test can tell apart; they are counted, not run. `pending`: mutants of a",
        "session stopped part way (the machine's time ran out), not counted in the score.",
        f"Machine: {results.get('machine', '?')}; runs under `nice -n 10`.",
        "",
        f"**Total score: {score(total):.1f}%** ({total['killed'] + total['timeout']} of "
        f"{total['killed'] + total['timeout'] + total['survived'] + total['incompetent']} "
        f"killed; floor {FLOOR:.0f}%), run time {total['seconds'] / 60:.1f} min.",
        "",
        "## Per group",
        "",
        "| group | killed | survived | timeout | incompetent | score | time (s) | not run "
        "| pending |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, g in sorted(groups.items()):
        lines.append(
            f"| {name} | {g['killed']} | {g['survived']} | {g['timeout']} | "
            f"{g['incompetent']} | {score(g):.1f}% | {g['seconds']:.0f} | {g['annotations']} | "
            f"{g['pending']} |"
        )
    lines += [
        "",
        "## Per module",
        "",
        "| target | module | tests | killed | survived | timeout | score | time (s) | not run "
        "| note |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, e in modules.items():
        scope = f" ({', '.join(e['functions'])})" if e.get("functions") else ""
        lines.append(
            f"| {name} | `{e['module']}`{scope} | {' '.join(e['tests'])} | {e['killed']} | "
            f"{e['survived']} | {e['timeout']} | {score(e):.1f}% | {e['seconds']:.0f} | "
            f"{e.get('annotations', 0)} |"
            + (f" partial: {e['pending']} mutants not run |" if e.get("pending") else " |")
        )
    not_run = results.get("not_run") or []
    if not_run:
        lines += ["", "## Not run", "", results.get("not_run_reason") or "", ""]
        lines.append(", ".join(f"`{item}`" for item in not_run))
    lines += [
        "",
        "## Surviving mutants",
        "",
        "Each survivor, with why no test can kill it (bench/mutation-equivalents.toml).",
        "",
        "| id | module:line:col | operator | mutant | why it survives |",
        "| --- | --- | --- | --- | --- |",
    ]
    for e in modules.values():
        for s in e["survivors"]:
            mutant = " / ".join(f"`{d.strip()}`" for d in s["diff"]).replace("|", "\\|")
            reason = why.get(s["id"], "UNEXPLAINED").replace("|", "\\|")
            lines.append(
                f"| {s['id']} | `{e['module']}:{s['line']}:{s['col']}` | {s['operator']} | "
                f"{mutant} | {reason} |"
            )
    RESULTS_MD.write_text("\n".join(lines) + "\n", "utf-8")


def _record(name: str | None, entry: dict[str, Any] | None, reason: str | None) -> None:
    """Merge one target's outcome into bench/results/mutation.json (locked: runs may overlap)."""
    import fcntl
    import importlib.metadata

    RESULTS_JSON.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS_JSON.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results: dict[str, Any] = {"modules": {}}
        if RESULTS_JSON.exists():
            results = json.loads(RESULTS_JSON.read_text("utf-8"))
        if reason is not None:
            results["not_run_reason"] = reason
        if name is not None and entry is not None:
            results["modules"][name] = entry
            results["cosmic_ray"] = importlib.metadata.version("cosmic-ray")
            results["machine"] = f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"
        order = [t.name for t in targets()]
        results["modules"] = dict(
            sorted(results["modules"].items(), key=lambda kv: order.index(kv[0]))
        )
        results["not_run"] = [n for n in order if n not in results["modules"]]
        RESULTS_JSON.write_text(json.dumps(results, indent=1) + "\n", "utf-8")
        write_markdown(results)


def _serve_and_run(
    target: Target,
    tree: Path,
    sock: str,
    forbidden: set[str],
    preload: list[str],
    opts: argparse.Namespace,
) -> dict[str, Any]:
    """One fork server for one target: baseline run, then the cosmic-ray session."""
    with contextlib.suppress(FileNotFoundError):
        Path(sock).unlink()
    prefix = [] if opts.no_nice else ["nice", "-n", "10"]
    script = str(tree.parent / "mutation_client.py")
    server = subprocess.Popen(
        [*prefix, opts.test_python, script, "serve", sock, ",".join(sorted(forbidden)), *preload],
        cwd=tree,
        env=_env(tree),
    )
    try:
        began = time.monotonic()
        log = tree.parent / f"baseline-{target.name}.log"
        log.unlink(missing_ok=True)
        baseline = client(sock, 600, _test_args(target), str(log))
        if baseline != 0:
            raise SystemExit(f"{target.name}: the tests fail unmutated, see {log}")
        # a mutant may take a few times as long (no -x stop) before it counts as hung
        timeout = max(20.0, 4 * (time.monotonic() - began))
        entry = run_target(
            target, tree, sock, nice=not opts.no_nice, timeout=timeout, rerun=opts.rerun_survivors
        )
        if opts.rerun_survivors and RESULTS_JSON.exists():
            before = json.loads(RESULTS_JSON.read_text("utf-8"))["modules"].get(target.name)
            entry["seconds"] = round(entry["seconds"] + (before or {}).get("seconds", 0.0), 1)
        return entry
    finally:
        with contextlib.suppress(OSError):
            stop = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            stop.connect(sock)
            stop.sendall(b'{"stop": true}\n')
        server.wait(timeout=600)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="target name (repeatable)")
    parser.add_argument("--group", action="append", help="run every target of a group")
    parser.add_argument("--skip", action="append", default=[], help="target not to run")
    parser.add_argument("--test-python", default=sys.executable)
    parser.add_argument("--work", type=Path, default=WORK, help="scratch copy of the tree")
    parser.add_argument("--no-nice", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="rewrite the .md only")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="record the sessions in --work as they stand (a run stopped part way)",
    )
    parser.add_argument(
        "--rerun-survivors",
        action="store_true",
        help="reuse the sessions in --work and run only their survivors, with today's tests",
    )
    parser.add_argument("--not-run-reason", help="why the targets not run were left out")
    opts = parser.parse_args(argv)
    if opts.report_only:
        _record(None, None, opts.not_run_reason)
        return 0
    chosen = [
        t
        for t in targets()
        if ((not opts.only and not opts.group) or t.name in (opts.only or []))
        or t.group in (opts.group or [])
    ]
    chosen = [t for t in chosen if t.name not in opts.skip]
    if opts.only:  # in the order given
        chosen.sort(key=lambda t: opts.only.index(t.name) if t.name in opts.only else -1)
    work: Path = opts.work.resolve()
    tree = work / "tree"
    if opts.collect:
        for target in chosen:
            session = tree / ".sessions" / f"{target.name}.sqlite"
            if not session.exists():
                continue
            began = session.with_suffix(".toml").stat().st_mtime
            spans = _annotation_spans(tree / target.module)
            scope = _in_scope_lines(tree / target.module, target.functions)
            entry = collect(
                target, session, time.time() - began, _count_inert(session, spans, scope)
            )
            _record(target.name, entry, opts.not_run_reason)
        return 0
    if opts.rerun_survivors:
        _sync_tests(tree, chosen)
    else:
        _copy_tree(tree)
    shutil.copy2(Path(__file__), work / "mutation_client.py")
    subprocess.run(
        [
            *(opts.test_python, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash"),
            *(str(tree / "src"), str(tree / "tests")),
        ],
        check=True,
    )
    sock = str(work / "pytest.sock")
    union = sorted({t for x in chosen for t in x.tests})
    loaded = _preload_modules(opts.test_python, tree, [*PYTEST, *union])
    for target in chosen:
        name = _module_name(tree, tree / target.module)
        forbidden = importers(tree, name)
        preload = [m for m in loaded if m not in forbidden]
        entry = _serve_and_run(target, tree, sock, forbidden, preload, opts)
        _record(target.name, entry, opts.not_run_reason)
        print(
            f"{target.name}: {score(entry):.1f}% killed={entry['killed']} "
            f"survived={entry['survived']} timeout={entry['timeout']} "
            f"annotations={entry['annotations']} in {entry['seconds']}s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(sys.argv[2], set(sys.argv[3].split(",")), sys.argv[4:])
    elif len(sys.argv) > 1 and sys.argv[1] == "client":
        sys.exit(client(sys.argv[2], float(sys.argv[3]), sys.argv[5:]))
    else:
        sys.exit(main())

"""The generated sacctmgr tasks (roles/slurm/tasks/accounts.yml), run by real ansible-playbook.

There is no slurmdbd on CI, so `sacctmgr` is a stand-in that keeps its state in files. Its
behaviour follows sacctmgr(1) (slurm.schedmd.com/sacctmgr.html): `show ... --parsable2
--noheader` prints one `|`-separated record per line; `add` creates an entity; `modify`
prints " Modified <entity>..." when it changed something and "Nothing modified" otherwise.
The test shows that the first run creates the QOS, accounts and user associations the
blueprint asks for and that a second run changes nothing and adds nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_text

SACCTMGR = r"""#!/usr/bin/env python3
import json, os, sys
state_file = os.environ["STANDIN_STATE"]
state = json.load(open(state_file)) if os.path.exists(state_file) else {
    "qos": {"normal": {}}, "accounts": {}, "assocs": []}
args = [a for a in sys.argv[1:] if a not in ("--noheader", "--parsable2", "--immediate")]
open(os.environ["STANDIN_LOG"], "a").write(" ".join(args) + "\n")
verb, entity = args[0], args[1]
def kv(items):
    return dict(i.split("=", 1) for i in items if "=" in i)
if verb == "show":
    if entity == "qos":
        print("\n".join(state["qos"]))
    elif entity == "account":
        print("\n".join(state["accounts"]))
    elif entity == "assoc":
        print("\n".join(f"{a}|{u}" for a, u in state["assocs"]))
elif verb == "add":
    if entity == "qos":
        state["qos"][args[2]] = {}
    elif entity == "account":
        state["accounts"][args[2]] = kv(args[3:])
    elif entity == "user":
        state["assocs"].append([kv(args[3:])["Account"], args[2]])
elif verb == "modify":
    name = kv(args[2:args.index("set")])["name"]
    wanted = kv(args[args.index("set") + 1:])
    table = state["qos"] if entity == "qos" else state["accounts"]
    if all(table[name].get(k) == v for k, v in wanted.items()):
        print("Nothing modified")
    else:
        table[name].update(wanted)
        print(f" Modified {entity}...")
json.dump(state, open(state_file, "w"))
"""

BLUEPRINT_EXTRA = """  qos:
    - {name: high, priority: 100, max_gpus_per_user: 64, max_wall_hours: 72}
  accounts:
    - {name: pretrain, users: [carol], qos: [high, normal]}
    - {name: research, users: [alice, bob], qos: [normal]}
"""


def _tree(tmp_path: Path) -> Path:
    text = (support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml").read_text()
    start, end = text.index("  qos:"), text.index("  containers: pyxis")
    text = text[:start] + BLUEPRINT_EXTRA + text[end:]
    write_tree(tmp_path / "tree", build_files(load_text(text, "cluster.yaml")))
    return tmp_path / "tree" / "ansible"


def _play(ansible: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    play = ansible / "accounts-test.yml"
    play.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n"
        "  vars_files: [group_vars/all.yml]\n"
        "  tasks:\n    - ansible.builtin.include_tasks: roles/slurm/tasks/accounts.yml\n"
    )
    return subprocess.run(
        [
            "ansible-playbook",
            "-i",
            "localhost,",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            str(play),
        ],
        cwd=ansible,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_accounts_are_created_once_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    support.require_tool("ansible-playbook")
    ansible = _tree(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "sacctmgr").write_text(SACCTMGR)
    (bindir / "sacctmgr").chmod(0o755)
    log = tmp_path / "sacctmgr.log"
    env = dict(
        os.environ,
        PATH=f"{bindir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        STANDIN_STATE=str(tmp_path / "state.json"),
        STANDIN_LOG=str(log),
        ANSIBLE_NOCOLOR="1",
        HOME=str(tmp_path),
    )
    first = _play(ansible, env)
    assert first.returncode == 0, first.stdout[-3000:]
    state = json.loads((tmp_path / "state.json").read_text())
    assert set(state["qos"]) == {"normal", "high"}
    assert state["qos"]["high"] == {
        "Priority": "100",
        "MaxTRESPerUser": "gres/gpu=64",
        "MaxWall": "72:00:00",
    }
    assert state["accounts"]["pretrain"]["DefaultQOS"] == "high"
    assert sorted(map(tuple, state["assocs"])) == [
        ("pretrain", "carol"),
        ("research", "alice"),
        ("research", "bob"),
    ]
    log.write_text("")
    second = _play(ansible, env)
    assert second.returncode == 0, second.stdout[-3000:]
    assert "changed=0" in second.stdout, second.stdout[-3000:]
    assert not [line for line in log.read_text().splitlines() if line.startswith("add ")]


@pytest.mark.parametrize("name", ["alice;rm", "Bob"])
def test_user_names_that_could_reach_a_shell_are_rejected(name: str) -> None:
    text = (support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml").read_text()
    text = text.replace("users: [alice, bob]", f"users: ['{name}']")
    from archform.spec import SpecError

    with pytest.raises(SpecError):
        load_text(text, "cluster.yaml")

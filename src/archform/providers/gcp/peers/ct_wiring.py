"""How a Cluster Toolkit blueprint's modules are wired: `use:` and `$(id.output)`, as gcluster does.

Facts from GoogleCloudPlatform/cluster-toolkit (v1.95.0, the commit in
archform/spec/data/cluster_toolkit_modules.yaml): pkg/config/expand.go and pkg/config/config.go.

- `$(vars.x)` names a deployment variable; `$(id.output)` an output of module `id`
  (pkg/config/expression.go; "Expected reference formats: $(vars.var_name) or
  $(module_id.output_name)").
- `use: [id]` connects each output of module `id` to the using module's input of the same
  name (`labels` excepted). A setting the blueprint writes itself is left alone; an unset input
  of list type collects the outputs of every used module that has it (useModule).
- A reference to a module that does not exist is `unknown module id: "x"`, to a module of a
  later deployment group "references to outputs from other groups must be to earlier groups",
  to an output the module does not have `module "x" does not have output "y"`, to an unset
  variable `module "m" references unknown global variable "x"`; each with a did-you-mean
  (validateModuleReference, validateModuleSettingReference, HintSpelling).

A module's outputs and inputs come from its outputs.tf and variables.tf in that commit
(archform/spec/data/cluster_toolkit_modules.yaml); a module not in that file is not checked for
its outputs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.paths import Loc
from archform.spec.peers.mapper import Mapper

FILE = "cluster_toolkit_modules.yaml"
REF = re.compile(r"\$\(([A-Za-z][A-Za-z0-9_-]*)\.([A-Za-z_][A-Za-z0-9_-]*)\)")
LATER_GROUP = "references to outputs from other groups must be to earlier groups"


@dataclass(frozen=True, slots=True)
class ModuleFacts:
    """One Cluster Toolkit module's outputs and inputs (list-typed inputs marked)."""

    path: str
    source: str
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    list_inputs: tuple[str, ...]


@cache
def module_table() -> dict[str, ModuleFacts]:
    """Every module the data file describes, by its path in the toolkit repository."""
    data = load_data(FILE)
    return {
        path: ModuleFacts(
            path,
            str(entry["source"]),
            tuple(entry["outputs"]),
            tuple(entry["inputs"]),
            tuple(entry["list_inputs"]),
        )
        for path, entry in data["modules"].items()
    }


def facts_for(source: str) -> ModuleFacts | None:
    """The facts of a module `source` (a toolkit path, or a git URL with `//path?ref=`)."""
    path = source.split("?", 1)[0]
    if "//" in path:
        path = path.rsplit("//", 1)[1]
    path = path.strip("/")
    for key, facts in module_table().items():
        if path == key or path.endswith("/" + key) or key.endswith("/" + path):
            return facts
    return None


@dataclass
class Wiring:
    """The blueprint's modules by id, their groups and what feeds each module's inputs."""

    loc: dict[str, Loc] = field(default_factory=dict)
    group: dict[str, int] = field(default_factory=dict)
    facts: dict[str, ModuleFacts | None] = field(default_factory=dict)

    def fed(self, m: Mapper, ident: str, name: str) -> list[str]:
        """Ids of the modules whose outputs reach input `name` of module `ident`.

        An input the blueprint sets itself takes only the modules it references; an unset one
        takes, through `use:`, every used module with an output of that name (all of them for
        a list input, the last one otherwise).
        """
        module = self.loc[ident]
        setting: Loc = (*module, "settings", name)
        if m.has(setting):
            return list(dict.fromkeys(r for r, _ in _refs(m.get(setting))))
        own = self.facts.get(ident)
        if own is not None and name not in own.inputs:
            return []
        feeding = [
            used
            for used in _uses(m, module)
            if (facts := self.facts.get(used)) is not None and name in facts.outputs
        ]
        if own is not None and name not in own.list_inputs:
            return feeding[-1:]
        return feeding


def _uses(m: Mapper, module: Loc) -> list[str]:
    use = m.get((*module, "use"))
    return [str(u) for u in use] if isinstance(use, list) else []


def _refs(value: Any) -> Iterator[tuple[str, str]]:
    """Every `$(id.output)` (and `$(vars.x)`) in a setting's value, nested values too."""
    if isinstance(value, str):
        yield from ((a, b) for a, b in REF.findall(value))
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _refs(item)


def _walk(value: Any, loc: Loc) -> Iterator[tuple[Loc, str, str]]:
    if isinstance(value, str):
        for ident, name in REF.findall(value):
            yield loc, ident, name
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*loc, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*loc, key))


def _hint(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f'did you mean "{close[0]}"?' if close else ""


def wire(m: Mapper, modules: list[Loc]) -> Wiring:
    """Check every `use:` and `$(...)` reference as gcluster does; errors go to `m`."""
    wiring = Wiring()
    for module in modules:
        ident = str(m.get((*module, "id"), ""))
        wiring.loc[ident] = module
        wiring.group[ident] = int(module[1])
        wiring.facts[ident] = facts_for(str(m.get((*module, "source"), "")))
    ids = list(wiring.loc)
    variables = m.get(("vars",))
    names = [str(k) for k in variables] if isinstance(variables, dict) else []
    for ident, module in wiring.loc.items():
        for index, used in enumerate(_uses(m, module)):
            _check_module(m, wiring, ident, used, (*module, "use", index), ids)
        settings = m.get((*module, "settings"))
        if not isinstance(settings, dict):
            continue
        for loc, target, name in _walk(settings, (*module, "settings")):
            if target == "vars":
                if name not in names:
                    hint = _hint(name, names) or "add it under vars:"
                    text = f'module "{ident}" references unknown global variable "{name}"'
                    m.error(loc, text, hint, prefer="value")
                continue
            if not _check_module(m, wiring, ident, target, loc, ["vars", *ids]):
                continue
            facts = wiring.facts.get(target)
            if facts is not None and name not in facts.outputs:
                hint = _hint(name, list(facts.outputs)) or "outputs: " + ", ".join(facts.outputs)
                text = f'module "{target}" does not have output "{name}"'
                m.error(loc, text, hint, prefer="value")
    return wiring


def _check_module(
    m: Mapper, wiring: Wiring, ident: str, target: str, loc: Loc, choices: list[str]
) -> bool:
    if target not in wiring.loc:
        m.error(loc, f'unknown module id: "{target}"', _hint(target, choices), prefer="value")
        return False
    if wiring.group[target] > wiring.group[ident]:
        m.error(loc, f"{LATER_GROUP}: {target} is in a later group", prefer="value")
        return False
    return True

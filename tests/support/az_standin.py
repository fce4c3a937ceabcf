"""A stand-in for the two Azure CLI calls the generated inventory makes for a scale set.

Nothing here can reach Azure, so `az` is replaced by a script that prints what the real CLI
prints: `az vmss list-instances` lists VirtualMachineScaleSetVM objects (`instanceId`, `name`
"<scale set>_<id>", `osProfile.computerName`, `provisioningState`) and `az vmss nic list` lists
NetworkInterface objects (`primary`, `ipConfigurations[].primary`, `.privateIPAddress`,
`virtualMachine.id` ".../virtualMachineScaleSets/<name>/virtualMachines/<id>"), the Azure CLI's
flattening of the REST resources (Compute VirtualMachineScaleSetVMs - List, Network
NetworkInterfaces - ListVirtualMachineScaleSetNetworkInterfaces). The instances come from a
JSON file the test edits: {"<scale set name>": {"<instance id>": "<private address>"}}.
"""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = r"""#!PYTHON
import json, sys
args = sys.argv[1:]
table = json.load(open(TABLE))
def opt(name):
    return args[args.index(name) + 1]
def base36(n):
    digits, out = "0123456789abcdefghijklmnopqrstuvwxyz", ""
    while True:
        n, rest = divmod(n, 36)
        out = digits[rest] + out
        if n == 0:
            return out.rjust(6, "0")
if args[:2] == ["vmss", "list-instances"]:
    name = opt("--name")
    print(json.dumps([
        {"instanceId": iid, "name": f"{name}_{iid}", "provisioningState": "Succeeded",
         "osProfile": {"computerName": f"{name}{base36(int(iid))}"}}
        for iid in table.get(name, {})
    ]))
elif args[:3] == ["vmss", "nic", "list"]:
    name, group = opt("--vmss-name"), opt("--resource-group")
    print(json.dumps([
        {"name": "primary", "primary": True,
         "virtualMachine": {"id": f"/subscriptions/0/resourceGroups/{group}/providers/"
                                  f"Microsoft.Compute/virtualMachineScaleSets/{name}/"
                                  f"virtualMachines/{iid}"},
         "ipConfigurations": [{"name": "primary", "primary": True,
                               "privateIPAddress": address}]}
        for iid, address in table.get(name, {}).items()
    ]))
else:
    sys.exit(f"az stand-in: unexpected arguments {args}")
"""


def install(bin_dir: Path, table: Path) -> Path:
    """Write the stand-in `az` into bin_dir, reading its instances from `table`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "az"
    text = SCRIPT.replace("PYTHON", sys.executable, 1).replace("TABLE", repr(str(table)), 1)
    path.write_text(text)
    path.chmod(0o755)
    return path

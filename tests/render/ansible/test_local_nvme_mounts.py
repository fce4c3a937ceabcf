"""A blueprint `kind: local_nvme` entry's `mount:` is where jobs find the space.

The local_nvme role's boot unit mounts the NVMe on the image's or cloud's path and bind-mounts
the entry's folder on the entry's `mount:`; without pyxis the role still ships (it used to live
in the pyxis_enroot role, so a cluster without containers never mounted its NVMe at all). The
bind itself, on a real mount, is tests/integration/test_local_nvme.py.
"""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

import enroot_standin as standin
import support
from archform.render.generate import build_files
from archform.spec import load_paths

UNIT = "ansible/roles/local_nvme/files/archform-local-nvme.service"


def _files(tmp_path: Path, stem: str, entry: str, **swap: str) -> dict[str, str]:
    text = (support.BLUEPRINTS / f"{stem}.yaml").read_text()
    assert "\nstorage:\n" in text
    text = text.replace("\nstorage:\n", f"\nstorage:\n  - {entry}\n", 1)
    for old, new in swap.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{stem}.yaml"
    path.write_text(text)
    return {f.path: f.content.decode() for f in build_files(load_paths([path]))}


def test_a_mount_elsewhere_is_bind_mounted_from_a_folder_on_the_nvme(tmp_path: Path) -> None:
    files = _files(
        tmp_path,
        "gcp-a3-mega-tcpxo",
        "{name: scratch, kind: local_nvme, purpose: scratch, mount: /scratch}",
    )
    argv = standin.boot_argv(files[UNIT])
    assert argv[1:] == ["--bind", "scratch", "/scratch", "/mnt/localssd", "enroot"], argv
    reader = YAML(typ="safe", pure=True)  # Ansible's `!unsafe` strings read as plain ones
    reader.constructor.add_constructor(
        "!unsafe", lambda loader, node: loader.construct_scalar(node)
    )
    group_vars = reader.load(files["ansible/group_vars/all.yml"])
    assert group_vars["local_nvme_binds"] == [{"folder": "scratch", "path": "/scratch"}]
    assert group_vars["local_nvme_folders"] == ["enroot"]


def test_a_mount_on_or_below_the_nvme_path_is_no_bind(tmp_path: Path) -> None:
    same = _files(
        tmp_path,
        "gcp-a3-mega-tcpxo",
        "{name: s, kind: local_nvme, purpose: scratch, mount: /mnt/localssd}",
    )
    assert standin.boot_argv(same[UNIT])[1:] == ["/mnt/localssd", "enroot"]
    below = _files(
        tmp_path,
        "gcp-a3-mega-tcpxo",
        "{name: s, kind: local_nvme, purpose: scratch, mount: /mnt/localssd/jobs}",
    )
    assert standin.boot_argv(below[UNIT])[1:] == ["/mnt/localssd", "enroot", "jobs"]


def test_without_pyxis_the_nvme_is_still_prepared_and_no_enroot_folder_made(
    tmp_path: Path,
) -> None:
    files = _files(
        tmp_path,
        "gcp-a3-mega-tcpxo",
        "{name: scratch, kind: local_nvme, purpose: scratch, mount: /scratch}",
        **{"containers: pyxis": "containers: none"},
    )
    assert not any("/roles/pyxis_enroot/" in p for p in files)
    assert "    - local_nvme\n" in files["ansible/site.yml"]
    assert standin.boot_argv(files[UNIT])[1:] == ["--bind", "scratch", "/scratch", "/mnt/localssd"]


def test_a_cluster_with_neither_ships_no_local_nvme_role() -> None:
    loaded = load_paths([support.BLUEPRINTS / "onprem-cpu-smoke.yaml"])
    paths = [f.path for f in build_files(loaded)]
    assert not any("/roles/local_nvme/" in p for p in paths)

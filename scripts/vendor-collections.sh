#!/bin/sh
# Vendor the two Ansible collections archform's playbooks use (ansible.posix and
# community.general) without Galaxy: take them from the `ansible` community wheel on PyPI.
#
#   scripts/vendor-collections.sh [TARGET]     (default: .cache/ansible_collections)
#
# TARGET ends in ansible_collections/; point ANSIBLE_COLLECTIONS_PATH (or
# ARCHFORM_COLLECTIONS_PATH for the tests) at its parent folder. Idempotent: does nothing
# when both collections are already there. Needs python3 with pip, and PyPI access once.
set -eu

ANSIBLE_VERSION="12.3.0"   # the last `ansible` release installable on Python 3.11
target="${1:-.cache/ansible_collections}"
python="${PYTHON:-python3}"

if [ -f "$target/ansible/posix/MANIFEST.json" ] && [ -f "$target/community/general/MANIFEST.json" ]; then
    echo "collections already vendored in $target"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

"$python" -m pip download --quiet --no-deps --dest "$work" "ansible==$ANSIBLE_VERSION"
wheel="$(ls "$work"/ansible-"$ANSIBLE_VERSION"-*.whl)"

mkdir -p "$target"
"$python" - "$wheel" "$target" <<'PY'
import sys
import zipfile
from pathlib import Path

wheel, target = sys.argv[1], Path(sys.argv[2])
wanted = ("ansible_collections/ansible/posix/", "ansible_collections/community/general/")
count = 0
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        if info.is_dir() or not info.filename.startswith(wanted):
            continue
        rel = Path(info.filename).relative_to("ansible_collections")
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(archive.read(info))
        count += 1
print(f"vendored {count} files into {target}")
PY

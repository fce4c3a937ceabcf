"""The seeded-fault corpus for `archform verify`: one known fault per row, as data.

Each row names the check that must catch it, the bundled blueprint whose generated tree it
is seeded into, the file (relative to the tree), the exact text to replace (it must occur:
a template change that removes it fails the corpus loudly instead of seeding nothing), the
replacement, and a regular expression the failing result's artifact + detail must match.

To add a check's faults, append rows with its Check.name; `READS` says which files a check
reads when it is expensive to re-run (only ansible today); every other check is re-run on
every faulted tree, so a fault must be reported by its own check and by no other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected fault."""

    id: str
    check: str  # Check.name expected to report it
    blueprint: str  # stem under blueprints/
    path: str  # file inside the generated tree
    old: str
    new: str
    expect: str  # regex over "artifact: detail" of a failed result of `check`


# The AWS tree's task that adds the FSx for Lustre client repository.
LUSTRE_REPO_TASK = (
    "    - name: Add the Lustre client repository\n"
    "      ansible.builtin.deb822_repository:\n"
    '        name: "{{ lustre_client_repo.name }}"\n'
    "        types: deb\n"
    "        uris: \"{{ lustre_client_repo.uri | replace('{codename}', "
    'archform_image_codename) }}"\n'
    '        suites: "{{ lustre_client_repo.suite }}"\n'
    "        components: main\n"
    '        signed_by: "{{ lustre_client_repo.key }}"\n'
    "        state: present\n"
    "      when: lustre_client_method == 'repo'\n"
    "\n"
)

# The task that adds NVIDIA's libnvidia-container repository (pyxis_enroot container_toolkit.yml).
TOOLKIT_REPO_TASK = (
    "- name: Add NVIDIA's libnvidia-container repository\n"
    "  ansible.builtin.deb822_repository:\n"
    '    name: "{{ container_toolkit_repo.name }}"\n'
    "    types: deb\n"
    "    uris: \"{{ container_toolkit_repo.uri | replace('{arch}', pyxis_enroot_deb_arch) }}\"\n"
    '    suites: "{{ container_toolkit_repo.suite }}"\n'
    '    signed_by: "{{ container_toolkit_repo.key }}"\n'
    "    state: present\n"
    "  when: image_container_toolkit | length == 0\n"
    "\n"
)
# The Azure tree's peermem tasks: load the module, then stat and assert it.
PEERMEM_LOAD = (
    "- name: Load nvidia-peermem now\n"
    "  community.general.modprobe:\n"
    "    name: nvidia-peermem\n"
    "    state: present\n"
    "\n"
)
PEERMEM_REQUIRE = (
    "- name: Check that nvidia-peermem is loaded\n"
    "  ansible.builtin.stat:\n"
    "    path: /sys/module/nvidia_peermem\n"
    "  register: fabric_peermem\n"
    "\n"
    "- name: Require nvidia-peermem\n"
    "  ansible.builtin.assert:\n"
    "    that: fabric_peermem.stat.exists\n"
    "    fail_msg: nvidia-peermem is not loaded; NCCL would fall back to DMA-BUF or host memory\n"
    "    quiet: true\n"
)

# One training tree (ansible + slurm + pulumi apply) keeps the slow ansible-lint runs few.
TRAIN = CLOUD = "aws-p5-efa-fsx"
FLEET = "inference-3region-a10"
AZURE = "azure-nd-h100-v5"  # gres.conf with Cores= (catalog GPU affinity)
GCP = "gcp-a3-mega-tcpxo"  # TCPXO; an image without the NVIDIA Container Toolkit
SLURM = "ansible/roles/slurm/files/"
MUNGE = "ansible/roles/munge/tasks/main.yml"
ENROOT_TASKS = "ansible/roles/pyxis_enroot/tasks/"
ENROOT_FILES = "ansible/roles/pyxis_enroot/files/"
# The enroot hook's loop over the folders it binds (TCPXO: the FasTrak plugin's).
TCPXO_BIND = (
    'for dir in /var/lib/tcpxo/lib64; do\n    if [ -d "${host}${dir}" ]; then\n        printf'
)
K8S = "kubernetes/eastus/"
DEPLOYMENT = "08-deployment-fin-serve.yaml"
# The model server's container securityContext, as generated (the last container of the pod).
SERVER_SECURITY = (
    "        securityContext:\n"
    "          allowPrivilegeEscalation: false\n"
    "          capabilities:\n"
    "            drop:\n"
    "            - ALL\n"
    "        volumeMounts:\n"
    "        - name: dshm\n"
)

FAULTS: list[Fault] = [
    # --- slurm: a real slurmctld plus the GRES/topology comparison with the blueprint ---
    Fault(
        "gres-count-wrong",
        "slurm",
        TRAIN,
        SLURM + "gres.conf",
        "File=/dev/nvidia[0-7]",
        "File=/dev/nvidia[0-6]",
        r"gres\.conf: .*slurm\.conf gpu:h100:8, gres\.conf gpu:h100:7",
    ),
    # gres.conf Cores= (GPU-local cores, from the catalog) against the node layout.
    Fault(
        "gres-cores-beyond-node",
        "slurm",
        AZURE,
        SLURM + "gres.conf",
        "File=/dev/nvidia[4-7] Cores=48-95",
        "File=/dev/nvidia[4-7] Cores=48-96",
        r"gres\.conf \(slurmd -G\): .*Invalid GRES data for gpu, Cores=48-96",
    ),
    Fault(
        "gres-cores-overlap",
        "slurm",
        AZURE,
        SLURM + "gres.conf",
        "File=/dev/nvidia[0-3] Cores=0-47",
        "File=/dev/nvidia[0-3] Cores=0-50",
        r"gres\.conf \(Cores\): .*core sets partly overlap \(\[48, 49, 50\]\)",
    ),
    Fault(
        "gres-device-twice",
        "slurm",
        AZURE,
        SLURM + "gres.conf",
        "File=/dev/nvidia[4-7] Cores=48-95",
        "File=/dev/nvidia[3-6] Cores=48-95",
        r"gres\.conf \(Cores\): .*/dev/nvidia3 listed on more than one line",
    ),
    Fault(
        "slurm-conf-gres-count",
        "slurm",
        CLOUD,
        SLURM + "slurm.conf",
        "Gres=gpu:h100:8",
        "Gres=gpu:h100:4",
        r"\(nodes, GRES\): .*gpu:h100:4 != gpu:h100:8",
    ),
    Fault(
        "slurm-conf-unknown-key",
        "slurm",
        TRAIN,
        SLURM + "slurm.conf",
        "GresTypes=gpu\n",
        "GresTypes=gpu\nFrobnicateNodes=yes\n",
        r"NOT UP.*unrecognized key: FrobnicateNodes",
    ),
    Fault(
        "cgroup-conf-unknown-key",
        "slurm",
        TRAIN,
        SLURM + "cgroup.conf",
        "ConstrainCores=YES\n",
        "ConstrainCores=YES\nConstrainGpuMagic=YES\n",
        r"NOT UP.*unrecognized key: ConstrainGpuMagic",
    ),
    Fault(
        "topology-node-dropped",
        "slurm",
        TRAIN,
        SLURM + "topology.conf",
        "Nodes=aws-p5-train-gpu[001-016]",
        "Nodes=aws-p5-train-gpu[001-015]",
        r"nodes in no leaf: aws-p5-train-gpu016",
    ),
    # --- ansible: ansible-playbook --syntax-check and ansible-lint (production profile) ---
    Fault(
        "ansible-unknown-module",
        "ansible",
        TRAIN,
        MUNGE,
        "  ansible.builtin.apt:\n    name: munge",
        "  ansible.builtin.aptt:\n    name: munge",
        r"couldn't resolve module/action 'ansible\.builtin\.aptt'",
    ),
    Fault(
        "ansible-unsupported-argument",
        "ansible",
        TRAIN,
        MUNGE,
        "    cache_valid_time: 3600\n",
        "    cache_valid_time: 3600\n    cache_valid_tim: 3600\n",
        r"Unsupported parameters for .*cache_valid_tim",
    ),
    Fault(
        "ansible-shell-without-changed-when",
        "ansible",
        TRAIN,
        MUNGE,
        "  changed_when: true\n  no_log: true",
        "  no_log: true",
        r"no-changed-when",
    ),
    Fault(
        "ansible-missing-role",
        "ansible",
        TRAIN,
        "ansible/site.yml",
        "    - munge\n",
        "    - mungee\n",
        r"syntax-check.*role 'mungee' was not found|mungee",
    ),
    # --- packages: every package a task installs resolves on the chosen image ---
    Fault(
        "package-without-source",
        "packages",
        TRAIN,
        "ansible/roles/nfs_client/tasks/main.yml",
        "    name: nfs-common\n",
        "    name: [nfs-common, nfs-fancy-client]\n",
        r"'nfs-fancy-client' has no source on image",
    ),
    Fault(
        "package-repository-task-removed",
        "packages",
        TRAIN,
        "ansible/roles/lustre_client/tasks/main.yml",
        # the whole repository task (the generated block, verbatim)
        LUSTRE_REPO_TASK,
        "",
        r"'lustre-client-modules-aws' has no source",
    ),
    Fault(
        "package-repository-unknown",
        "packages",
        TRAIN,
        "ansible/roles/lustre_client/tasks/main.yml",
        '        uris: "{{ lustre_client_repo.uri',
        '        uris: "https://mirror.example.invalid/lustre{{ lustre_client_repo.uri',
        r"repository https://mirror\.example\.invalid/lustre",
    ),
    # The GCP accelerator image lacks the NVIDIA Container Toolkit (images.yaml): without NVIDIA's
    # libnvidia-container repository nothing provides it.
    Fault(
        "package-container-toolkit-repository-removed",
        "packages",
        GCP,
        ENROOT_TASKS + "container_toolkit.yml",
        TOOLKIT_REPO_TASK,
        "",
        r"'nvidia-container-toolkit' has no source on image gcp-ubuntu-accelerator-22.04",
    ),
    # --- containers: enroot containers see the fabric's devices and the node's libraries ---
    Fault(
        "containers-efa-device-not-bound",
        "containers",
        TRAIN,
        ENROOT_FILES + "fabric.fstab",
        "/dev/infiniband /dev/infiniband none",
        "# /dev/infiniband /dev/infiniband none (dropped)",
        r"ENROOT_RESTRICT_DEV hides /dev/infiniband from containers",
    ),
    Fault(
        "containers-mellanox-hook-off",
        "containers",
        AZURE,
        ENROOT_FILES + "fabric.env",
        "\nMELLANOX_VISIBLE_DEVICES=all\n",
        "\nMELLANOX_VISIBLE_DEVICES=none\n",
        r"environ\.d sets MELLANOX_VISIBLE_DEVICES=none, the infiniband fabric needs",
    ),
    Fault(
        "containers-tcpxo-plugin-not-bound",
        "containers",
        GCP,
        ENROOT_FILES + "fabric-hook.sh",
        TCPXO_BIND,
        TCPXO_BIND.replace("lib64;", "lib64-old;"),
        r"no hook or mounts\.d line binds the node's /var/lib/tcpxo/lib64",
    ),
    Fault(
        "containers-efa-stack-bound-over-the-images",
        "containers",
        TRAIN,
        ENROOT_FILES + "fabric-hook.sh",
        "        exit 0\n",
        "        true\n",
        r"an image with its own /opt/amazon/efa still gets the node's libraries",
    ),
    # --- paths: every path a task asserts or a configuration names has a provider before ---
    # The per-user temporary path enroot never creates (b0c054e's enroot.conf): `mktemp -d -p`
    # fails on every image import.
    Fault(
        "path-never-created",
        "paths",
        TRAIN,
        "ansible/roles/pyxis_enroot/files/enroot.conf",
        "ENROOT_TEMP_PATH /opt/dlami/nvme/enroot/${UID}\n",
        "ENROOT_TEMP_PATH /opt/dlami/nvme/enroot/${UID}/tmp\n",
        r"ENROOT_TEMP_PATH /opt/dlami/nvme/enroot/\$\{UID\}/tmp: a per-user path that no "
        r"service creates",
    ),
    # The module is loaded after the assert that requires it.
    Fault(
        "assert-before-install",
        "paths",
        AZURE,
        "ansible/roles/fabric/tasks/peermem.yml",
        PEERMEM_LOAD + PEERMEM_REQUIRE,
        PEERMEM_REQUIRE + "\n" + PEERMEM_LOAD.removesuffix("\n"),
        r"'Require nvidia-peermem' asserts /sys/module/nvidia_peermem on compute nodes before "
        r"anything provides it",
    ),
    Fault(
        "mount-source-never-created",
        "paths",
        AZURE,
        "ansible/roles/pyxis_enroot/files/nccl.fstab",
        "/opt/microsoft /opt/microsoft none",
        "/opt/microsoft-hpc /opt/microsoft none",
        r"mount source /opt/microsoft-hpc: nothing provides it on compute nodes",
    ),
    # --- slurm-plugins: the plugins the configs name against the install path; pyxis headers ---
    Fault(
        "plugin-not-provided-cgroup-v2",
        "slurm-plugins",
        TRAIN,
        "ansible/group_vars/all.yml",
        '  - "libdbus-1-dev"\n',
        "",
        r"CgroupPlugin=autodetect needs cgroup/v2 \(cgroup_v2\.so\).*installs no libdbus-1-dev",
    ),
    Fault(
        "plugin-not-provided-accounting-mysql",
        "slurm-plugins",
        TRAIN,
        "ansible/group_vars/all.yml",
        '  - "libmariadb-dev"\n',
        "",
        r"StorageType=accounting_storage/mysql needs accounting_storage/mysql .*no libmariadb-dev",
    ),
    Fault(
        "plugin-not-provided-pmix-not-enabled",
        "slurm-plugins",
        TRAIN,
        "ansible/group_vars/all.yml",
        '  - !unsafe "--with-pmix=/usr/lib/{multiarch}/pmix2"\n',
        "",
        r"MpiDefault=pmix needs mpi/pmix .*does not enable it",
    ),
    Fault(
        "pyxis-against-other-headers",
        "slurm-plugins",
        TRAIN,
        "ansible/roles/slurm/tasks/pyxis.yml",
        'CPPFLAGS: "-I{{ slurm_pyxis_include }}"',
        'CPPFLAGS: "-I/usr/include"',
        r"compiles pyxis with CPPFLAGS='-I/usr/include', not '-I/opt/slurm/24\.05\.8/include'",
    ),
    Fault(
        "pyxis-distro-libslurm-dev",
        "slurm-plugins",
        TRAIN,
        "ansible/roles/slurm/tasks/pyxis.yml",
        "(['libslurm-dev'] if slurm_install_method == 'distro' else [])",
        "['libslurm-dev']",
        r"installs libslurm-dev \(the distribution's Slurm headers\) beside a Slurm 24\.05\.8",
    ),
    # --- pulumi: every program under pulumi.runtime.set_mocks with the real provider SDKs ---
    Fault(
        "pulumi-unknown-argument",
        "pulumi",
        CLOUD,
        "pulumi/network.py",
        "cidr_block=s.VPC_CIDR,",
        "cidr_blok=s.VPC_CIDR,",
        r"unexpected keyword argument 'cidr_blok'",
    ),
    Fault(
        "pulumi-missing-required-argument",
        "pulumi",
        CLOUD,
        "pulumi/network.py",
        "        security_group_id=egress_sg.id,\n",
        "",
        r"Missing required property 'security_group_id'",
    ),
    Fault(
        "pulumi-argument-of-wrong-type",
        "pulumi",
        CLOUD,
        "pulumi/compute.py",
        '        placement={"availability_zone": s.ZONE},\n        tags=s.TAGS,\n    )',
        '        placement=[{"availability_zone": s.ZONE}],\n        tags=s.TAGS,\n    )',
        r"AssertionError",
    ),
    Fault(
        "pulumi-unknown-resource-class",
        "pulumi",
        FLEET,
        "pulumi/__main__.py",
        "azure.containerservice.ManagedCluster(",
        "azure.containerservice.ManagedClustr(",
        r"has no attribute 'ManagedClustr'",
    ),
    # --- policy (CrossGuard pack, evaluated by the pulumi check on the recorded graph) ---
    # The Deployment keeps the provider's 10-minute default await (customTimeouts dropped).
    Fault(
        "await-shorter-than-startup",
        "pulumi",
        FLEET,
        "pulumi/workload.py",
        "    wait = (awaits or {}).get(kind)\n",
        "    wait = None\n",
        r"\[workload-await-covers-startup\] eastus-deployment-fin-serve: Pulumi waits 600 s "
        r"for the create but the workload may take 2290 s",
    ),
    # The AKS kubeconfig passed through as the API returns it: kubelogin in device-code mode.
    Fault(
        "aks-devicecode-kubeconfig",
        "pulumi",
        FLEET,
        "pulumi/__main__.py",
        "lambda k: non_interactive(base64.b64decode(k[0].value).decode()))",
        "lambda k: base64.b64decode(k[0].value).decode())",
        r"\[no-interactive-credentials\] eastus-k8s: .*kubelogin --login devicecode",
    ),
    # Front Door accepts HTTP and forwards it instead of redirecting to HTTPS.
    Fault(
        "edge-listener-plain-http",
        "pulumi",
        FLEET,
        "pulumi/__main__.py",
        'https_redirect="Enabled" if EDGE["tls"] else "Disabled",',
        'https_redirect="Disabled",',
        r"\[edge-listener-tls\] frontdoor-route: Front Door route serves plain HTTP "
        r"\(supportedProtocols \['Http', 'Https'\], httpsRedirect Disabled\)",
    ),
    # --- kubernetes-validate: strict schemas for core kinds, vendored CRD schemas ---
    Fault(
        "deployment-unknown-field",
        "kubernetes-validate",
        FLEET,
        K8S + DEPLOYMENT,
        "      maxUnavailable: 0\n",
        "      maxUnavailable: 0\n  replicaz: 3\n",
        r"Deployment fin-serve: spec: .*'replicaz' was unexpected",
    ),
    Fault(
        "deployment-field-of-wrong-type",
        "kubernetes-validate",
        FLEET,
        K8S + DEPLOYMENT,
        "      maxUnavailable: 0\n",
        "      maxUnavailable: 0\n  minReadySeconds: soon\n",
        r"spec\.minReadySeconds: 'soon' is not of type 'integer'",
    ),
    Fault(
        "pdb-removed-api-version",
        "kubernetes-validate",
        FLEET,
        K8S + "10-poddisruptionbudget-fin-serve.yaml",
        "apiVersion: policy/v1\n",
        "apiVersion: policy/v1beta1\n",
        r"no schema for policy/v1beta1 PodDisruptionBudget",
    ),
    Fault(
        "scaledobject-misspelled-field",
        "kubernetes-validate",
        FLEET,
        K8S + "11-scaledobject-fin-serve.yaml",
        "  cooldownPeriod: 360\n",
        "  coolDownPeriod: 360\n",
        r"ScaledObject fin-serve: spec: .*'coolDownPeriod' was unexpected",
    ),
    # --- checkov: every generated manifest set; schema-valid objects that are not safe ---
    Fault(
        "privileged-container",
        "checkov",
        FLEET,
        K8S + DEPLOYMENT,
        SERVER_SECURITY,
        SERVER_SECURITY.replace(
            "          capabilities:\n", "          privileged: true\n          capabilities:\n"
        ),
        r"kubernetes/eastus: .*CKV_K8S_16 Container should not be privileged"
        r" \(Deployment\.fin-serve\.fin-serve",
    ),
    Fault(
        "capability-added",
        "checkov",
        FLEET,
        K8S + DEPLOYMENT,
        SERVER_SECURITY,
        SERVER_SECURITY.replace(
            "            drop:\n            - ALL\n", "            add:\n            - SYS_ADMIN\n"
        ),
        r"kubernetes/eastus: .*CKV_K8S_39 Do not use the CAP_SYS_ADMIN linux capability",
    ),
    Fault(
        "host-network",
        "checkov",
        FLEET,
        K8S + DEPLOYMENT,
        "      serviceAccountName: model-reader\n",
        "      serviceAccountName: model-reader\n      hostNetwork: true\n",
        r"kubernetes/eastus: .*CKV_K8S_19 Containers should not share the host network namespace",
    ),
]


def _ansible_reads(path: str) -> bool:
    """ansible-playbook --syntax-check and ansible-lint read the playbooks, roles' YAML,
    ansible.cfg and the inventory; not the static files a role copies (slurm.conf, ...)."""
    return path.startswith("ansible/") and (
        path.endswith((".yml", ".yaml", ".cfg")) or "/inventory/" in path
    )


# Checks too slow to re-run on every faulted tree: the files they read. A fault outside
# them cannot change their result, so the pristine tree's result stands for it.
READS: dict[str, Callable[[str], bool]] = {"ansible": _ansible_reads}

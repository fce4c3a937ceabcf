"""Azure in verify's Pulumi mock: Front Door, AKS, Managed Lustre, the client config."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from archform.verify.provider import ProviderVerify, VerifyBase

# What the AKS API returns for listClusterUserCredentials(format=exec) on a cluster with
# managed Entra ID: an exec kubeconfig running kubelogin in device-code mode (the layout
# quoted in https://github.com/Azure/kubelogin/issues/193 and
# https://github.com/pulumi/pulumi-azure-native/issues/2399; the server and client ids are
# the AKS Entra applications, https://github.com/Azure/kubelogin docs/book/src/concepts/aks.md).
_AKS_KUBECONFIG = """\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: bW9jay1jYQ==
    server: https://mock-aks.hcp.mock-region.azmk8s.io:443
  name: mock-aks
contexts:
- context:
    cluster: mock-aks
    user: clusterUser_mock-rg_mock-aks
  name: mock-aks
current-context: mock-aks
kind: Config
preferences: {}
users:
- name: clusterUser_mock-rg_mock-aks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - get-token
      - --environment
      - AzurePublicCloud
      - --server-id
      - 6dae42f8-4368-4678-94ff-3960e28e3630
      - --client-id
      - 80faf920-1908-4b52-b5ef-a8e7bedfc67a
      - --tenant-id
      - 00000000-0000-0000-0000-00000000000a
      - --login
      - devicecode
      command: kubelogin
      env: null
      provideClusterInfo: false
"""


def _aks_kubeconfig() -> str:
    import base64

    return base64.b64encode(_AKS_KUBECONFIG.encode()).decode()


class AzureVerify(VerifyBase):
    """Placeholders for what Azure computes and the generated programs read."""

    mock_outputs = MappingProxyType(
        {
            "azure-native:cdn:Profile": lambda name, inputs: {
                "frontDoorId": "00000000-0000-0000-0000-0000000000fd"
            },
            "azure-native:cdn:AFDEndpoint": lambda name, inputs: {
                "hostName": f"{name}.mock.azurefd.net"
            },
            "azure-native:containerservice:ManagedCluster": lambda name, inputs: {
                "identityProfile": {
                    "kubeletidentity": {
                        "objectId": "00000000-0000-0000-0000-000000000001",
                        "clientId": "00000000-0000-0000-0000-000000000002",
                    }
                }
            },
            "azure-native:storagecache:AmlFilesystem": lambda name, inputs: {
                "clientInfo": {
                    "mgsAddress": "10.0.0.40",
                    "mountCommand": (
                        "sudo mount -t lustre -o noatime,flock 10.0.0.40@tcp:/lustrefs /mnt"
                    ),
                    "lustreVersion": "2.15",
                    "containerStorageInterface": {},
                }
            },
        }
    )

    def mock_call(self, token: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The signed-in client, and an AKS user kubeconfig."""
        if token.startswith("azure-native:") and token.endswith("getClientConfig"):
            return {
                "tenantId": "00000000-0000-0000-0000-00000000000a",
                "subscriptionId": "00000000-0000-0000-0000-00000000000b",
                "clientId": "00000000-0000-0000-0000-00000000000c",
                "objectId": "00000000-0000-0000-0000-00000000000d",
            }
        if token.endswith("listManagedClusterUserCredentials"):
            return {"kubeconfigs": [{"name": "clusterUser", "value": _aks_kubeconfig()}]}
        return None


VERIFY: ProviderVerify = AzureVerify()

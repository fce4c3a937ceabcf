r"""The fleet's public entry point serves plain HTTP.

## What it does
Flags an InferenceFleet whose public entry point (`traffic.global_load_balancer`: Global
Accelerator on AWS, the multi-cluster Gateway on GCP, Front Door on Azure) is opted out of
TLS with `edge.protocol: http`. archform serves HTTPS only by default (a managed
certificate for `edge.domain`, TLS 1.2 or later, Front Door redirecting HTTP to HTTPS); this
rule reports the explicit opt-out. Fleets without a public entry point are not flagged.

## Why is this bad?
Prompts, completions and the `Authorization: Bearer` API key cross the internet in clear
text: anyone on the path reads them, and with the key calls the fleet on your GPU bill.
A managed certificate costs nothing on any of the three clouds.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: azure, regions: [eastus, westeurope]}
model:
  name: llama-3.1-8b
  params: 8e9
  source: "https://acct.blob.core.windows.net/m/llama/v1/"
  source_account_id: "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/m/\
    providers/Microsoft.Storage/storageAccounts/acct"
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: Standard_NV72ads_A10_v5, min_nodes_per_region: 2, max_nodes_per_region: 8}
traffic: {peak_rps: 50, p99_latency_ms: 5000, global_load_balancer: true}
edge:
  protocol: http
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: azure, regions: [eastus, westeurope]}
model:
  name: llama-3.1-8b
  params: 8e9
  source: "https://acct.blob.core.windows.net/m/llama/v1/"
  source_account_id: "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/m/\
    providers/Microsoft.Storage/storageAccounts/acct"
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: Standard_NV72ads_A10_v5, min_nodes_per_region: 2, max_nodes_per_region: 8}
traffic: {peak_rps: 50, p99_latency_ms: 5000, global_load_balancer: true}
edge:
  domain: api.example.com
```

## References
- AWS, TLS listeners for your Network Load Balancer:
  https://docs.aws.amazon.com/elasticloadbalancing/latest/network/create-tls-listener.html
- GKE, secure a Gateway (Certificate Manager, SSL policies):
  https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway
- Azure Front Door, HTTPS on a custom domain:
  https://learn.microsoft.com/azure/frontdoor/standard-premium/how-to-configure-https-custom-domain
- OWASP Transport Layer Security Cheat Sheet:
  https://cheatsheetseries.owasp.org/cheatsheets/Transport_Layer_Security_Cheat_Sheet.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="SEC004", name="plain-http-edge", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """edge.protocol: http on a fleet with a public entry point."""
    for doc, fleet in ctx.fleets():
        public = bool(fleet.traffic and fleet.traffic.global_load_balancer)
        if public and fleet.edge.protocol == "http":
            yield Hit(
                doc,
                ("edge", "protocol"),
                f"the public entry point of {fleet.name} serves plain HTTP; expected HTTPS "
                "(the default)",
                "remove edge.protocol and give edge.domain, the name the managed certificate "
                "is issued for",
            )

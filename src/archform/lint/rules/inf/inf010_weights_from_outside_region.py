"""Model weights pulled from the public internet or from another region.

## What it does
Flags an InferenceFleet whose `model.source` is on the public internet (`hf://`, or an
`https://` URL that is not a cloud object store), or whose pods in some serving regions
read the weights from another region (`model.source_region` differs and
`model.replicate_to_regions` is false). Weights outside every serving region without
replication are STO006.

## Why is this bad?
Every scale-up and every restart downloads tens to hundreds of GB: with the weights pulled
from Hugging Face, Llama-3-70B pods took 15-20 minutes to start, against about one minute
from a local cache. Cross-region pulls are slower and pay egress each time.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model:
  name: llama-3.1-8b
  params: 8e9
  source: "hf://meta-llama/Llama-3.1-8B-Instruct"
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model:
  name: llama-3.1-8b
  params: 8e9
  source: "s3://corp-models/llama-3.1-8b/"
  source_region: us-east-1
  replicate_to_regions: true
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
```

## References
- KServe issue 3869 (model download from another region: 15-20 min against about 1 min):
  https://github.com/kserve/kserve/issues/3869
- Amazon S3 pricing, data transfer between regions: https://aws.amazon.com/s3/pricing/
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule

CLOUD_HTTPS = re.compile(
    r"^https://[^/]*(\.blob\.core\.windows\.net|\.s3[.-][^/]*amazonaws\.com|"
    r"\.s3\.amazonaws\.com|storage\.googleapis\.com)(/|$)"
)


def is_public(source: str) -> bool:
    """True for a model source on the public internet rather than a cloud object store."""
    if source.startswith("hf://"):
        return True
    return source.startswith("https://") and not CLOUD_HTTPS.match(source)


@rule(code="INF010", name="weights-from-outside-region", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Public-internet or cross-region weights."""
    for doc, fleet in ctx.fleets():
        model = fleet.model
        regions = fleet.placement.all_regions
        if is_public(model.source):
            public = model.source.startswith("hf://")
            host = "Hugging Face" if public else model.source.split("/")[2]
            yield Hit(
                doc,
                ("model", "source"),
                f"weights come from the public internet ({host}): every "
                "pod start downloads them (15-20 min for a 70B model vs ~1 min from a local "
                "cache); expected an object store in the fleet's regions",
                "mirror the weights into a bucket in each serving region and point source at it",
            )
            continue
        source = model.source_region or regions[0]
        others = [r for r in regions if r != source]
        if source in regions and others and not model.replicate_to_regions:
            yield Hit(
                doc,
                ctx.first_written(doc, ("model", "replicate_to_regions"), ("model", "source")),
                f"pods in {', '.join(others)} pull weights from {source}; expected in-region "
                "copies (replicate_to_regions: true)",
                "set model.replicate_to_regions: true",
            )

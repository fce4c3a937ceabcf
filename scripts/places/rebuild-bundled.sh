#!/bin/sh
# How the bundled places.json / prices.json were built (offline, from snapshots).
# Needs: the dev venv (moto installed) and the three source files at the commits below, e.g.
#   git -C <karpenter-provider-aws clone> show 6fc13b5236fd04fd16ff3f9dc7490d0813994099:pkg/providers/pricing/zz_generated.pricing_aws.go > aws.go
#   git -C <karpenter-provider-azure clone> show 2b431da153a6a92b705c18046512c60b1631b682:pkg/providers/pricing/zz_generated.pricing.go > az.go
#   git -C <kubernetes/autoscaler clone> show e72c7c68329bf047ba574f237592e84d2fa041d0:cluster-autoscaler/cloudprovider/gce/gce_price_info.go > gce.go
# Online, add --aws-offer / --aws-spot / --azure-retail / --gcp-skus (see refresh_places.py).
set -eu
cd "$(dirname "$0")/../.."
SRC=${1:?usage: rebuild-bundled.sh DIR-WITH-aws.go-az.go-gce.go}
MOTO=$(.venv/bin/python -c 'import moto, os; print(os.path.dirname(moto.__file__))')
.venv/bin/python scripts/refresh_places.py --moto "$MOTO" \
 --moto-source "moto $(.venv/bin/python -c 'import moto; print(moto.__version__)') (PyPI), moto/ec2/resources/instance_type_offerings/{region,availability-zone}: EC2 DescribeInstanceTypeOfferings and zone names as recorded by moto's scripts/ec2_get_instance_type_offerings.py (AWS maps zone names to physical zones per account)" \
 --karpenter-aws "$SRC/aws.go" --karpenter-aws-source "https://github.com/aws/karpenter-provider-aws/blob/6fc13b5236fd04fd16ff3f9dc7490d0813994099/pkg/providers/pricing/zz_generated.pricing_aws.go (AWS Price List API, us-east-1, generated 2026-07-20T13:44:30Z)" \
 --karpenter-azure "$SRC/az.go" --karpenter-azure-source "https://github.com/Azure/karpenter-provider-azure/blob/2b431da153a6a92b705c18046512c60b1631b682/pkg/providers/pricing/zz_generated.pricing.go (Azure Retail Prices API: Linux, Consumption, every public region; generated 2026-06-18T03:43:41Z)" \
 --autoscaler-gce "$SRC/gce.go" --autoscaler-gce-source "https://github.com/kubernetes/autoscaler/blob/e72c7c68329bf047ba574f237592e84d2fa041d0/cluster-autoscaler/cloudprovider/gce/gce_price_info.go (instancePrices / preemptiblePrices, us-central1 list prices; cross-checked: n2-standard-8 = 8 x 0.031611 + 32 x 0.004237 per vCPU/GB, a2-highgpu-1g = host 0.73948 + A100 2.933908 per skypilot-catalog v8)" \
 --gcp-source "https://github.com/skypilot-org/skypilot-catalog/blob/006059e0f18acb1341e22a27751e9f80df6ba92f/catalogs/v8/gcp/vms.csv (rows transcribed into scripts/places/gcp-zones-skypilot-v8.csv: zones of the A2/A3/A4 machine types, and every zone seen for the c2/n4/TPU rows)" \
 --azure-source "regions and sizes: the Azure Retail Prices snapshot above (a size is offered in a region when it has a Linux consumption price there); zones: https://learn.microsoft.com/azure/reliability/regions-list (MicrosoftDocs/azure-docs @ 04495fc0bdb0f924739b8f501941a14d90d96b2a), regions with zones 1, 2, 3" \
 --as-of 2026-07-20

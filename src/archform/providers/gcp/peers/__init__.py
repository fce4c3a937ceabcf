"""GCP's peer formats: Google Cloud Cluster Toolkit blueprints (a tool for GCP only).

`READERS` (reader name -> module) is what `archform.spec.peers` registers; the readers
use the spec layer's `Mapper` and nothing of the other layers.
"""

READERS = {"cluster-toolkit": "archform.providers.gcp.peers.cluster_toolkit"}

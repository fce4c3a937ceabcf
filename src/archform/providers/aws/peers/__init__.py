"""AWS's peer formats: AWS ParallelCluster 3 cluster configurations (a tool for AWS only).

`READERS` (reader name -> module) is what `archform.spec.peers` registers; the readers
use the spec layer's `Mapper` and nothing of the other layers.
"""

READERS = {"parallelcluster": "archform.providers.aws.peers.parallelcluster"}

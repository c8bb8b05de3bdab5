"""A client's Metadata request and a broker's answer on the wire (Kafka's
KafkaApis.handleTopicMetadataRequest: MetadataCache.getAliveBrokerNodes and getTopicMetadata),
sized exactly (rig.protocol.metadata_sizes) from what the answering broker knows.

The answer lists every live broker (node id, host, port, rack), the cluster id and the
controller, and per topic asked for every partition with its leader, leader epoch, replicas,
ISR and offline replicas. From the broker's metadata cache: its leaders and epochs (fixed-width:
only their presence counts), its ISRs and its live brokers. What the cache does not hold is
taken from the cluster (approximations, each stated where it is used):
- a partition's replicas: the control plane's current assignment (Kafka's UpdateMetadata and
  KRaft's image carry them; rig's cache does not keep them);
- an ISR the cache lacks (a restarted broker before its first UpdateMetadata): the control
  plane's;
- the live brokers when the cache names none (a restarted broker before its first
  UpdateMetadata or metadata record): the brokers alive now.
Offline replicas are the replicas on brokers not in that live set (the controller's
isReplicaOnline / KRaft's fenced and absent brokers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rig.cluster.endpoints import broker_host
from rig.protocol import request_wire_size, response_wire_size
from rig.protocol.apis import METADATA
from rig.protocol.metadata_sizes import (
    PartitionShape,
    metadata_request_body_size,
    metadata_response_body_size,
)

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster

# The cluster id, as Kafka's Uuid.toString writes one: 22 characters, base64url without padding
# (this one is b"rig-cluster-id-0"'s).
CLUSTER_ID = "cmlnLWNsdXN0ZXItaWQtMA"


def metadata_request_bytes(version: int, client_id: str, topics: Iterable[str]) -> int:
    """A Metadata request naming `topics` on the wire: size prefix, header, body."""
    return request_wire_size(METADATA, version, client_id,
                             metadata_request_body_size(version, topics))


def metadata_response_bytes(cluster: Cluster, broker_id: int, version: int,
                            topics: Iterable[str]) -> int:
    """Broker `broker_id`'s answer about `topics` on the wire, from its metadata cache now."""
    cache = cluster.brokers[broker_id].metadata_cache
    alive = cache.alive or frozenset(b for b, broker in cluster.brokers.items() if broker.alive)
    racks = {b.id: b.rack for b in cluster.variant.brokers}
    states = cluster.partition_states
    shapes = []
    for name in topics:
        partitions: list[PartitionShape] = []
        for index in range(len(cluster.assignments[name])):
            key = (name, index)
            replicas = cluster.assignment(key)
            isr = cache.isrs.get(key)
            if isr is None:
                isr = states[key].isr
            partitions.append((len(replicas), len(isr), sum(r not in alive for r in replicas)))
        shapes.append((name, partitions))
    body = metadata_response_body_size(
        version, [(broker_host(b), racks.get(b)) for b in sorted(alive)], CLUSTER_ID, shapes)
    return response_wire_size(METADATA, version, body)

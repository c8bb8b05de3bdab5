"""The exact bytes on the wire of the ZooKeeper-era controller's requests to brokers
(LeaderAndIsr, UpdateMetadata, StopReplica), of a broker's ControlledShutdown and its answer,
and of a leader's AlterIsr / AlterPartition and its answer: the size prefix, the request or
response header and the body (rig.protocol.controller_sizes, controlled_shutdown,
alter_partition), at the versions rig.scenario.api_versions gives the sender's release and
inter.broker.protocol.version, sized from the state rig holds (ZooKeeper's partition states and
assignments, the controller's live brokers, the brokers' racks).

rig names no hosts: a broker's endpoint here is host "broker-<id>", port 9092, listener
"PLAINTEXT" (security protocol 0), Kafka's default listener (KafkaConfig's listeners
"PLAINTEXT://:9092"). Every client here is a broker, whose NetworkClient's client id is its
broker id (ControllerChannelManager, KafkaServer.controlledShutdown, the channel to the
controller: config.brokerId.toString), but 0.8.2's controller, whose Scala requests carry
"id_<id>-host_<host>-port_<port>" (KafkaController.clientId; host.name taken as set to the same
"broker-<id>"). Each of the controller's requests has its answer sized here too: the
controller's channel waits for it (rig.cluster.controller_channel).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rig.cluster.endpoints import PORT, broker_host
from rig.cluster.partition import TopicPartition, partitions_by_topic
from rig.protocol import (
    ALTER_PARTITION,
    CONTROLLED_SHUTDOWN,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    request_wire_size,
    response_wire_size,
)
from rig.protocol.alter_partition import (
    alter_partition_request_body_size,
    alter_partition_response_body_size,
)
from rig.protocol.controlled_shutdown import (
    controlled_shutdown_request_body_size,
    controlled_shutdown_response_body_size,
)
from rig.protocol.controller_sizes import (
    leader_and_isr_request_body_size,
    leader_and_isr_response_body_size,
    stop_replica_request_body_size,
    stop_replica_response_body_size,
    update_metadata_request_body_size,
    update_metadata_response_body_size,
)
from rig.scenario import api_versions
from rig.scenario.version_rules import release_key

LISTENER = "PLAINTEXT"


def _controller(controller: Any) -> tuple[str, str]:
    """The controller's (IBP, client id)."""
    variant = controller.cluster.variant
    ibp = variant.broker_config(controller.broker).inter_broker_protocol_version
    b = controller.broker
    old = release_key(variant.kafka) < release_key("0.9")
    return ibp, f"id_{b}-host_{broker_host(b)}-port_{PORT}" if old else str(b)


def leader_and_isr_bytes(controller: Any, batch: Mapping[TopicPartition, Any],
                         assigned: Mapping[TopicPartition, tuple[int, ...]]) -> int:
    """One broker's LeaderAndIsr: each partition's state (`batch`) and replicas (`assigned`),
    the adding / removing replicas of a reassignment in progress (phase A: until the ISR holds
    the target, KafkaController.onPartitionReassignment B2 clears them), and the live leaders
    among the batch's (liveOrShuttingDownBrokers filtered by leaderIds)."""
    ibp, client = _controller(controller)
    version = api_versions.leader_and_isr_version(ibp)
    zk = controller.cluster.zk
    partitions = []
    for key, state in batch.items():
        full = zk.full_assignment(key)
        moving = (full.replicas == assigned[key] and full.being_reassigned
                  and not set(full.target) <= set(state.isr))
        partitions.append((key[0], len(state.isr), len(assigned[key]),
                           len(full.adding) if moving else 0, len(full.removing) if moving else 0))
    leaders = sorted({s.leader for s in batch.values()} & controller.live)
    body = leader_and_isr_request_body_size(version, partitions, [broker_host(b) for b in leaders])
    return request_wire_size(LEADER_AND_ISR, version, client, body)


def update_metadata_bytes(controller: Any, keys: Iterable[TopicPartition]) -> int:
    """UpdateMetadata of `keys` (each with its offline replicas: not live, or shutting down,
    ControllerContext.isReplicaOnline) and every live broker, shutting down or not, with its
    endpoint and rack. The same bytes go to every live broker (only the broker epoch differs)."""
    ibp, client = _controller(controller)
    version = api_versions.update_metadata_version(ibp)
    cluster = controller.cluster
    partitions = cluster.zk.partitions
    online = controller.electable
    shapes = []
    for key in keys:
        replicas = cluster.assignment(key)
        shapes.append((key[0], len(partitions[key].isr), len(replicas),
                       sum(1 for b in replicas if b not in online)))
    brokers = [(broker_host(b), LISTENER, cluster.brokers[b].rack) for b in sorted(controller.live)]
    body = update_metadata_request_body_size(version, shapes, brokers)
    return request_wire_size(UPDATE_METADATA, version, client, body)


def stop_replica_bytes(controller: Any, keys: Iterable[TopicPartition], delete: bool) -> int:
    """StopReplica of `keys`, all with the same delete flag (before v3 one request per flag)."""
    ibp, client = _controller(controller)
    version = api_versions.stop_replica_version(ibp)
    body = stop_replica_request_body_size(version, [(key[0], delete) for key in keys])
    return request_wire_size(STOP_REPLICA, version, client, body)


# -- the brokers' answers (each partition of the request named, with its error) -----------------


def leader_and_isr_response_bytes(controller: Any, keys: Iterable[TopicPartition]) -> int:
    version = api_versions.leader_and_isr_version(_controller(controller)[0])
    body = leader_and_isr_response_body_size(version, partitions_by_topic(keys).items())
    return response_wire_size(LEADER_AND_ISR, version, body)


def update_metadata_response_bytes(controller: Any) -> int:
    version = api_versions.update_metadata_version(_controller(controller)[0])
    return response_wire_size(UPDATE_METADATA, version, update_metadata_response_body_size(version))


def stop_replica_response_bytes(controller: Any, keys: Iterable[TopicPartition],
                                delete: bool) -> int:
    version = api_versions.stop_replica_version(_controller(controller)[0])
    body = stop_replica_response_body_size(version, [(key[0], delete) for key in keys])
    return response_wire_size(STOP_REPLICA, version, body)


# -- a broker's requests to the controller -------------------------------------------------------


# A broker's version: by the variant's release and the broker's own IBP.
def _shutdown_version(variant: Any, broker: Any) -> int:
    return api_versions.controlled_shutdown_version(
        variant.kafka, broker.config.inter_broker_protocol_version)


def _alter_version(variant: Any, broker: Any) -> int:
    return api_versions.alter_partition_version(
        variant.kafka, broker.config.inter_broker_protocol_version)


def controlled_shutdown_bytes(variant: Any, broker: Any) -> int:
    version = _shutdown_version(variant, broker)
    return request_wire_size(CONTROLLED_SHUTDOWN, version, str(broker.id),
                             controlled_shutdown_request_body_size(version))


def controlled_shutdown_response_bytes(variant: Any, broker: Any,
                                       remaining: Iterable[TopicPartition]) -> int:
    """The answer: the partitions the broker still leads (none with an error)."""
    version = _shutdown_version(variant, broker)
    body = controlled_shutdown_response_body_size(version, [key[0] for key in remaining])
    return response_wire_size(CONTROLLED_SHUTDOWN, version, body)


def alter_partition_bytes(variant: Any, broker: Any,
                          proposals: Iterable[tuple[TopicPartition, int]]) -> int:
    """AlterIsr / AlterPartition proposing, per partition, an ISR of that many members."""
    version = _alter_version(variant, broker)
    body = alter_partition_request_body_size(version, [(k[0], n) for k, n in proposals])
    return request_wire_size(ALTER_PARTITION, version, str(broker.id), body)


def alter_partition_response_bytes(variant: Any, broker: Any,
                                   answers: Iterable[tuple[TopicPartition, int]]) -> int:
    """The answer, per partition the ISR's length (0 for a partition answered with an error);
    no partitions for a top-level error."""
    version = _alter_version(variant, broker)
    body = alter_partition_response_body_size(version, [(k[0], n) for k, n in answers])
    return response_wire_size(ALTER_PARTITION, version, body)

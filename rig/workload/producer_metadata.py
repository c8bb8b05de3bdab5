"""What a producer knows of its topic's partitions (Kafka's ProducerMetadata): each partition's
leader and leader epoch, and the brokers the last metadata answer listed. A metadata answer
replaces them, except (2.3+) a partition it names at an older leader epoch than the producer
has seen (rig.workload.metadata_epochs); from 3.7 a refused produce's current leader updates
one partition (KIP-951)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from rig.cluster.metadata_response import metadata_response_bytes
from rig.cluster.partition import TopicPartition
from rig.workload.metadata_epochs import StaleAnswers

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster


class ProducerMetadata:
    def __init__(self, cluster: Cluster, topic: str):
        states = cluster.partition_states
        self.leaders = {key: state.leader for key, state in states.items() if key[0] == topic}
        self.epochs = {key: states[key].leader_epoch for key in self.leaders}
        self.nodes = set(cluster.brokers)
        self._stale = StaleAnswers(cluster.variant.kafka)
        self._by_node: dict[int, list[TopicPartition]] = {}  # (kept until a leader moves)

    def partitions_for_node(self, leader: int) -> list[TopicPartition]:
        """Cluster.partitionsForNode: the partitions `leader` leads, in partition order."""
        parts = self._by_node.get(leader)
        if parts is None:
            parts = self._by_node[leader] = [k for k, led in self.leaders.items() if led == leader]
        return parts

    def update(self, leaders: Mapping[TopicPartition, int], epochs: Mapping[TopicPartition, int],
               alive: frozenset[int]) -> bool:
        """A metadata answer: its leaders and epochs, its brokers. True if an epoch grew."""
        newer = False
        for key in self.leaders:
            if key in leaders:
                epoch = epochs.get(key, -1)
                if self._stale.ignores(epoch, self.epochs.get(key, -1)):
                    continue
                if leaders[key] != self.leaders[key]:
                    self.leaders[key] = leaders[key]
                    self._by_node.clear()
                newer = newer or epoch > self.epochs.get(key, -1)
                self.epochs[key] = epoch
        if alive:
            self.nodes = set(alive)
        return newer

    def update_partition_leadership(self, leaders: Mapping[TopicPartition, tuple[int, int]],
                                    nodes: Iterable[int]) -> None:
        """Metadata.updatePartitionLeadership (KIP-951): take each partition's newer leader,
        if its epoch passes the one known and its broker is among the known nodes or `nodes`."""
        self.nodes.update(nodes)
        for key, (leader, epoch) in leaders.items():
            if key in self.leaders and epoch > self.epochs.get(key, -1) and leader in self.nodes:
                self.leaders[key] = leader
                self._by_node.clear()
                self.epochs[key] = epoch


Answered = Callable[[dict[TopicPartition, int], dict[TopicPartition, int], frozenset[int]], None]


def ask_for_metadata(cluster: Cluster, node: str, source: int, version: int, request_bytes: int,
                     topic: str, keys: Iterable[TopicPartition], answered: Answered) -> None:
    """A Metadata request from `node` to broker `source` about `topic` and its answer, at their
    bytes on the wire: `answered` gets the leaders and leader epochs of `keys` (the topic's
    partitions), and the live brokers, of the broker's metadata cache as it answered."""

    def at_source() -> None:
        cache = cluster.brokers[source].metadata_cache
        leaders = {key: cache.leaders[key] for key in keys if key in cache.leaders}
        epochs = {key: cache.epochs[key] for key in keys if key in cache.epochs}
        alive = cache.alive
        size = metadata_response_bytes(cluster, source, version, (topic,))
        cluster.send(source, node, size, lambda: answered(leaders, epochs, alive))

    cluster.send(node, source, request_bytes, at_source)

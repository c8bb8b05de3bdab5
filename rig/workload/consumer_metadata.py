"""What a consumer member knows of its partitions' leaders (Kafka's ConsumerMetadata, the same
Metadata class as the producer's) and when it asks again: its requests timed by a
MetadataUpdater, as the producer's are (rig.workload.metadata_updater).

The member reads the cached leaders wherever Kafka's consumer does without a request: a seek to
a committed offset fetches again from the leader the metadata names (SubscriptionState
.seekUnvalidated, then validatePositionsIfNeeded with Metadata.currentLeader). It asks for an
update (Metadata.requestUpdate) when what it knows fails it: a fetch refused as NOT_LEADER or
at a fenced leader epoch (Fetcher.initializeCompletedFetch; an unknown epoch is only logged),
a broken connection (NetworkClient.processDisconnection), a failed offsets request, a partition
whose leader the last answer did not know (Fetcher.prepareFetchRequests asks at every poll, in
every release). The request goes to the lowest-numbered live broker (rig's leastLoadedNode).
Each answer moves every partition whose leader or (2.3+) leader epoch it changed
(ConsumerMember._follow). A partition an answer names at an older leader epoch than the member
has seen stays as the member knew it (2.3+: rig.workload.metadata_epochs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rig.backoff import ExponentialBackoff
from rig.cluster.metadata_response import metadata_request_bytes, metadata_response_bytes
from rig.cluster.partition import TopicPartition
from rig.scenario.api_versions import metadata_version
from rig.scenario.model import ConsumerSpec
from rig.scenario.profiles import profile
from rig.workload.metadata_epochs import StaleAnswers
from rig.workload.metadata_updater import MetadataUpdater

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster

Leaders = Mapping[TopicPartition, tuple[int, int]]  # partition → (leader, leader epoch)


class ConsumerMetadata:
    """One member's view of its partitions' leaders and its metadata requests. `answered` is
    told each answer's leaders and returns whether the member still needs an update (a
    partition it must fetch has no leader)."""

    def __init__(self, cluster: Cluster, spec: ConsumerSpec, client_id: str,
                 partitions: list[TopicPartition], answered: Callable[[Leaders], bool]):
        self.cluster = cluster
        self.node = client_id
        self.partitions = partitions
        self._answered = answered
        # As the last answer (or the start) named them: Metadata.currentLeader
        self.leaders: dict[TopicPartition, int] = {}
        self.epochs: dict[TopicPartition, int] = {}
        # Metadata on the wire (rig.cluster.metadata_response): the release's newest version,
        # naming the subscribed topic.
        self._version = metadata_version(cluster.variant.kafka)
        self._request = metadata_request_bytes(self._version, client_id, (spec.topic,))
        self._topic = spec.topic
        release = profile(cluster.variant.kafka)
        self._stale = StaleAnswers(cluster.variant.kafka)
        self.updater = MetadataUpdater(
            cluster.sim, ExponentialBackoff(spec.retry_backoff_ms, release.retry_backoff_max_ms,
                                            cluster.streams.get(f"workload/consumer/{client_id}"
                                                                "/metadata-backoff")),
            spec.request_timeout_ms, release.metadata_disconnect_fails_update, self._ask)

    def learn(self, key: TopicPartition, leader: int, epoch: int) -> None:
        """What the cluster named `key`'s leader at the member's start, or a refusal's current
        leader (KIP-951: Metadata.updatePartitionLeadership)."""
        self.leaders[key] = leader
        self.epochs[key] = epoch

    def request_update(self) -> None:
        self.updater.request_update()

    def connection_reset(self, broker: int) -> None:
        """The connection to `broker` broke: an update is asked for (and, 2.5+, a request open
        to it failed)."""
        self.updater.connection_reset(broker)

    def _ask(self, request: object) -> int | None:
        cluster = self.cluster
        live = cluster.live_brokers()
        if not live:
            return None
        source = live[0]

        def at_source() -> None:
            cache = cluster.brokers[source].metadata_cache
            leaders = {key: (cache.leaders.get(key, -1), cache.epochs.get(key, -1))
                       for key in self.partitions}
            size = metadata_response_bytes(cluster, source, self._version, (self._topic,))
            cluster.send(source, self.node, size, lambda: self._answer(request, leaders))

        cluster.send(self.node, source, self._request, at_source)
        return source

    def _answer(self, request: object, leaders: Leaders) -> None:
        if not self.updater.is_open(request):
            return  # it failed meanwhile (a broken connection, request.timeout.ms)
        # KIP-580 (3.7+): progress is a leader epoch newer than the one known.
        progress = any(epoch > self.epochs.get(key, -1) for key, (_, epoch) in leaders.items())
        taken: dict[TopicPartition, tuple[int, int]] = {}
        for key, (leader, epoch) in leaders.items():
            if self._stale.ignores(epoch, self.epochs.get(key, -1)):
                taken[key] = (self.leaders[key], self.epochs[key])
                continue
            self.leaders[key] = leader
            self.epochs[key] = epoch
            taken[key] = (leader, epoch)
        # The request is closed before the member acts on the answer: what it asks for then
        # is a new request, not this one's.
        self.updater.answered(progress, False)
        if self._answered(taken):
            self.updater.request_update()


__all__ = ["ConsumerMetadata", "Leaders"]

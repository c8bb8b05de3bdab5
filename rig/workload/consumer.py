"""A consumer group's members (rig.workload.consumer_group holds the group) and their fetches
from partition leaders.

A member keeps one fetch in flight per broker it reads from (Kafka's consumer fetches from every
node at once), reads only below the high watermark, uses fetch sessions like a follower (but its
sessions are not privileged), and follows leadership changes through metadata refreshes: a
partition a broker refuses is fetched there again, refused at every round trip, until a metadata
answer moves it (ConsumerMember._follow; 3.7+: or the refusal names its leader). With a
client.rack and Fetch v11+, a leader may name a preferred read replica (KIP-392): the member
then reads that partition there, in its own fetch session with that broker, until
metadata.max.age.ms passes or the replica answers with an error (Kafka's
SubscriptionState.updatePreferredReadReplica / clearPreferredReadReplica).
The assignment is fixed at start; with `commit: auto | poll` a member commits its positions to
the group coordinator and resumes from the committed offsets after a coordinator failover
(rig.workload.offsets). A fetch offset out of range is reset by auto.offset.reset, and from 2.3
a position is validated against a new leader's log (rig.workload.offset_fetcher).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from rig.cluster.connection_states import ConnectionStates
from rig.cluster.partition import FetchState, TopicPartition
from rig.engine import Timer
from rig.scenario.model import ConsumerSpec
from rig.scenario.profiles import profile
from rig.workload.consumer_fetcher import ConsumerFetcher
from rig.workload.consumer_metadata import ConsumerMetadata, Leaders
from rig.workload.offset_fetcher import OffsetFetcher
from rig.workload.offsets import Committer

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster

__all__ = ["ConsumerFetcher", "ConsumerMember", "ReadReplica"]


class ReadReplica(NamedTuple):
    """Where a partition is read instead of its leader, who said so, and when that lapses."""

    broker: int
    leader: int
    expiry: Timer


class ConsumerMember:
    def __init__(self, cluster: Cluster, spec: ConsumerSpec, index: int,
                 partitions: list[int]):
        self.cluster = cluster
        self.spec = spec
        self.client_id = spec.member_node(index)
        self.node = self.client_id
        self.rack = spec.rack_of(index)
        self.read_from: dict[TopicPartition, ReadReplica] = {}  # KIP-392
        cluster.place_client(self.node, "consumer", self.rack)
        self.version = spec.fetch_version or cluster.config.fetch_version
        release = profile(cluster.variant.kafka)
        self.leader_discovery = release.client_leader_discovery
        # 2.3+ (KAFKA-7747): a fetch carries the leader epoch the metadata names; a 2.1 or 2.2
        # consumer's Fetch v10 carries none (-1), so no leader refuses it for its epoch.
        self.sends_leader_epoch = release.consumer_leader_epoch
        self.assigned = [(spec.topic, p) for p in partitions]
        self.positions: dict[TopicPartition, int] = {}
        # The leader epoch of the batch each position was read from (None: not known), and the
        # leader epoch metadata named when the position was last validated (KIP-320).
        self.position_epochs: dict[TopicPartition, int | None] = {}
        self.leader_epochs: dict[TopicPartition, int] = {}
        self.fetchers: dict[int, ConsumerFetcher] = {}
        self.connections = ConnectionStates.of(cluster, self.node, self.client_id)  # its fetchers'
        self.consumed = 0
        self.metadata = ConsumerMetadata(cluster, spec, self.client_id, self.assigned,
                                         self._answered)
        self.committer = Committer(self) if spec.commit != "none" else None
        self.offsets = OffsetFetcher(self)

    def start(self) -> None:
        cluster = self.cluster
        for key in self.assigned:
            state = cluster.partition_states[key]
            leader = cluster.brokers.get(state.leader)
            start = 0
            if self.spec.start == "latest" and leader is not None:
                start = leader.replicas[key].high_watermark
            self.positions[key] = start
            self.leader_epochs[key] = state.leader_epoch
            self.metadata.learn(key, state.leader, state.leader_epoch)
            self.fetch_from(state.leader, key)
        if self.committer is not None:
            self.committer.start()

    def fetch_from(self, leader: int, key: TopicPartition) -> None:
        if leader < 0:
            return
        fetcher = self.fetchers.get(leader)
        if fetcher is None:
            fetcher = self.fetchers[leader] = ConsumerFetcher(self, leader)
        fetcher.fetch(key, self._fetch_state(key))
        fetcher.wake()

    def _fetch_state(self, key: TopicPartition) -> FetchState:
        """What a fetch of `key` sends: its position and (Fetch v9+, 2.3+ consumers: KIP-320)
        the leader epoch its metadata names, else -1."""
        epoch = self.leader_epochs.get(key, -1) if self.sends_leader_epoch else -1
        return FetchState(self.positions[key], current_leader_epoch=epoch)

    def prefer(self, key: TopicPartition, leader: int, broker: int) -> None:
        """The leader named `broker` the preferred read replica of `key`: read it there until
        metadata.max.age.ms passes (Kafka's updatePreferredReadReplica)."""
        self._forget_replica(key)
        self.fetchers[leader].remove_partition(key)
        expiry = self.cluster.sim.after(self.spec.metadata_max_age_ms * 1000,
                                        lambda: self._lapse(key, broker))
        self.read_from[key] = ReadReplica(broker, leader, expiry)
        self.fetch_from(broker, key)

    def _lapse(self, key: TopicPartition, broker: int) -> None:
        entry = self.read_from.get(key)
        if entry is not None and entry.broker == broker:
            self.back_to_leader(key)

    def back_to_leader(self, key: TopicPartition) -> None:
        """Stop reading `key` from its preferred read replica and fetch it from the leader
        that named it (which may name a replica again)."""
        entry = self._forget_replica(key)
        if entry is None:
            return
        for fetcher in self.fetchers.values():
            fetcher.remove_partition(key)
        self.fetch_from(entry.leader, key)

    def _forget_replica(self, key: TopicPartition) -> ReadReplica | None:
        entry = self.read_from.pop(key, None)
        if entry is not None:
            entry.expiry.cancel()
        return entry

    def take_leader(self, key: TopicPartition, leader: int, epoch: int,
                    alive: tuple[int, ...]) -> bool:
        """KIP-951 (3.7+ consumers; Fetch v16+ answers): a refusal named `leader` at `epoch`.
        If that epoch is newer than the metadata's and the broker answered with its endpoint
        (rig's member keeps no node list of its own), the partition goes there now
        (Metadata.updatePartitionLeadership), its position validated against it first
        (SubscriptionState.maybeValidatePositionForCurrentLeader, in
        AbstractFetch.handleFetchSuccess). A position awaiting validation has no valid
        position when the refusal is collected: FetchCollector.initialize ignores it, and no
        metadata is asked for. Only a position fetched on without validation (its epoch
        unknown) has the refusal handled, which asks for metadata (handleInitializeErrors →
        requestMetadataUpdate). False if the refusal is kept."""
        if (not self.leader_discovery or epoch <= self.leader_epochs.get(key, -1)
                or leader not in alive):
            return False
        self._drop(key)
        self.leader_epochs[key] = epoch
        self.metadata.learn(key, leader, epoch)
        if not self.offsets.validate(key, leader, epoch):
            self.fetch_from(leader, key)
            self.metadata.request_update()
        return True

    def relocate(self, key: TopicPartition) -> None:
        """Its connection failed, or a request about its position did: drop it here until the
        metadata names its leader (Metadata.requestUpdate; the request goes when the updater
        allows). A preferred read replica is forgotten too."""
        self._drop(key)
        self.metadata.request_update()

    def seek(self, key: TopicPartition) -> None:
        """Its position was set (a seek to a committed offset): fetch it again from the leader
        the metadata names, validating the position first if its epoch is unknown; no request
        (Kafka's consumer reads its metadata's currentLeader), unless the leader is unknown."""
        self._drop(key)
        self.place(key)

    def place(self, key: TopicPartition) -> None:
        """Fetch `key` (fetched nowhere) from the leader the metadata names, or ask who leads
        it; nothing while a reset or validation of it is under way or backing off."""
        if key not in self.offsets.awaiting:
            leader = self.metadata.leaders.get(key, -1)
            if leader < 0:
                self.metadata.request_update()
            else:
                self._place(key, leader, self.metadata.epochs.get(key, -1))

    def _drop(self, key: TopicPartition) -> None:
        self._forget_replica(key)
        for fetcher in self.fetchers.values():
            fetcher.remove_partition(key)

    def _answered(self, leaders: Leaders) -> bool:
        """A metadata answer: each partition goes where it names (`_follow`). Whether another
        update is needed (a partition to fetch has no leader)."""
        awaiting = self.offsets.awaiting
        needed = False
        for key in self.assigned:
            if key not in awaiting and self._follow(key, *leaders[key]):
                needed = True
        return needed

    def _follow(self, key: TopicPartition, leader: int, epoch: int) -> bool:
        """Metadata names `leader` at `epoch` for `key`. A partition fetched nowhere goes there;
        one fetched under another leader moves there, and (2.3+) one fetched at another leader
        epoch is validated again: Kafka's consumer compares every position's current leader
        and epoch with its metadata's after each update (validatePositionsOnMetadataChange →
        SubscriptionState.maybeValidatePositionForCurrentLeader; 2.1–2.2:
        Fetcher.prepareFetchRequests reads the metadata's leader at every fetch). That is also
        how a partition refused NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH leaves the broker
        that refused it. True if it has no leader to go to."""
        under = self._fetched_under(key)
        if under == leader:
            if epoch == self.leader_epochs.get(key):
                return False
            if key not in self.read_from and not self.offsets.validates_position(key):
                # Another epoch at the same leader, nothing to validate: the position fetches
                # on there (SubscriptionState.validatePosition's FETCHING branch), at that
                # epoch from 2.3, which alters the partition in the fetch session
                # (FetchSessionHandler: its PartitionData changed). A preferred read replica
                # is forgotten on any change (maybeValidatePosition): that goes below.
                self.leader_epochs[key] = epoch
                if self.sends_leader_epoch:
                    self.fetchers[leader].fetch(key, self._fetch_state(key))
                return False
        if under is not None:
            self._drop(key)
        if leader < 0:
            return True
        self._place(key, leader, epoch)
        return False

    def _fetched_under(self, key: TopicPartition) -> int | None:
        """The leader whose metadata `key` is fetched under (from it, or from the read replica
        it named), None if it is fetched nowhere."""
        replica = self.read_from.get(key)
        if replica is not None:
            return replica.leader
        for broker, fetcher in self.fetchers.items():
            if key in fetcher.partitions:
                return broker
        return None

    def _place(self, key: TopicPartition, leader: int, epoch: int) -> None:
        """Fetch `key` from `leader`: a reset goes first (AWAIT_RESET: no validation, no
        fetch), then a position whose leader epoch changed is validated (KIP-320)."""
        changed = epoch != self.leader_epochs.get(key)
        self.leader_epochs[key] = epoch
        if key in self.offsets.resetting:
            self.offsets.reset(key, leader, self.offsets.resetting[key])
        elif not (changed and self.offsets.validate(key, leader, epoch)):
            self.fetch_from(leader, key)

    def lag(self) -> int:
        """Records between this member's positions and each partition's high watermark."""
        total = 0
        for key in self.assigned:
            state = self.cluster.partition_states[key]
            leader = self.cluster.brokers.get(state.leader)
            if leader is not None and leader.alive:
                total += max(0, leader.replicas[key].high_watermark - self.positions.get(key, 0))
        return total

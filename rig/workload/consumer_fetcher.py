"""A consumer member's fetch client for one broker (Kafka's Fetcher, one node's share of it):
what a fetch response means for the member — records read, a refused partition (its metadata
asked for; the partition stays until metadata moves it), an offset out of range (reset), a
preferred read replica (KIP-392). The member (rig.workload.consumer) holds the positions and
decides where each partition is fetched."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from rig.cluster.connection_states import ConnectionStates
from rig.cluster.fetch_client import FetchClient
from rig.cluster.messages import FetchResponseMsg
from rig.cluster.partition import TopicPartition
from rig.events import names
from rig.protocol.errors import FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
from rig.workload.member import MemberState


class Member(MemberState, Protocol):
    """What a fetcher uses of its consumer member (rig.workload.consumer.ConsumerMember)."""

    rack: str | None
    consumed: int
    read_from: dict[TopicPartition, Any]  # partition → its ReadReplica (KIP-392)
    metadata: Any  # rig.workload.consumer_metadata.ConsumerMetadata
    connections: ConnectionStates  # its NetworkClient's, which its fetchers share
    offsets: Any  # rig.workload.offset_fetcher.OffsetFetcher
    committer: Any  # rig.workload.offsets.Committer, or None

    def relocate(self, key: TopicPartition) -> None: ...

    def back_to_leader(self, key: TopicPartition) -> None: ...

    def take_leader(self, key: TopicPartition, leader: int, epoch: int,
                    alive: tuple[int, ...]) -> bool: ...

    def prefer(self, key: TopicPartition, leader: int, broker: int) -> None: ...


class ConsumerFetcher(FetchClient):
    role: ClassVar[str] = "consumer"
    privileged: ClassVar[bool] = False

    def __init__(self, member: Member, leader_id: int):
        spec = member.spec
        super().__init__(member.cluster, member.node, leader_id, member.client_id,
                         member.version, member.cluster.strategies.fetch_session.new_client(),
                         spec.fetch_max_wait_ms, spec.fetch_min_bytes, spec.request_timeout_ms,
                         spec.retry_backoff_ms, slot_key=(member.client_id, 0),
                         connections=member.connections)
        self.member = member
        self.max_bytes = spec.fetch_max_bytes
        self.partition_max_bytes = spec.max_partition_fetch_bytes
        self.rack_id = member.rack or ""

    def may_coast(self) -> bool:
        # An empty response changes nothing here (commits and lag samples run on their own
        # timers), so idle rounds repeat until something wakes them. Reads from a follower
        # (KIP-392) are simulated round by round.
        read_from = self.member.read_from
        return not self.stopped and not any(key in read_from for key in self.partitions)

    def _disconnected(self) -> None:
        # Kafka's consumer marks the node unavailable and asks for metadata (its
        # NetworkClient.processDisconnection): the partitions move to whoever leads them then.
        self.member.metadata.connection_reset(self.leader_id)
        for key in list(self.partitions):
            self.member.relocate(key)

    def _not_connected(self, sent: int) -> None:
        # request.timeout.ms with the connection to a powered-off machine still being made:
        # the request fails unsent (ConsumerNetworkClient.failExpiredRequests), its session
        # starts over (FetchSessionHandler.handleError) and the next poll asks the same broker
        # over the same attempt. Only the attempt's end is a disconnect (metadata asked).
        if self._drop(sent):
            self.wake()

    def _apply(self, response: FetchResponseMsg) -> None:
        member = self.member
        for key, (batches, _size) in response.records.items():
            state = self.partitions.get(key)
            if state is None or not batches:
                continue
            consumed = [b for b in batches if b.end_offset > state.fetch_offset]
            if consumed:
                member.consumed += sum(b.records for b in consumed)
                member.cluster.log.emit(
                    names.CONSUMER_READ, group=member.spec.group, client=member.client_id,
                    topic=key[0], partition=key[1], broker=self.leader_id,
                    batches=[[b.base_offset, b.end_offset, b.producer, b.sequence]
                             for b in consumed])
                state.fetch_offset = consumed[-1].end_offset
                member.positions[key] = state.fetch_offset
                member.position_epochs[key] = consumed[-1].epoch
                self.dirty[key] = None
        for key, error in response.errors.items():
            if key not in self.partitions:
                continue
            if key in member.read_from:
                # An error from the preferred read replica (it is no longer a replica, or it
                # lacks the offset): back to the leader (Kafka's clearPreferredReadReplica).
                member.back_to_leader(key)
            elif key in response.current_leaders.leaders and member.take_leader(
                    key, *response.current_leaders.leaders[key], response.current_leaders.nodes):
                continue
            elif error in (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH):
                # (FENCED: 2.3+, KIP-320; the broker has a newer leader epoch than the
                # consumer's metadata.) The partition stays here until metadata moves it.
                member.metadata.request_update()
            elif error == OFFSET_OUT_OF_RANGE:
                self.remove_partition(key)
                member.offsets.reset(key, self.leader_id)
            # UNKNOWN_LEADER_EPOCH (the consumer's metadata is ahead of this broker): Kafka's
            # consumer only logs it and fetches again, until the broker learns the epoch.
        for key, broker in response.preferred.items():
            if key in self.partitions:
                member.prefer(key, self.leader_id, broker)
        if member.committer is not None and response.records:
            member.committer.polled()

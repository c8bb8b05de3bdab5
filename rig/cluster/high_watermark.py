"""The high watermarks of a broker's replicas and who hears of a change: the leader's HW advance
(Partition.maybeIncrementLeaderHW), a follower's HW from its leader's, the HW checkpoint, and
the fetch clients told of what changed (Partition.tryCompleteDelayedRequests; docs/kafka.md §9).

A leader keeps, for each fetch client (keyed by its slot), the partitions where that client is
behind ("pending") and those whose HW it has not yet seen, so an idle fetch of 500 partitions
costs nothing per partition. Waiting operations (parked fetches, acks=all produces) are
completed only through the broker's purgatories, and the fetch purgatory hears of a change to a
client's slot twice: just before it (`announced` is None: only an operation that must see the
state as it was acts, such as a fetch client's idle rounds held in closed form,
rig.cluster.coast) and just after it (`announced` says what came: a parked fetch may answer).
ReplicaManager (rig.cluster.replica_manager) builds on this with leadership and appends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.messages import FetchRequestMsg
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import AbortableOperation, DelayedOperation, Purgatory
from rig.cluster.read_replica import answers
from rig.cluster.replica import Replica
from rig.events import names
from rig.strategies.fetch_session import SessionCache

Slot = tuple[Any, int]  # a fetch client's key: (follower broker, fetcher slot) or (client, 0)


class HighWatermarks:
    """The HWs of one broker's replicas, and the fetch clients and waiting operations that hear
    of them."""

    def __init__(self, broker: Process, ctx: NodeContext, *,
                 fetch_purgatory: Purgatory[Slot, Any],
                 produce_purgatory: Purgatory[TopicPartition, Any],
                 cache: SessionCache, replicas: dict[TopicPartition, Replica]):
        self.broker = broker
        self.ctx = ctx
        self.config = broker.config
        self.fetch_purgatory: Purgatory[Slot, DelayedOperation] = fetch_purgatory
        self.produce_purgatory: Purgatory[TopicPartition, AbortableOperation] = produce_purgatory
        self.cache = cache
        self.replicas = replicas  # the broker's: every part reads the same map
        self._emit_hw = ctx.emitter(names.HW_ADVANCE, "topic", "partition", "hw", "leader",
                                    broker=broker.id)
        self.pending: dict[Slot, dict[TopicPartition, None]] = {}
        self.hw_unseen: dict[Slot, dict[TopicPartition, None]] = {}
        self.hw_dirty: dict[TopicPartition, None] = {}  # HW changed since the last checkpoint
        self.hw_behind: dict[TopicPartition, None] = {}  # led here, HW below the LEO
        # Consumers (keyed by their fetch client): last known positions, and who watches what.
        self.consumer_positions: dict[Any, dict[TopicPartition, int]] = {}
        self.consumer_watchers: dict[TopicPartition, dict[Any, None]] = {}
        # Per client slot, the partitions it fetched here that this broker stopped leading:
        # answered NOT_LEADER_OR_FOLLOWER while its fetches still carry them (`stopped_leading`).
        self.unled: dict[Slot, dict[TopicPartition, None]] = {}
        # What the change announced to the fetch purgatory brought: an append's bytes, 0 for a
        self.announced: int | None = None  # HW advance; None before a change
        self.hw_eligible: Callable[[int, int], bool] | None = None  # KRaft 3.6+ (candidate_hw)

    def checkpoint_hw(self) -> None:
        """The HW checkpoint task: only the HWs that changed since it last ran."""
        for key in self.hw_dirty:
            replica = self.replicas[key]
            replica.checkpointed_hw = replica.high_watermark
        self.hw_dirty.clear()

    # -- telling the fetch purgatory -----------------------------------------------------------
    def _follower_slots(self, replica: Replica) -> Iterable[Slot]:
        me = self.broker.id  # (nothing waits on its own slot: a broker never fetches from itself)
        return ((f, replica.fetcher_slot) for f in replica.assignment if f != me)

    def _before_change(self, slots: Iterable[Slot]) -> None:
        """What these clients fetch is about to change: whatever waits on their slots and must
        see the state as it was acts now."""
        check = self.fetch_purgatory.check_and_complete
        for slot in slots:
            check(slot)

    def stopped_leading(self, replica: Replica) -> None:
        """This broker no longer leads `replica`: every client that fetched it here (its
        followers, the consumers) is answered NOT_LEADER_OR_FOLLOWER for it while its fetches
        still carry it, listed or not. Kafka reads every partition of a fetch session, a
        partition it does not lead is an error, and an incremental response always lists an
        error (IncrementalFetchContext: CachedPartition.maybeUpdateResponseData), so a client
        whose next fetch does not list the partition still hears of it (rig.cluster.fetch_server
        answers it: `unled_carried`). A coast there ends first: its skipped rounds would not be
        idle now."""
        key = replica.key
        slots = self.fetch_slots(replica)
        self._before_change(slots)
        for slot in slots:
            self.unled.setdefault(slot, {})[key] = None

    def fetch_slots(self, replica: Replica) -> tuple[Slot, ...]:
        """The slots of the clients that may fetch `replica` here: its followers', then those
        of the consumers that fetched it here (in the order they first did)."""
        return (*self._follower_slots(replica), *self.consumer_watchers.get(replica.key, ()))

    def unled_carried(self, slot: Slot, request: FetchRequestMsg) -> list[TopicPartition]:
        """The partitions this broker stopped leading that `slot`'s fetch still carries and
        that it does not answer for; the others are forgotten (the client dropped them, or
        this broker answers for them again). Nothing to do on the busy path: no entry."""
        unled = self.unled.get(slot)
        if unled is None:
            return []
        carried = [key for key in unled
                   if key in request.partitions and not answers(request, self.replicas.get(key))]
        if len(carried) < len(unled):
            if carried:
                self.unled[slot] = dict.fromkeys(carried)
            else:
                del self.unled[slot]
        return carried

    def _announce(self, slot: Slot, appended_bytes: int) -> None:
        """What a client fetches changed (an append of `appended_bytes`, or 0 for a HW
        advance): its parked fetch may answer."""
        before, self.announced = self.announced, appended_bytes
        self.fetch_purgatory.check_and_complete(slot)
        self.announced = before

    def follower_hw_behind(self, follower: int) -> bool:
        """Whether a partition led here with its HW below its log end has `follower` among its
        replicas (its every fetch then looks at that partition's HW)."""
        return any(follower in self.replicas[key].assignment for key in self.hw_behind)

    # -- high watermark ------------------------------------------------------------------------
    def maybe_advance_hw(self, replica: Replica, followers_told: bool = False) -> None:
        """`followers_told`: an append or a leadership told the followers' slots of its change
        in this call; what waits there did not act, and no message arrives within a call."""
        broker = self.broker
        config = self.config
        holds = config.hw_holds_below_min_isr  # min ISR matters to the HW only then (3.7+)
        min_isr = self.ctx.topics.leader_min_isr(replica.key, len(replica.assignment),
                                                 config) if holds else 0
        new_hw = replica.candidate_hw(broker.now_ms, config.replica_lag_time_max_ms, min_isr,
                                      holds, self.hw_eligible)
        if new_hw < replica.leo:
            if replica.key not in self.hw_behind and not followers_told:
                self._before_change(self._follower_slots(replica))
            self.hw_behind[replica.key] = None
        else:
            self.hw_behind.pop(replica.key, None)
        if new_hw <= replica.high_watermark:
            return
        if not followers_told:
            self._before_change(self._follower_slots(replica))
        self._before_change(self.consumer_watchers.get(replica.key, ()))
        replica.high_watermark = new_hw
        self.hw_dirty[replica.key] = None
        self._emit_hw(replica.key[0], replica.key[1], new_hw, True)
        for follower in replica.assignment:
            if follower != broker.id:
                self.hw_unseen.setdefault((follower, replica.fetcher_slot), {})[replica.key] = None
        self.cache.mark_changed(replica.key)
        self.produce_purgatory.check_and_complete(replica.key)
        self._consumers_see(replica, new_hw)

    def _consumers_see(self, replica: Replica, new_hw: int) -> None:
        """New data is visible to consumers now: their long polls wake on a HW advance."""
        for slot in self.consumer_watchers.get(replica.key, ()):
            position = self.consumer_positions.get(slot, {}).get(replica.key, -1)
            if 0 <= position < new_hw:
                self.pending.setdefault(slot, {})[replica.key] = None
                self._announce(slot, 0)

    def follower_hw(self, replica: Replica, leader_hw: int) -> None:
        """A follower learned the leader's HW: its own is min(that, its LEO); readers wake."""
        new_hw = min(leader_hw, replica.leo)
        self.hw_dirty[replica.key] = None
        if new_hw <= replica.high_watermark:  # most responses: nothing new to tell
            replica.high_watermark = new_hw
            return
        watched = self.consumer_watchers.get(replica.key)
        if watched:
            self._before_change(watched)
        replica.high_watermark = new_hw
        self._emit_hw(replica.key[0], replica.key[1], new_hw, False)
        if watched:
            self.cache.mark_changed(replica.key)
            self._consumers_see(replica, new_hw)

"""What a leader records of each fetch client's progress when its fetch arrives: the follower's
fetch offsets (read before they are recorded, so a response carries the HW from before the
fetch), ISR expansion, HW advance, and a consumer's positions (Kafka's
Partition.updateFollowerFetchState; docs/kafka.md §8, §10)."""

from __future__ import annotations

from typing import Any

from rig.cluster.messages import FetchRequestMsg
from rig.cluster.read_replica import serves_consumer
from rig.cluster.replica import Replica, Role
from rig.cluster.replica_manager import ReplicaManager, Slot
from rig.strategies.isr.base import record_failed_read


def fetch_offset(rm: ReplicaManager, request: FetchRequestMsg, replica: Replica,
                 follower: Any) -> int:
    state = request.updates.get(replica.key)
    if state is not None:
        return state.fetch_offset
    if request.fetcher.role == "consumer":
        return rm.consumer_positions.get(request.fetcher.slot_key, {}).get(replica.key, -1)
    return replica.follower(follower).log_end_offset

def update_fetch_state(rm: ReplicaManager, slot: Slot, request: FetchRequestMsg) -> None:
    """Record the follower's fetch offsets (after reading), expand the ISR, advance HWs
    (Kafka's updateFollowerFetchState)."""
    if request.fetcher.role == "consumer":
        _update_consumer(rm, slot, request)
        return
    broker = rm.broker
    follower = slot[0]
    now = broker.now_ms
    rm.last_fetch_ms[slot] = now
    isr_strategy = rm.ctx.strategies.isr
    touched = dict.fromkeys(request.updates)
    touched.update(rm.pending.get(slot, {}))
    # Before 2.4 Kafka recomputes the HW of every partition in a follower's fetch; a HW can
    # move with nothing new from this follower (a lagging replica aged out of the lag time), so
    # the partitions whose HW is below their LEO are looked at on every fetch of a follower,
    # for the partitions this fetcher (of the follower's num.replica.fetchers) fetches. From
    # 2.4 only a partition whose fetch moved this follower's LEO recomputes it (KAFKA-8841).
    for key in rm.hw_behind:
        if key not in touched:
            behind = rm.replicas[key]
            if behind.fetcher_slot == slot[1] and follower in behind.assignment:
                touched[key] = None
    # ISR expansion is checked on every follower fetch, whether or not the partition changed
    # (Partition.updateFollowerFetchState → maybeExpandIsr): one skipped because another ISR
    # change was in flight is tried again on the next fetch (docs/kafka.md §11).
    for key in rm.outside_isr.get(follower, ()):
        if key not in touched and rm.replicas[key].fetcher_slot == slot[1]:
            touched[key] = None
    pending = rm.pending.get(slot)
    diverging = request.diverging or {}
    fenced = request.fenced or {}
    failed_read = rm.config.failed_read_resets_follower
    on_leo_change = rm.config.hw_on_follower_leo_change
    for key in touched:
        replica = rm.replicas.get(key)
        if replica is None or replica.role is not Role.LEADER or key in diverging:
            continue  # not progress: a diverging epoch (rig.cluster.diverging_epoch)
        offset = fetch_offset(rm, request, replica, follower)
        if key in fenced or (offset >= 0 and (offset > replica.leo
                                              or offset < replica.log.log_start_offset)):
            # Answered with an error, a fenced epoch (rig.cluster.fetch_epochs) or an offset out
            # of range: not progress. Before 2.4 the leader recorded the failed read as a fetch
            # at an unknown offset (KAFKA-8400; rig.strategies.isr.base.record_failed_read).
            if failed_read:
                record_failed_read(isr_strategy, replica.follower(follower), now)
                if pending is None:
                    pending = rm.pending.setdefault(slot, {})
                pending[key] = None  # behind as far as the leader knows: an ISR candidate
            continue
        if offset < 0:
            continue  # unknown: not progress
        progress = replica.follower(follower)
        leo_before = progress.log_end_offset
        # Replica.updateFetchStateOrThrow (3.5+, KIP-903). Before 3.5 Kafka had no such state:
        # a Fetch v15 forced on an older profile brings an epoch its leader does not keep.
        progress.broker_epoch = request.replica_epoch if rm.config.broker_epoch_checks else -1
        isr_strategy.on_fetch(progress, offset, replica.leo, now)
        if pending is not None and offset >= replica.leo:
            pending.pop(key, None)
        if (follower not in replica.isr and not replica.isr_change_pending
                and follower in replica.assignment
                and isr_strategy.may_join(progress, replica.high_watermark,
                                          replica.epoch_start_offset()
                                          if rm.config.isr_rejoin_needs_epoch_start
                                          else 0)):
            rm.ctx.isr_writer.change_isr(broker, replica, (*replica.isr, follower),
                                           expand=[follower])
        if not on_leo_change or progress.log_end_offset != leo_before:
            rm.maybe_advance_hw(replica)

def mark_past_end(rm: ReplicaManager, slot: Slot, request: FetchRequestMsg) -> None:
    """A follower's fetch offset past the log end of a partition led here is answered at once,
    OFFSET_OUT_OF_RANGE (Partition.readRecords → Log.read's range check), whether or not the
    partition has anything new for it: it is made pending, so the read sees it."""
    for key, state in request.updates.items():
        replica = rm.replicas.get(key)
        if (replica is not None and replica.role is Role.LEADER
                and state.fetch_offset > replica.leo):
            rm.pending.setdefault(slot, {})[key] = None


def _update_consumer(rm: ReplicaManager, slot: Slot, request: FetchRequestMsg) -> None:
    """A consumer's positions: partitions it is behind on (below the HW) stay pending, and
    so does one whose position is past the log end (answered at once: OFFSET_OUT_OF_RANGE,
    Log.read's range check); it watches every partition it fetches so a HW advance wakes its
    long poll."""
    positions = rm.consumer_positions.setdefault(slot, {})
    pending = rm.pending.setdefault(slot, {})
    for key, state in request.updates.items():
        replica = rm.replicas.get(key)
        if not serves_consumer(replica, request.version, request.rack_id):
            continue  # (a follower serves a v11+ consumer fetch: KIP-392)
        assert replica is not None
        positions[key] = state.fetch_offset
        rm.consumer_watchers.setdefault(key, {})[slot] = None
        if state.fetch_offset < replica.high_watermark or state.fetch_offset > replica.leo:
            pending[key] = None
        else:
            pending.pop(key, None)

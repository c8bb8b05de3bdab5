"""The active controller's soft state of each broker's session (Kafka's BrokerHeartbeatManager
with its BrokerHeartbeatTracker): when it last heard from the broker, its last metadata offset,
fenced or not, in controlled shutdown or not. None of it is in the metadata log: a new active
controller starts every clock afresh (so a failover fences nobody).
"""

from __future__ import annotations

from dataclasses import dataclass

# BrokerControlState
FENCED = "FENCED"
UNFENCED = "UNFENCED"
CONTROLLED_SHUTDOWN = "CONTROLLED_SHUTDOWN"
SHUTDOWN_NOW = "SHUTDOWN_NOW"


@dataclass
class BrokerHeartbeatState:
    broker: int
    broker_epoch: int
    fenced: bool
    last_contact_us: int
    metadata_offset: int = -1
    controlled_shutdown_offset: int = -1  # -1: not shutting down

    @property
    def shutting_down(self) -> bool:
        return self.controlled_shutdown_offset >= 0


class BrokerHeartbeatManager:
    def __init__(self, session_timeout_ms: int):
        self.session_timeout_us = session_timeout_ms * 1000
        self.brokers: dict[int, BrokerHeartbeatState] = {}

    def register(self, broker: int, broker_epoch: int, fenced: bool, now_us: int) -> None:
        self.brokers[broker] = BrokerHeartbeatState(broker, broker_epoch, fenced, now_us)

    def touch(self, broker: int, metadata_offset: int, now_us: int) -> None:
        state = self.brokers[broker]
        state.last_contact_us = now_us
        state.metadata_offset = metadata_offset

    def has_valid_session(self, broker: int, broker_epoch: int | None, now_us: int) -> bool:
        """An unfenced broker heard from within the session timeout (the tracker's
        hasValidSession; a fenced broker has none)."""
        state = self.brokers.get(broker)
        return (state is not None and not state.fenced
                and (broker_epoch is None or state.broker_epoch == broker_epoch)
                and now_us - state.last_contact_us < self.session_timeout_us)

    def fence(self, broker: int) -> None:
        state = self.brokers.get(broker)
        if state is not None:
            state.fenced = True
            state.controlled_shutdown_offset = -1  # a fenced broker leaves controlled shutdown

    def active(self, broker: int) -> bool:
        """Unfenced and not shutting down: may lead, may be in an ISR (isActive)."""
        state = self.brokers.get(broker)
        return state is not None and not state.fenced and not state.shutting_down

    def lowest_active_offset(self) -> int:
        offsets = [s.metadata_offset for s in self.brokers.values()
                   if not s.fenced and not s.shutting_down]
        return min(offsets) if offsets else 1 << 62

    def next_check_time_us(self) -> int | None:
        """When the first unfenced broker's session runs out (nextCheckTimeNs)."""
        times = [s.last_contact_us for s in self.brokers.values() if not s.fenced]
        return min(times) + self.session_timeout_us if times else None

    def find_one_stale_broker(self, now_us: int) -> int | None:
        """The unfenced broker whose session ran out first, if any (findOneStaleBroker: the
        tracker walks the brokers by last contact, oldest first)."""
        stale = [(s.last_contact_us, s.broker) for s in self.brokers.values()
                 if not s.fenced and now_us - s.last_contact_us >= self.session_timeout_us]
        return min(stale)[1] if stale else None

    def next_state(self, broker: int, want_fence: bool, want_shutdown: bool,
                   metadata_offset: int, register_offset: int, has_leaderships: bool) -> str:
        """BrokerHeartbeatManager.calculateNextBrokerState."""
        state = self.brokers[broker]
        if state.shutting_down:
            if state.fenced:
                return SHUTDOWN_NOW
            # It may go once it leads nothing and every active broker has seen that.
            if not has_leaderships and (self.lowest_active_offset()
                                        >= state.controlled_shutdown_offset):
                return SHUTDOWN_NOW
            return CONTROLLED_SHUTDOWN
        if state.fenced:
            if want_shutdown:
                return SHUTDOWN_NOW
            if not want_fence and metadata_offset >= register_offset:
                return UNFENCED  # caught up with its own RegisterBrokerRecord
            return FENCED
        if want_fence:
            return SHUTDOWN_NOW if want_shutdown else FENCED
        if want_shutdown:
            return CONTROLLED_SHUTDOWN if has_leaderships else SHUTDOWN_NOW
        return UNFENCED

"""A parked fetch (Kafka's DelayedFetch): an operation watched in the fetch purgatory under its
client's slot, answered when an announced change brings enough or when its max wait ends
(docs/kafka.md §2–§3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rig.cluster.context import Process
from rig.cluster.messages import FetchRequestMsg
from rig.cluster.replica_manager import ReplicaManager, Slot
from rig.engine import Timer
from rig.strategies.fetch_session import SessionContext


class Server(Protocol):
    """What a parked fetch uses of its leader's fetch handling (rig.cluster.fetch_server)."""

    broker: Process
    replica_manager: ReplicaManager

    def readable(self, slot: Slot, request: FetchRequestMsg, enough: int) -> int: ...

    def complete(self, delayed: DelayedFetch) -> bool: ...


@dataclass(eq=False, slots=True)
class DelayedFetch:
    """A parked fetch, watched under its client's slot."""

    server: Server
    slot: Slot
    request: FetchRequestMsg
    context: SessionContext
    arrived_us: int
    incarnation: int  # the broker process's that parked it
    timer: Timer | None = None

    def try_complete(self) -> bool:
        """Answer if what was just announced brings enough (DelayedFetch.tryComplete, Case H:
        the bytes readable from the fetch offsets, summed over the partitions, reach min
        bytes): a HW advance for a consumer, which reads below the HW; an append for a
        follower, which reads to the log end — at once when the append alone is enough
        (always, at replica.fetch.min.bytes' default of 1)."""
        announced = self.server.replica_manager.announced
        if announced is None:
            return False
        request = self.request
        min_bytes = request.min_bytes
        if request.fetcher.role == "consumer":
            ready = (min_bytes <= 1
                     or self.server.readable(self.slot, request, min_bytes) >= min_bytes)
        else:  # (a fetch whose epoch went stale is completed: FencedLeaderEpochException)
            ready = (min_bytes <= announced
                     or (announced > 0
                         and self.server.readable(self.slot, request, min_bytes) >= min_bytes)
                     or bool(self.server.replica_manager.fetch_epochs.fenced(self.slot, request)))
        return ready and self.server.complete(self)

    def expire(self) -> None:
        self.server.complete(self)

    def max_wait_over(self) -> None:
        """Its max-wait timer fired: expire, unless the process that parked it died since."""
        if self.server.broker.incarnation == self.incarnation:
            self.expire()

    def cancel_timer(self) -> None:
        """Let go of the max-wait timer (its action refers back here): no cycle to collect."""
        timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()

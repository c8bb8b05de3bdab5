"""A coasting fetch client's idle rounds as arithmetic (rig.cluster.coast): the shape of the round
it repeats, taken from the last real one, when its messages hold each of its two links, and how
far the round under way has got at any instant. Nothing here changes the simulation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg
from rig.engine import Simulation
from rig.strategies.fetch_session.base import advance_epoch

if TYPE_CHECKING:
    from rig.cluster.broker import Broker
    from rig.cluster.fetch_client import FetchClient
    from rig.cluster.network import Link, Network

# Where the round under way stands (IN_FLIGHT in rig.cluster.coast_ties names what each still
# has queued).
SENT, PARKED, ANSWERED = "sent", "parked", "answered"


class IdleRounds:
    """One fetcher's idle rounds since `start_us` (when the first skipped request left), each
    `period_us` long: request on the wire `to_leader_us`, held `wait_us`, response back
    `to_client_us`."""

    def __init__(self, sim: Simulation, network: Network, fetcher: FetchClient, leader: Broker,
                 request: FetchRequestMsg, response: FetchResponseMsg, queued: tuple[int, int]):
        self.sim = sim
        self.fetcher = fetcher
        self.leader = leader
        self.slot = fetcher.slot_key
        self.links: tuple[Link, Link] = ((fetcher.node, leader.id), (leader.id, fetcher.node))
        self.start_us = sim.now_us
        # Each way, as the last real round went: the wait for the link (behind another coast's
        # message, the same every round), then the message on the link, then the latency.
        self.to_leader_us = request.arrived_us - fetcher.sent_at_us
        self.wait_us = request.max_wait_ms * 1000
        self.to_client_us = self.start_us - response.sent_us
        self.period_us = self.to_leader_us + self.wait_us + self.to_client_us
        self.request_queued_us, self.response_queued_us = queued
        self.request_busy_us = network.serialization_us(*self.links[0], fetcher.last_sizes[2])
        self.response_busy_us = network.serialization_us(*self.links[1], response.wire_bytes)
        self.session_id = request.session.session_id
        self.full = request.session.full
        self.first_epoch = -1 if self.full else advance_epoch(request.session.epoch, 1)
        self.request_partitions = fetcher.last_listed
        self.response_partitions = response.listed
        self.request_sizes = fetcher.last_sizes
        self.response_sizes = (response.body_bytes, response.header_bytes, response.wire_bytes)
        self.timeout_us = fetcher.timeout_ms * 1000
        # The action it began in (the last real round's response arriving): its place in the
        # queue, where the order of its skipped rounds' entries starts (rig.cluster.coast_ties).
        self.begin_order = sim.running_order()

    # -- the two streams of messages on the links ---------------------------------------------
    def _stream(self, link: Link) -> tuple[int, int]:
        """(when the first message takes the link, for how many µs) of this coast on `link`."""
        if link == self.links[0]:
            return self.start_us + self.request_queued_us, self.request_busy_us
        return (self.start_us + self.to_leader_us + self.wait_us + self.response_queued_us,
                self.response_busy_us)

    def meets(self, link: Link, start_us: int, end_us: int) -> bool:
        """Whether one of our messages on `link` is sent, waits or is sent within [start, end)
        (then a real message there would wait for it or hold it up)."""
        first, busy = self._stream(link)
        queued = self.request_queued_us if link == self.links[0] else self.response_queued_us
        sent, span = first - queued, queued + busy
        k = max(0, (start_us - sent - span) // self.period_us + 1)  # first to end after start
        return sent + k * self.period_us < end_us

    # -- the round under way --------------------------------------------------------------------
    def last_arrival_ms(self) -> float | None:
        """When the leader last opened a coasted round's request: what a real round would have
        left in ReplicaManager.last_fetch_ms (as Coast._restore sets it); None before the first."""
        rounds, phase = self._where(self.sim.now_us)
        opened = rounds + (phase != SENT)
        if not opened:
            return None
        return (self.start_us + (opened - 1) * self.period_us + self.to_leader_us) / 1000

    def _where(self, now: int) -> tuple[int, str]:
        """(the round under way, how far it got) at `now`, by the queue's order at ties."""
        sim = self.sim
        current = (now - self.start_us) // self.period_us
        sent = self.start_us + current * self.period_us
        arrived = sent + self.to_leader_us
        expired = arrived + self.wait_us
        if sim.ran_before(expired, arrived):
            return current, ANSWERED
        if sim.ran_before(arrived, sent):
            return current, PARKED
        if current == 0 or sim.ran_before(sent, sent - self.to_client_us):
            return current, SENT
        return current - 1, ANSWERED

"""Idle fetch rounds in closed form: what makes an idle hour cheap to simulate.

A fetch client (a follower's fetcher or a consumer) with nothing to fetch repeats one round for
ever: the same request (for a session, one that lists nothing) reaches the leader, waits its max
wait in purgatory, and the same empty response comes back. Nothing changes but counters: the
session epochs, the session's last use, the leader's time of the follower's last fetch, how long
the two links are busy. Simulating every such round makes an idle cluster cost simulated time ×
fetchers. A *coasting* client instead remembers when its idle rounds began and their period, and
is woken — its state rebuilt exactly as the rounds would have left it — as soon as anything could
make a round differ:

- anything the leader's fetch purgatory hears of on its slot: a coast waits there as an
  operation under the slot its parked fetch would have, so an append to a partition it fetches,
  a HW advance, a HW left below the log end, a new leadership of one of its partitions
  (rig.cluster.replica_manager), or a full fetch asking for a session (the cache may evict by
  last use; rig.cluster.fetch_server) ends it, just before the change;
- its partitions change, it stops, its broker's fetchers get stuck, or either broker crashes or
  stalls (rig.cluster.fetch_client, rig.cluster.cluster);
- a real message would wait for, or hold up, one of its messages on its two links, or a fault
  changes them (rig.cluster.network);
- its messages would meet another coasting client's on a shared link (a wake-up timer, from the
  arithmetic of two periodic streams: `first_meeting`), or a coast its messages waited behind
  every round (two clients locked in step, below) wakes;
- an entry is queued for the very instant (time and scheduling time) of one of its skipped
  rounds' entries that the full run had queued first (rig.cluster.coast_ties);
- the run ends (`Cluster.finish_coasting`).

Two clients whose rounds differ by a few µs drift into each other on a shared link and lock in
step, the shorter round waiting behind the longer one every round (the full simulation shows the
same); a round that waited behind a coasting message with its own period coasts too.

Meanwhile a full log still gets each skipped round's two lines, written where the round would
have written them (rig.cluster.coast_lines); with `events: fetch-aggregated`, woken, it logs the
rounds it skipped as one fetch.idle event instead (requests and responses counted separately: a
round can be cut between them). Either way the round in progress goes on as a real one:
its request still travelling, held in the leader's purgatory, or its response travelling. Every
action it re-queues keeps the place in the queue it would have had (Simulation.at's
`scheduled_us`), and `Simulation.ran_before` says which of a round's steps due at the wake-up
instant had already run. So a run whose rounds coast takes the same steps at the same times as
one that simulates them all: the tests compare the full logs byte for byte, and a
`fetch-aggregated` log with a full one event by event.

Coasting is a choice of cost, never of outcome: a client whose coast ended within its first
rounds simulates a few before it may coast again (`EARLY_ROUNDS`, doubling up to `MAX_BACKOFF`),
and none begins at a leader that was asked for a fetch session lately (rig.cluster.coast_begin).

Only fetch-session strategies whose two halves offer `skip_idle_rounds` (and whose cache says
which incremental request it `expects`) coast, as the built-ins do; with any other, every round
is simulated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, cast

from rig.cluster.coast_lines import CoastLines, Cursor
from rig.cluster.coast_rounds import ANSWERED, PARKED, SENT, IdleRounds
from rig.cluster.coast_ties import IN_FLIGHT, TIMEOUT, Ties
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg
from rig.cluster.periodic import earliest_meeting_us
from rig.engine import URGENT, Simulation, Timer
from rig.events import EventLog, names
from rig.protocol.errors import NONE
from rig.strategies.fetch_session.base import IdleRoundsCache, IdleRoundsClient

if TYPE_CHECKING:
    from rig.cluster.broker import Broker
    from rig.cluster.fetch_client import FetchClient
    from rig.cluster.network import Network, Node


# A coast that ends before it skipped this many rounds ended early: its client simulates 1, 2,
# 4, … up to MAX_BACKOFF idle rounds before it may coast again (it changes no line of the log).
EARLY_ROUNDS = 2
MAX_BACKOFF = 256


class CoastHost(Protocol):
    """What coasting needs of the model around it (rig.cluster.cluster.Cluster)."""

    sim: Simulation
    log: EventLog
    network: Network
    coasts: dict[Coast, None]  # every coast under way
    ties: Ties  # and the entries their skipped rounds would queue
    lines: CoastLines | None  # and, in a full log, the lines they write (else: fetch.idle)
    horizon_us: int  # the latest the run can end

    @property
    def brokers(self) -> Mapping[int, Broker]: ...

    def deliver_at(self, arrival_us: int, src: Node, dst: Node, deliver: Callable[[], None],
                   sent_us: int, nbytes: int) -> None: ...

    def backlogged(self, src: Node, dst: Node) -> bool: ...


class Coast(IdleRounds):
    """A fetch client coasting through its idle rounds (IdleRounds): in the simulation's place
    from `register` until woken, then its state rebuilt as the skipped rounds left it."""

    def __init__(self, host: CoastHost, fetcher: FetchClient, leader: Broker,
                 request: FetchRequestMsg, response: FetchResponseMsg, queued: tuple[int, int]):
        super().__init__(host.sim, host.network, fetcher, leader, request, response, queued)
        self.host = host
        self.timer: Timer | None = None
        self.active = True
        self.cursor: Cursor | None = None  # the lines written, in a full log

    # -- starting and waking ------------------------------------------------------------------
    def _first_meeting_us(self, horizon_us: int) -> int | None:
        """When to wake so that no message of ours meets another coast's on a shared link: the
        earliest such meeting, less the other message's busy time; None if none before the
        horizon."""
        coasting = self.host.network.coasting
        meetings = [earliest_meeting_us(*self._stream(link), self.period_us, [
            (*other._stream(link), other.period_us) for other in
            cast("dict[Coast, None]", coasting.get(link, {})) if other is not self], horizon_us)
            for link in self.links]
        found = [at for at in meetings if at is not None]
        return max(min(found), self.host.sim.now_us) if found else None

    def register(self, horizon_us: int) -> bool:
        """Take the fetcher's place in the simulation; False (nothing changed) when its messages
        would meet another coast's too soon to be worth it."""
        cluster = self.host
        meeting = self._first_meeting_us(horizon_us)
        if meeting is not None and meeting < self.start_us + 2 * self.period_us:
            return False
        self.fetcher.coast = self
        self.fetcher.in_flight = True  # a coasting fetcher always has a round under way
        self.leader.fetch_purgatory.watch((self.slot,), self)
        self.leader.fetch_server.coasts[self] = None
        for link in self.links:
            cluster.network.coasting.setdefault(link, {})[self] = None
        cluster.coasts[self] = None
        cluster.ties.add(self)
        if cluster.lines is not None:
            self.cursor = cluster.lines.add(self)
        if meeting is not None:
            self.timer = cluster.sim.at(meeting, self.wake, priority=URGENT)
        return True

    def _unregister(self) -> None:
        cluster = self.host
        self.fetcher.coast = None
        self.leader.fetch_purgatory.forget(self)
        self.leader.fetch_server.coasts.pop(self, None)
        for link in self.links:
            waiting = cluster.network.coasting.get(link)
            if waiting is not None:
                waiting.pop(self, None)
                if not waiting:
                    del cluster.network.coasting[link]
        cluster.coasts.pop(self, None)
        cluster.ties.remove(self)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    # -- as an operation in the leader's fetch purgatory (under its slot) ---------------------
    def try_complete(self) -> bool:
        """Whatever would complete a parked fetch of this slot, or change what the next round
        reads, ends the coast: rebuilt now, the round in progress goes on for real."""
        self.wake()
        return True

    def expire(self) -> None:
        self.wake()

    def wake(self) -> None:
        """Rebuild the state the skipped rounds left and go on with the current one for real."""
        if not self.active:
            return
        self.active = False
        written = self.cursor.end() if self.cursor is not None else None
        self._unregister()
        sim = self.host.sim
        rounds, phase = self._where(sim.now_us)
        self._restore(rounds, phase, written)
        fetcher = self.fetcher
        if rounds < EARLY_ROUNDS:
            fetcher.coast_wait = fetcher.coast_backoff = min(MAX_BACKOFF,
                                                             2 * fetcher.coast_backoff or 1)
        else:
            fetcher.coast_backoff = 0
        # A coast whose message waited for a link behind one of ours every round (two clients
        # locked in step) would not wait once ours go their own way: it goes on for real too.
        coasting = self.host.network.coasting
        for link in self.links:
            for other in list(cast("dict[Coast, None]", coasting.get(link, {}))):
                if (other.request_queued_us if link == other.links[0]
                        else other.response_queued_us):
                    other.wake()

    def _restore(self, current: int, phase: str, written: tuple[int, int] | None) -> None:
        fetcher, leader = self.fetcher, self.leader
        cluster = self.host
        period = self.period_us
        sent_us = self.start_us + current * period  # the current round's request left then
        arrived_us = sent_us + self.to_leader_us
        expired_us = arrived_us + self.wait_us
        answered = phase == ANSWERED
        requests, responses = current + 1, current + answered
        client = cast(IdleRoundsClient, fetcher.client)
        cache = cast(IdleRoundsCache, leader.cache)
        # The client took the answers of the rounds before the current one.
        client.skip_idle_rounds(current)
        request = fetcher.next_request_msg()
        # The leader opened every request that arrived; the current one too unless travelling.
        opened = current + (phase != SENT)
        if opened:
            last_open_us = self.start_us + (opened - 1) * period + self.to_leader_us
            leader.replica_manager.last_fetch_ms[self.slot] = last_open_us / 1000
            if phase == PARKED:
                cache.skip_idle_rounds(self.session_id, opened - 1,
                                       (last_open_us - period) / 1000)
            else:
                cache.skip_idle_rounds(self.session_id, opened, last_open_us / 1000)
        cluster.network.occupy(*self.links[0],
                               sent_us + self.request_queued_us + self.request_busy_us)
        if responses:
            last_answer_us = (self.start_us + (responses - 1) * period + self.to_leader_us
                              + self.wait_us)
            cluster.network.occupy(*self.links[1], last_answer_us + self.response_queued_us
                                   + self.response_busy_us)
        # Each entry queued as the skipped round's own (rig.cluster.coast_ties).
        resuming = cluster.ties.resuming
        resuming.append((self, (TIMEOUT, current)))
        fetcher.resume(request, sent_us, skipped=requests)
        resuming[-1] = (self, (IN_FLIGHT[phase], current))
        if phase == SENT:
            cluster.deliver_at(arrived_us, fetcher.node, leader.id,
                               lambda: leader.on_fetch(request), sent_us, self.request_sizes[2])
        elif phase == PARKED:
            leader.fetch_server.park_again(request, arrived_us)
        else:
            body, header, wire = self.response_sizes
            response = FetchResponseMsg(NONE, self.session_id, self.response_partitions, 0,
                                        body_bytes=body, header_bytes=header, wire_bytes=wire)
            cluster.deliver_at(expired_us + self.to_client_us, leader.id, fetcher.node,
                               lambda: fetcher.on_response(request, response), expired_us, wire)
        resuming.pop()
        if written is None:
            self._log(requests, responses)
        elif written != (requests, responses):  # (the lines' order and the rounds' disagree)
            raise AssertionError(f"a coast of {fetcher.client_id} wrote {written} request and "
                                 f"response lines by {cluster.sim.now_us} µs, its rounds "
                                 f"{(requests, responses)}")

    def _log(self, requests: int, responses: int) -> None:
        fetcher = self.fetcher
        body, header, wire = self.request_sizes
        r_body, r_header, r_wire = self.response_sizes
        self.host.log.emit(
            names.FETCH_IDLE, role=fetcher.role, client=fetcher.client_id,
            replica_id=fetcher.replica_id, broker=self.leader.id, source=fetcher.source,
            fetcher=fetcher.fetcher_id, version=fetcher.version, session_id=self.session_id,
            full=self.full, first_session_epoch=self.first_epoch, period_us=self.period_us,
            requests=requests, first_request_us=self.start_us,
            request_partitions=self.request_partitions, request_body_bytes=body,
            request_header_bytes=header, request_wire_bytes=wire, responses=responses,
            first_response_us=self.start_us + self.to_leader_us + self.wait_us,
            response_partitions=self.response_partitions, error_code=NONE, records_bytes=0,
            waited_ms=self.wait_us / 1000, response_body_bytes=r_body,
            response_header_bytes=r_header, response_wire_bytes=r_wire)

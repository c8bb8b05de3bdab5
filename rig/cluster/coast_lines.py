"""A coast's skipped rounds in a full event log (rig.cluster.coast): every line they would have
written, each where the run's order puts it.

With `events: full` a coasting fetch client still logs each idle round's two lines as the round
would have: its fetch.request when the client sends it (in the action where the previous
round's response reaches the client; round 0's in the action the coast began in, at once), its
fetch.response when the parked fetch's max wait ends at the leader. Those actions are never
queued. Each coast's next line waits here under the place its action would have had in the
queue, (time, priority, scheduling time), and is written just before the first line of any
action that would have run after it (EventLog.before_emit): one due later, or at the same time
with a higher priority or a later scheduling time (Simulation.ran_before). An action tied with
one of a coast's on all three ran after it only if it was queued after it, and then the coast
woke as it was queued (rig.cluster.coast_ties): so a tie means the line comes after. Two coasts
tied on all three write in the order the full run had queued their actions
(`coast_ties.queued_first`).

A coast that wakes has written exactly the lines of the rounds its rebuilt state counts (checked
as it wakes): the log is the one the full simulation writes, byte for byte
(`benchmarks/log_digests.py`), at the cost of writing two lines a round instead of simulating it.
"""

from __future__ import annotations

from heapq import heappop, heappush, heapreplace
from typing import Any, Protocol

from rig.cluster.coast_ties import EXPIRY, RESPONSE, queued_first
from rig.cluster.coast_ties import Coast as TiedCoast
from rig.engine import NORMAL, Simulation
from rig.events import EventLog, names
from rig.protocol.errors import NONE
from rig.strategies.fetch_session.base import advance_epoch

# Whether a full log's idle rounds coast (False: each is simulated; the tests compare the two).
ENABLED = True


class Coast(TiedCoast, Protocol):
    """What the lines of its rounds take of a coast (rig.cluster.coast.Coast): the round it
    repeats (rig.cluster.coast_rounds.IdleRounds)."""

    fetcher: Any  # its FetchClient
    leader: Any  # the Broker it fetches from
    session_id: int
    full: bool
    first_epoch: int  # the session epoch of its first skipped request (-1: full requests)
    request_partitions: int
    response_partitions: int
    request_sizes: tuple[int, int, int]  # body, header and wire bytes
    response_sizes: tuple[int, int, int]


class Cursor:
    """The lines one coast has written, and the next one's place: `(time, priority, scheduled
    at, cursor)` entries order the waiting lines of every coast (`__lt__` only on a tie)."""

    __slots__ = ("_lines", "_request", "_request_values", "_response", "_response_values",
                 "coast", "requests", "responses", "woken")

    def __init__(self, coast: Coast, lines: CoastLines, log: EventLog):
        self.coast = coast
        self._lines = lines
        fetcher = coast.fetcher
        self.requests = self.responses = 0  # lines written
        self.woken = False  # its coast woke: it writes no more
        self._request = log.stamped(fetcher.request_emitter)
        self._response = log.stamped(coast.leader.fetch_server.response_emitter(fetcher))
        body, header, wire = coast.request_sizes
        self._request_values = (coast.full, coast.request_partitions, 0, body, header, wire)
        body, header, wire = coast.response_sizes
        self._response_values = (NONE, coast.response_partitions, 0, coast.wait_us / 1000, body,
                                 header, wire)

    def write(self) -> tuple[int, int, int, Cursor]:
        """Write the next line; the place of the one after."""
        coast = self.coast
        if self.requests == self.responses:  # round k's request (sent at the start of round k)
            k = self.requests
            epoch = coast.first_epoch
            self._request(coast.start_us + k * coast.period_us, coast.fetcher.version,
                          coast.session_id, epoch if epoch < 0 else advance_epoch(epoch, k),
                          *self._request_values)
            self.requests = k + 1
        else:
            self._response(coast.start_us + self.responses * coast.period_us + coast.to_leader_us
                           + coast.wait_us, coast.fetcher.version, coast.session_id,
                           *self._response_values)
            self.responses += 1
        return self.next()

    def next(self) -> tuple[int, int, int, Cursor]:
        coast = self.coast
        if self.requests == self.responses:  # the request: its round's SEND action
            sent = coast.start_us + self.requests * coast.period_us
            return sent, NORMAL, sent - coast.to_client_us, self
        arrived = coast.start_us + self.responses * coast.period_us + coast.to_leader_us
        return arrived + coast.wait_us, NORMAL, arrived, self  # the response: its EXPIRY

    def end(self) -> tuple[int, int]:
        """Its coast wakes: the lines due by now are written, the later ones never will be.
        (requests, responses) it wrote."""
        return self._lines.remove(self)

    def _node(self) -> tuple[str, int]:
        """The coast_ties entry whose action writes the next line."""
        if self.requests == self.responses:
            return RESPONSE, self.requests - 1  # the previous round's response arriving
        return EXPIRY, self.responses

    def __lt__(self, other: Cursor) -> bool:
        return queued_first(self.coast, self._node(), other.coast, other._node())


class CoastLines:
    """The lines waiting to be written, one per coast: the next of each."""

    def __init__(self, sim: Simulation, log: EventLog):
        self._sim = sim
        self._log = log
        self._waiting: list[tuple[int, int, int, Cursor]] = []  # with woken coasts' cursors
        self._live = 0  # cursors of coasts under way

    def writable(self) -> bool:
        """Whether lines may be written late: no observer sees fetch events as they come."""
        return not (self._log.watched(names.FETCH_REQUEST)
                    or self._log.watched(names.FETCH_RESPONSE))

    def add(self, coast: Coast) -> Cursor:
        """`coast` began in the running action: its round 0's request line now, the rest in
        their places."""
        cursor = Cursor(coast, self, self._log)
        self.flush()  # (the lines before the running action's come first)
        heappush(self._waiting, cursor.write())
        self._live += 1
        self._log.before_emit = self.flush
        return cursor

    def flush(self) -> None:
        """Write every waiting line whose action would have run by now, in the run's order."""
        waiting = self._waiting
        ran_before = self._sim.ran_before
        while waiting:
            time_us, priority, scheduled_us, cursor = waiting[0]
            if cursor.woken:
                heappop(waiting)
            elif ran_before(time_us, scheduled_us, priority):
                heapreplace(waiting, cursor.write())
            else:
                return

    def remove(self, cursor: Cursor) -> tuple[int, int]:
        """`Cursor.end`."""
        self.flush()
        cursor.woken = True  # (its entry leaves the heap when it comes to the top)
        self._live -= 1
        if not self._live:
            self._waiting.clear()
            self._log.before_emit = None
        return cursor.requests, cursor.responses


def lines_for(sim: Simulation, log: EventLog, events: str) -> CoastLines | None:
    """The CoastLines of a run whose log is `events` (full), else None (fetch-aggregated logs
    a coast's rounds as one fetch.idle)."""
    return CoastLines(sim, log) if events == "full" and ENABLED else None

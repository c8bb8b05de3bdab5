"""When a client's metadata request goes (Kafka's Metadata refresh timing, as its NetworkClient's
DefaultMetadataUpdater reads it): one request open at a time, and the next no sooner than a
backoff after the last answer or failure, however often the client finds it needs one.

A client asks for an update (Metadata.requestUpdate) whenever what it knows fails it: a batch
for a partition without a leader, a refused produce, a broken connection. The request goes at
the client's next poll once Metadata.timeToNextUpdate is 0: `lastRefreshMs` (the time of the
last answer or failure) plus the backoff. While a request is open the client waits for it, or
for request.timeout.ms (a failure).

- Before 3.7 the backoff is `retry.backoff.ms` (Metadata.timeToAllowUpdate).
- 3.7+ (KIP-580, KAFKA-9800): it grows — failures in a row (`attempts`), and answers in a row
  that taught nothing new (`equivalentResponseCount`: no partition's leader epoch grew; an
  answer older than metadata.max.age.ms starts the count again), each double it from
  retry.backoff.ms up to retry.backoff.max.ms, with ±20 % jitter drawn at each look
  (rig.workload.retry_backoff).
- A broken connection (a broker's process died, a request timed out) asks for an update
  (NetworkClient.handleDisconnections: "maybe the problem is our metadata"). 2.5+ (KAFKA-8933)
  it also fails a metadata request open to that broker, and an update due but not yet sent:
  the backoff starts again; before, the lost request is simply no longer open.
- 2.3+ (KAFKA-7831): an answer in which a partition of the client's topics has no leader
  (LEADER_NOT_AVAILABLE, an InvalidMetadataException) asks for another update itself; before,
  only the client's next need did.
"""

from __future__ import annotations

from collections.abc import Callable

from rig.backoff import ExponentialBackoff
from rig.engine import Simulation
from rig.scenario.client_config import METADATA_MAX_AGE_MS, RECONNECT_BACKOFF_MS
from rig.workload.poll_timer import PollTimer


class MetadataUpdater:
    """A client's metadata requests in time. `send(request)` sends one request and returns the
    broker it went to, or None if no broker can be asked; the client reports its answer with
    `answered`, unless the request has failed meanwhile (`is_open`): Kafka closed its
    connection, and the answer never comes."""

    def __init__(self, sim: Simulation, backoff: ExponentialBackoff, request_timeout_ms: int,
                 disconnect_fails: bool, send: Callable[[object], int | None]):
        self.sim = sim
        self.disconnect_fails = disconnect_fails  # 2.5+ (KAFKA-8933)
        self.backoff = backoff
        self.request_timeout_us = request_timeout_ms * 1000
        self._send = send
        self.requested = False  # Metadata.needFullUpdate
        # lastRefreshMs; None until the first answer (the client starts knowing the metadata
        # of its start, and its first request is not held back)
        self.last_refresh_us: int | None = None
        self.last_success_us = 0
        self.attempts = 0  # failed requests since the last answer
        self.equivalent = 0  # KIP-580: answers in a row that taught nothing new
        self.source: int | None = None  # the broker asked, while a request is open
        self._open: object | None = None  # the open request (a token its answer names)
        self._poll = PollTimer(sim, self._maybe_update)  # the client's next look

    def request_update(self) -> None:
        """Metadata.requestUpdate: the client needs fresher metadata; it goes when it may."""
        self.requested = True
        self._maybe_update()

    def is_open(self, request: object) -> bool:
        """Whether `request` still waits for its answer (else it failed: ignore the answer)."""
        return request is self._open

    def answered(self, progress: bool, still_needed: bool) -> None:
        """Metadata.update: the open request's answer came; `progress` if it taught something
        new (a grown leader epoch), `still_needed` if it asks for another update (a leaderless
        partition)."""
        now = self.sim.now_us
        self._open = self.source = None
        self.last_refresh_us = self.last_success_us = now
        self.attempts = 0
        self.equivalent = 0 if progress else self.equivalent + 1
        self.requested = still_needed
        self._maybe_update()

    def failed(self) -> None:
        """Metadata.failedUpdate: no answer (a broken connection, request.timeout.ms)."""
        self._fail()
        self._maybe_update()

    def _fail(self) -> None:
        self._open = self.source = None
        self.last_refresh_us = self.sim.now_us
        self.attempts += 1
        self.equivalent = 0

    def connection_reset(self, broker: int) -> None:
        """NetworkClient.processDisconnection: the connection to `broker` broke (its process
        died, or a request to it timed out and the client closed it). The disconnect may mean
        stale metadata: an update is asked for, in every release.

        2.5+ (KAFKA-8933, DefaultMetadataUpdater.handleServerDisconnect): a metadata request
        open to it failed, and so did an update that was due but not sent (isUpdateDue).
        Before, a request open to it is only no longer open (handleDisconnection), and the
        next may go at once."""
        now = self.sim.now_us
        if not self.disconnect_fails:
            if self.source == broker:
                self._open = self.source = None
        elif self.source == broker or (self._open is None and self.requested
                                       and self._allowed_at_us(now) <= now):
            self._fail()
        self.request_update()

    def _allowed_at_us(self, now: int) -> int:
        """Metadata.timeToAllowUpdate, as a time: a new draw of the backoffs at each look."""
        last = self.last_refresh_us
        if last is None:
            return now
        if self.last_success_us + METADATA_MAX_AGE_MS * 1000 <= now:
            self.equivalent = 0  # a periodic refresh is no sign of stale answers
        wait_ms = self.backoff.backoff_ms(self.attempts - 1 if self.attempts else 0)
        if self.equivalent:
            wait_ms = max(wait_ms, self.backoff.backoff_ms(self.equivalent - 1))
        return last + wait_ms * 1000

    def _maybe_update(self) -> None:
        """DefaultMetadataUpdater.maybeUpdate at the client's poll: send if due and allowed,
        else sleep until the backoff ends (and look again then, with new draws)."""
        if not self.requested or self._open is not None:
            return
        now = self.sim.now_us
        at = self._allowed_at_us(now)
        if at <= now:
            request = object()
            source = self._send(request)
            if source is None:  # leastLoadedNode found no broker: reconnect.backoff.ms
                self._poll.wake_at(now + RECONNECT_BACKOFF_MS * 1000)
                return
            self.source = source  # (still `requested`: Metadata.update clears it)
            self._open = request
            self.sim.after(self.request_timeout_us, lambda: self._timed_out(request))
            return
        self._poll.wake_at(at)

    def _timed_out(self, request: object) -> None:
        if self._open is request and self.source is not None:
            self.connection_reset(self.source)


__all__ = ["MetadataUpdater"]

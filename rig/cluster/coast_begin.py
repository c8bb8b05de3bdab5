"""When an idle fetch client starts to coast (rig.cluster.coast): after a round that changed
nothing, if the next one would be the same and its links carry nothing it would meet."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rig.cluster.coast import Coast, CoastHost
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg
from rig.protocol.errors import NONE
from rig.strategies.fetch_session.base import (
    FINAL_EPOCH,
    IdleRoundsCache,
    advance_epoch,
    summarises_idle_rounds,
)
from rig.strategies.guard import GuardedCache, GuardedClient

if TYPE_CHECKING:
    from rig.cluster.fetch_client import FetchClient
    from rig.cluster.network import Link, Network


# A leader that a full fetch asked for a session within this many rounds is likely to be asked
# again soon, which ends every coast there (rig.cluster.fetch_server): none begins (a choice of
# cost only; the log is the same either way).
SESSIONS_QUIET_ROUNDS = 2


def begin(cluster: CoastHost, fetcher: FetchClient, request: FetchRequestMsg,
          response: FetchResponseMsg) -> bool:
    """After `fetcher` took `response`: coast from here if the round was idle and the next one
    would be the same; True if it coasts (then it must not send)."""
    if fetcher.coast_wait:  # its last coast ended early: simulate a few rounds first
        fetcher.coast_wait -= 1
        return False
    session = request.session
    # An incremental response that listed partitions (records, HWs, or the session's changed
    # partitions: a HW that moved while a full response was out) is not idle even without
    # records: the next one lists none, so it is not the round that repeats.
    if (response.error_code != NONE or response.records or response.high_watermarks
            or response.errors or request.updates or fetcher.dirty
            or response.session_id != session.session_id
            or (session.full and session.epoch != FINAL_EPOCH)
            or (not session.full and (session.listed or session.forgotten
                                      or response.listed))
            or not fetcher.may_coast()):
        return False
    leader = cluster.brokers[fetcher.leader_id]
    asked = leader.fetch_server.session_asked_us
    now = cluster.sim.now_us
    if asked is not None and now - asked < SESSIONS_QUIET_ROUNDS * (now - fetcher.sent_at_us):
        return False  # sessions are being asked for here: the next would end the coast
    slot = fetcher.slot_key
    replicas = leader.replica_manager
    if (not leader.alive or leader.stalled or replicas.pending.get(slot)
            or replicas.hw_unseen.get(slot) or leader.fetch_server.parked(slot)
            or replicas.follower_hw_behind(fetcher.replica_id)
            or replicas.follower_outside_isr(fetcher.replica_id)
            or not _offers_idle_rounds(leader.cache, fetcher.client)):
        return False
    if not session.full and not cast(IdleRoundsCache, leader.cache).expects(session.session_id,
                                                     advance_epoch(session.epoch, 1)):
        return False  # the session went (evicted) after this round's request was opened
    if cluster.backlogged(fetcher.node, leader.id) or cluster.backlogged(leader.id, fetcher.node):
        return False  # TCP holds a link's messages for a retransmission: the next round waits
    network = cluster.network
    there = network.quiet_transit_us(fetcher.node, leader.id, fetcher.last_sizes[2])
    back = network.quiet_transit_us(leader.id, fetcher.node, response.wire_bytes)
    if there is None or back is None or fetcher.sent_at_us < 0:
        return False
    period = now - fetcher.sent_at_us
    queued = (request.arrived_us - fetcher.sent_at_us - there, now - response.sent_us - back)
    # The round just ended must have been held its max wait, have waited for its links only
    # behind coasting messages that come back every round (else the next round would differ),
    # leave the links free now, and be shorter than the socket timeout.
    if (response.sent_us - request.arrived_us != request.max_wait_ms * 1000
            or not _queued_behind_coast(network, (fetcher.node, leader.id),
                                        fetcher.sent_at_us, queued[0], period)
            or not _queued_behind_coast(network, (leader.id, fetcher.node),
                                        response.sent_us, queued[1], period)
            or fetcher.timeout_ms * 1000 <= period
            or network.free_at(fetcher.node, leader.id) > now
            or network.free_at(leader.id, fetcher.node) > now
            or (cluster.lines is not None and not cluster.lines.writable())):
        return False
    return Coast(cluster, fetcher, leader, request, response, queued).register(
        cluster.horizon_us)


# Per (cache type, client type), unguarded: whether their rounds may coast.
_SUMMARISED: dict[tuple[type, type], bool] = {}


def _offers_idle_rounds(cache: object, client: object) -> bool:
    """Whether the session cache is an IdleRoundsCache and the client an IdleRoundsClient, each
    with `skip_idle_rounds` from a class that has every call a skipped round stands for
    (`summarises_idle_rounds`: not a plugin's subclass of a built-in that overrides one)."""
    # (under their run-time guards, the strategy's own objects)
    cache = cache._inner if isinstance(cache, GuardedCache) else cache
    client = client._inner if isinstance(client, GuardedClient) else client
    types = (type(cache), type(client))
    known = _SUMMARISED.get(types)
    if known is None:
        known = _SUMMARISED[types] = (
            callable(getattr(cache, "expects", None))
            and summarises_idle_rounds(cache, ("open", "mark_changed", "sent"))
            and summarises_idle_rounds(client, ("next_request", "on_response", "on_disconnect")))
    return known


def _queued_behind_coast(network: Network, link: Link, sent_us: int, queued_us: int,
                         period_us: int) -> bool:
    """A message sent at `sent_us` that waited `queued_us` for `link` waits the same every
    round only behind a coast with the same period whose message held the link from before
    `sent_us` until the moment ours started (two clients locked in step, the shorter round
    behind the longer: the full simulation shows the same)."""
    if queued_us == 0:
        return True
    started = sent_us + queued_us
    for other in network.coasting.get(link, ()):
        assert isinstance(other, Coast)
        first, busy = other._stream(link)
        if (other.period_us == period_us and (started - busy - first) % period_us == 0
                and started - busy <= sent_us):
            return True
    return False

"""Where a replica that becomes follower truncates: to its high watermark (before 0.11), or where
the leader says its epoch ends (KIP-101), walking back epochs (KIP-279). docs/kafka.md §9."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.cluster.log import Batch, Log
from rig.strategies.replication.base import AskLeader, Decision, FollowerView, TruncateTo
from rig.strategies.replication.hw_truncation import HwTruncation
from rig.strategies.replication.leader_epoch import LeaderEpoch
from rig.strategies.replication.leader_epoch_once import LeaderEpochOnce

UNDEFINED = -1


def epoch_table(epochs: list[tuple[int, int]], leo: int) -> Callable[[int], tuple[int, int]]:
    """A follower's own (largest epoch ≤ e, its end offset), as Log.end_offset_for_epoch."""
    def end_offset_for_epoch(asked: int) -> tuple[int, int]:
        known = [i for i, (e, _) in enumerate(epochs) if e <= asked]
        if not known:
            return UNDEFINED, UNDEFINED
        i = known[-1]
        return epochs[i][0], leo if i == len(epochs) - 1 else epochs[i + 1][1]
    return end_offset_for_epoch


def view(leo: int, hw: int, epochs: list[tuple[int, int]] | None = None) -> FollowerView:
    epochs = epochs or []
    return FollowerView(leo, hw, epochs[-1][0] if epochs else UNDEFINED,
                        epoch_table(epochs, leo))


def no_epochs(_: int) -> tuple[int, int]:
    raise AssertionError("hw-truncation never looks at epochs")


# -- hw-truncation (before 0.11) ---------------------------------------------------------------
@given(leo=st.integers(0, 10**6), hw=st.integers(0, 10**6), epoch=st.integers(-1, 50))
def test_hw_truncation_always_truncates_to_min_of_hw_and_leo(leo: int, hw: int,
                                                            epoch: int) -> None:
    # Before KIP-101 a new follower truncates to its own (checkpointed) HW, never past its LEO.
    decision = HwTruncation().on_become_follower(FollowerView(leo, hw, epoch, no_epochs))
    assert decision == TruncateTo(min(hw, leo))


def test_hw_truncation_truncates_below_an_uncommitted_suffix() -> None:
    # KIP-101 case 1: the follower has offsets 0..9 but its checkpointed HW is 8.
    assert HwTruncation().on_become_follower(view(10, 8, [(0, 0)])) == TruncateTo(8)


def test_hw_truncation_ignores_an_epoch_answer() -> None:
    decision = HwTruncation().on_epoch_end(view(10, 4, [(0, 0)]), 0, 0, 10)
    assert decision == TruncateTo(4)


# -- leader-epoch: the first step --------------------------------------------------------------
def test_leader_epoch_asks_for_the_end_of_its_latest_epoch() -> None:
    decision = LeaderEpoch().on_become_follower(view(12, 3, [(0, 0), (2, 5), (7, 9)]))
    assert decision == AskLeader(7)


@pytest.mark.parametrize(("leo", "hw"), [(10, 4), (3, 8)])
def test_leader_epoch_without_epochs_falls_back_to_the_high_watermark(leo: int, hw: int) -> None:
    # A log with no epoch (old message format, or empty): nothing to ask about.
    assert LeaderEpoch().on_become_follower(view(leo, hw)) == TruncateTo(min(leo, hw))


# -- leader-epoch: the leader knows our epoch ---------------------------------------------------
def test_leader_epoch_truncates_to_where_the_leader_ends_our_epoch() -> None:
    # KIP-101 case 2: we wrote 0..9 in epoch 2; the leader's epoch 2 ended at 7.
    follower = view(10, 10, [(0, 0), (2, 4)])
    assert LeaderEpoch().on_epoch_end(follower, 2, 2, 7) == TruncateTo(7)


def test_leader_epoch_keeps_everything_when_the_leader_ends_our_epoch_later() -> None:
    # KIP-101 case 1: the follower lacks the HW that committed its records, but the leader's
    # epoch goes on past our LEO, so nothing is truncated.
    follower = view(10, 8, [(0, 0)])
    assert LeaderEpoch().on_epoch_end(follower, 0, 0, 25) == TruncateTo(10)


def test_leader_epoch_never_truncates_past_its_own_end_of_the_epoch() -> None:
    # After a walk back to epoch 1 (ours ends at 6, where our epoch 3 starts), the leader's
    # epoch 1 ends at 8: keep min(leader end, own end, LEO) = 6.
    follower = view(10, 2, [(0, 0), (1, 3), (3, 6)])
    assert LeaderEpoch().on_epoch_end(follower, 1, 1, 8) == TruncateTo(6)


@given(leo=st.integers(1, 1000), data=st.data())
def test_leader_epoch_truncation_is_the_min_of_leader_end_own_end_and_leo(
        leo: int, data: st.DataObject) -> None:
    starts = sorted(data.draw(st.sets(st.integers(1, leo), max_size=4)))
    epochs = [(0, 0)] + [(i + 1, s) for i, s in enumerate(starts)]
    asked = data.draw(st.sampled_from([e for e, _ in epochs]))
    leader_end = data.draw(st.integers(0, 2 * leo))
    follower = view(leo, data.draw(st.integers(0, leo)), epochs)
    own_epoch, own_end = follower.end_offset_for_epoch(asked)
    assert own_epoch == asked
    assert LeaderEpoch().on_epoch_end(follower, asked, asked, leader_end) == TruncateTo(
        min(leader_end, own_end, leo))


# -- leader-epoch: walking back (KIP-279) -------------------------------------------------------
def test_leader_epoch_asks_again_about_its_older_epoch_when_it_lacks_the_leaders() -> None:
    # We have epochs 0 and 3; asked about 3, the leader answers epoch 2 (its largest ≤ 3), which
    # we never saw: ask again about our largest epoch ≤ 2, which is 0.
    follower = view(10, 2, [(0, 0), (3, 5)])
    assert LeaderEpoch().on_epoch_end(follower, 3, 2, 7) == AskLeader(0)


def test_leader_epoch_truncates_to_the_leader_end_when_it_knows_no_epoch_that_old() -> None:
    # The leader answers epoch 1, older than anything we know (our first epoch is 3): Kafka
    # truncates to min(leader end, LEO) (AbstractFetcherThread, "follower was not tracking").
    follower = view(10, 2, [(3, 0), (5, 4)])
    assert LeaderEpoch().on_epoch_end(follower, 5, 1, 6) == TruncateTo(6)
    assert LeaderEpoch().on_epoch_end(follower, 5, 1, 40) == TruncateTo(10)


@pytest.mark.parametrize("answer", [(UNDEFINED, UNDEFINED), (3, UNDEFINED)])
def test_leader_epoch_falls_back_to_the_high_watermark_on_an_undefined_answer(
        answer: tuple[int, int]) -> None:
    # An undefined end offset (the leader knows no epoch ≤ the one asked): Kafka truncates to
    # the HW (the fetcher's initial offset), never past the LEO.
    follower = view(10, 4, [(3, 0)])
    assert LeaderEpoch().on_epoch_end(follower, 3, *answer) == TruncateTo(4)
    short = view(3, 8, [(3, 0)])
    assert LeaderEpoch().on_epoch_end(short, 3, *answer) == TruncateTo(3)


# -- the whole exchange, against real logs ------------------------------------------------------
def negotiate(strategy: HwTruncation | LeaderEpoch, follower: Log, leader: Log,
              hw: int) -> tuple[int, list[int]]:
    """Run the strategy against a leader's log as the fetcher does; (offset, epochs asked)."""
    follower_view = FollowerView(follower.log_end_offset, hw, follower.latest_epoch,
                                 follower.end_offset_for_epoch)
    decision: Decision = strategy.on_become_follower(follower_view)
    asked: list[int] = []
    while isinstance(decision, AskLeader):
        assert len(asked) < 50, "the exchange does not end"
        asked.append(decision.epoch)
        decision = strategy.on_epoch_end(follower_view, decision.epoch,
                                         *leader.end_offset_for_epoch(decision.epoch))
    return decision.offset, asked


def build(terms: list[tuple[int, int, int]]) -> Log:
    """A log of one-record batches: `count` records per (epoch, count, writer) term. A batch's
    identity is (writer, offset): replicas agree at an offset iff the same leader wrote it."""
    log = Log()
    for epoch, count, writer in terms:
        log.assign_epoch(epoch)
        for _ in range(count):
            offset = log.log_end_offset
            log.append(Batch(offset, 1, epoch, 80, writer, offset), 0.0)
    return log


SHARED, FOLLOWER, LEADER = 0, 1, 2


@st.composite
def diverged_logs(draw: st.DrawFn) -> tuple[Log, Log, int]:
    """Two replicas with a common history, then each with records of epochs the other never
    saw (the follower led them, or they were lost to it); the leader holds the newest epoch.

    Returns (follower, leader, length of the longest common prefix).
    """
    common = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    epochs = iter(range(1000))
    shared = [(next(epochs), n, SHARED) for n in common]
    last_epoch, last_count, _ = shared[-1]
    # Both may hold more of the last shared epoch (its leader wrote them; one copied fewer).
    f_extra, l_extra = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    later = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=5))
    follower_terms: list[tuple[int, int, int]] = []
    leader_terms: list[tuple[int, int, int]] = []
    for led_by_follower, n in later:  # interleaved epochs, each seen by one replica only
        if led_by_follower:
            follower_terms.append((next(epochs), n, FOLLOWER))
        else:
            leader_terms.append((next(epochs), n, LEADER))
    leader_terms.append((next(epochs), draw(st.integers(0, 3)), LEADER))  # its current epoch

    def history(extra: int, own: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        return [*shared[:-1], (last_epoch, last_count + extra, SHARED), *own]

    follower = build(history(f_extra, follower_terms))
    leader = build(history(l_extra, leader_terms))
    return follower, leader, sum(common) + min(f_extra, l_extra)


@given(diverged_logs())
def test_leader_epoch_truncates_exactly_to_the_common_prefix(
        logs: tuple[Log, Log, int]) -> None:
    # KIP-279: after the exchange the follower keeps exactly the longest prefix it shares with
    # the leader: nothing diverged survives, and nothing committed-and-shared is cut.
    follower, leader, prefix = logs
    offset, asked = negotiate(LeaderEpoch(), follower, leader, hw=0)
    assert offset == prefix
    assert asked == sorted(asked, reverse=True) and len(set(asked)) == len(asked)
    follower.truncate_to(offset)
    for o in range(follower.log_end_offset):
        assert follower.identity_at(o) == leader.identity_at(o)


def test_leader_epoch_walks_back_past_an_epoch_only_the_leader_had() -> None:
    # KIP-279's fast leadership changes: epoch 1 (leader only) and epoch 2 (follower only)
    # both start at offset 2. Asked about 2, the leader answers (1, 3); the follower has no
    # epoch 1, asks about its epoch 0, and truncates where both end epoch 0.
    follower = build([(0, 2, SHARED), (2, 2, FOLLOWER)])
    leader = build([(0, 2, SHARED), (1, 1, LEADER), (3, 0, LEADER)])
    assert negotiate(LeaderEpoch(), follower, leader, hw=4) == (2, [2, 0])


def test_hw_truncation_keeps_a_diverged_record_below_its_high_watermark() -> None:
    # The same exchange under hw-truncation (KIP-101 case 2): the follower's HW says 3, but
    # offset 2 was written in an epoch the leader never had. The logs stay diverged, which the
    # exact-prefix property above would catch.
    follower = build([(0, 2, SHARED), (1, 1, FOLLOWER)])
    leader = build([(0, 2, SHARED), (2, 1, LEADER)])
    offset, asked = negotiate(HwTruncation(), follower, leader, hw=3)
    assert (offset, asked) == (3, [])
    assert follower.identity_at(2) != leader.identity_at(2)
    offset, _ = negotiate(LeaderEpoch(), follower, leader, hw=3)
    assert offset == 2


# -- leader-epoch-once (0.11–1.1: ReplicaFetcherThread.maybeTruncate, OffsetsForLeaderEpoch v0) --
def test_once_asks_about_its_latest_epoch_or_falls_back_to_the_hw_without_one() -> None:
    assert LeaderEpochOnce().on_become_follower(view(10, 4, [(0, 0), (3, 6)])) == AskLeader(3)
    assert LeaderEpochOnce().on_become_follower(view(10, 4)) == TruncateTo(4)


@pytest.mark.parametrize(("leader_end", "expected"), [
    (UNDEFINED, 4),  # the leader knows no such epoch: the high watermark
    (12, 10),  # at or past our end: keep the log
    (10, 10),
    (7, 7),  # below our end: truncate there
])
def test_once_truncates_to_the_answer_the_leo_or_the_hw(leader_end: int, expected: int) -> None:
    decision = LeaderEpochOnce().on_epoch_end(view(10, 4, [(0, 0), (3, 6)]), 3, UNDEFINED,
                                              leader_end)
    assert decision == TruncateTo(expected)


def test_once_never_asks_twice_where_kip_279_walks_back() -> None:
    # KAFKA-6361's follower: its epochs 0, 1, 3; the leader's 0, 2, 4, which ends epoch 2 at 4.
    follower = view(3, 3, [(0, 0), (1, 1), (3, 2)])
    assert LeaderEpochOnce().on_epoch_end(follower, 3, 2, 4) == TruncateTo(3)
    assert LeaderEpoch().on_epoch_end(follower, 3, 2, 4) == AskLeader(1)

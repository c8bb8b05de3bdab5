"""rig.testing's replication kit: both built-ins pass, and each planted contract violation is
caught with a message that says what is wrong (a check that cannot fail is worse than none)."""

from __future__ import annotations

import random
import re

import pytest

from rig.strategies.replication.base import AskLeader, Decision, FollowerView, TruncateTo
from rig.strategies.replication.hw_truncation import HwTruncation
from rig.strategies.replication.leader_epoch import LeaderEpoch
from rig.testing import (
    STANDARD_CASES,
    ConformanceError,
    LogPair,
    check_replication,
    check_strategy,
)
from rig.testing._replication import _logs


@pytest.mark.parametrize("cls", [HwTruncation, LeaderEpoch])
def test_builtin_replication_strategies_pass(cls: type) -> None:
    report = check_strategy("replication", cls)
    assert report.kind == "replication" and report.strategy == getattr(cls, "name", None)
    assert len(report.cases) == len(STANDARD_CASES) + 3  # + fresh instance, model run, again
    model = report.cases[-2]
    assert model.startswith("model: ") and "every follower back in sync" in model
    asked = int(re.search(r"(\d+) on_epoch_end", model).group(1))  # type: ignore[union-attr]
    assert (asked > 0) == (cls is LeaderEpoch)  # the model made leader-epoch ask its leaders


def test_the_standard_cases_are_histories_the_leader_epoch_rule_resolves() -> None:
    """Every case's follower and leader logs are consistent: Kafka's rule (KIP-279) ends at the
    first offset where they differ, never below the follower's log start offset."""
    for case in STANDARD_CASES:
        follower, leader = _logs(case)
        assert follower.log_start_offset <= min(case.follower_hw, case.follower_leo), case.label
        if not case.follower_epochs or not case.leader_epochs:
            continue
        view = FollowerView(case.follower_leo, case.follower_hw, follower.latest_epoch,
                            follower.end_offset_for_epoch)
        decision = LeaderEpoch().on_become_follower(view)
        while isinstance(decision, AskLeader):
            decision = LeaderEpoch().on_epoch_end(view, decision.epoch,
                                                  *leader.end_offset_for_epoch(decision.epoch))
        assert decision.offset == _diverge(case), case.label
        assert decision.offset >= case.follower_log_start, case.label


def _diverge(case: LogPair) -> int:
    """The first offset at which the two logs' epochs differ (or the shorter log's end)."""
    def epoch_at(epochs: tuple[tuple[int, int], ...], offset: int) -> int | None:
        return max((e for e, start in epochs if start <= offset), default=None)

    end = min(case.follower_leo, case.leader_leo)
    return next((o for o in range(case.follower_log_start, end)
                 if epoch_at(case.follower_epochs, o) != epoch_at(case.leader_epochs, o)), end)


# -- planted bugs, each a small change to a built-in ------------------------------------------


class TrustsCheckpoint(HwTruncation):
    """Truncates to the checkpointed HW, which a power loss can leave above the LEO."""

    def on_become_follower(self, view: FollowerView) -> Decision:
        return TruncateTo(view.high_watermark)


class OffByOne(HwTruncation):
    def on_become_follower(self, view: FollowerView) -> Decision:
        return TruncateTo(min(view.high_watermark, view.log_end_offset) - 1)


class StartsOver(HwTruncation):
    """Throws the whole log away and fetches it again, deleted head included."""

    def on_become_follower(self, view: FollowerView) -> Decision:
        return TruncateTo(0)


class KeepsItsEpoch(LeaderEpoch):
    """Truncates to where its own epoch ends, ignoring where the leader says it ends."""

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        decision = super().on_epoch_end(view, asked, leader_epoch, leader_end_offset)
        if isinstance(decision, TruncateTo) and leader_epoch >= 0:
            return TruncateTo(min(view.end_offset_for_epoch(leader_epoch)[1],
                                  view.log_end_offset))
        return decision


class AsksAgain(LeaderEpoch):
    """KIP-279's walk back done wrong: asks the same epoch again."""

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        decision = super().on_epoch_end(view, asked, leader_epoch, leader_end_offset)
        return AskLeader(asked) if isinstance(decision, AskLeader) else decision


class AsksWithoutEpochs(LeaderEpoch):
    """Asks about its latest epoch even when its log has none (−1)."""

    def on_become_follower(self, view: FollowerView) -> Decision:
        return AskLeader(view.latest_epoch)


class AsksNewer(LeaderEpoch):
    def on_become_follower(self, view: FollowerView) -> Decision:
        decision = super().on_become_follower(view)
        return AskLeader(decision.epoch + 1) if isinstance(decision, AskLeader) else decision


class BareOffset(HwTruncation):
    def on_become_follower(self, view: FollowerView) -> Decision:
        return min(view.high_watermark, view.log_end_offset)  # type: ignore[return-value]


class TrustsTheAnswer(LeaderEpoch):
    """Assumes the leader always knows the epoch: breaks on an old-format leader's (−1, −1)."""

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        answered = {leader_epoch: leader_end_offset} if leader_epoch >= 0 else {}
        if answered[asked] > view.log_end_offset:
            return TruncateTo(view.log_end_offset)
        return super().on_epoch_end(view, asked, leader_epoch, leader_end_offset)


class CoinFlip(LeaderEpoch):
    """Asks the leader, or not, at random: both valid, but not reproducible."""

    def on_become_follower(self, view: FollowerView) -> Decision:
        if random.random() < 0.5:
            return TruncateTo(min(view.high_watermark, view.log_end_offset))
        return super().on_become_follower(view)


@pytest.mark.parametrize(("cls", "expected"), [
    (TrustsCheckpoint, "[checkpointed HW above the LEO after a power loss] truncates to 2, "
                       "above the follower's LEO 1"),
    (OffByOne, "[empty follower log] truncates to -1: offsets are never negative"),
    (StartsOver, "[head deleted by retention (log start 500)] truncates to 0, below the "
                 "follower's log start offset 500"),
    (KeepsItsEpoch, "[KIP-101 case 2: the new leader lost offset 1 and wrote another] truncates "
                    "to 2 after the leader said its epoch 0 ends at 1"),
    (AsksAgain, "[KIP-279: the leader never had the follower's latest epoch] asked about epoch 3 "
                "after the answer about epoch 3: each new question must ask an older epoch"),
    (AsksWithoutEpochs, "[empty follower log] asked the leader about epoch -1, but its log has "
                        "no epoch"),
    (AsksNewer, "[a prefix of the leader's log, same epoch] asked the leader about epoch 1, but "
                "its epochs are 0"),
    (BareOffset, "[empty follower log] on_become_follower(view) returned int 0, expected a "
                 "TruncateTo or an AskLeader"),
    (TrustsTheAnswer, "[leader's log has no epochs (old message format)] on_epoch_end(view, "
                      "asked=0, leader_epoch=-1, leader_end_offset=-1) raised KeyError: 0"),
    (CoinFlip, "not deterministic"),
])
def test_planted_replication_bugs_are_caught(cls: type, expected: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_replication(cls)
    assert str(caught.value).startswith(f"{cls.__qualname__} does not honour the replication "
                                        "contract")
    assert any(expected in problem for problem in caught.value.problems)


@pytest.mark.parametrize(("cls", "expected"), [
    (BareOffset, "the run raised AttributeError: 'int' object has no attribute 'offset'"),
    (OffByOne, "on_become_follower for a follower with LEO 0, HW 0, latest epoch -1: truncates "
               "to -1: offsets are never negative"),
    (AsksNewer, "asked the leader about epoch 1, but its latest epoch is 0"),
    (CoinFlip, "not deterministic: the same run twice wrote different event logs"),
])
def test_the_model_run_judges_the_decisions_the_model_asks_for(cls: type, expected: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_replication(cls)
    assert any(problem.startswith("[model: 3 brokers") and expected in problem
               for problem in caught.value.problems)

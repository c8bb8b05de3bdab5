"""The replication contract, checked by driving a strategy as a replica fetcher does
(rig/cluster/fetcher.py): `on_become_follower` with what the replica knows, then, for as long as it
asks, the leader's OffsetsForLeaderEpoch answer to `on_epoch_end`, until it truncates.

The standard cases are pairs of logs that real leadership histories produce (docs/kafka.md §9 and
KIP-101's and KIP-279's examples): the follower's epochs, LEO, high watermark and log start
offset, and the leader's epochs and LEO, answered by the model's own leader-epoch cache. The rules
hold for every era's rule of where to truncate, high watermark and leader epoch alike:
- a decision is a TruncateTo or an AskLeader; no call raises;
- the truncation offset is an int between the follower's log start offset and its LEO: never
  above the LEO (the Protocol's invariant; the model would clamp it), never negative, and never
  below the log start offset (what lies below was deleted by retention; the follower's log
  start, its HW and every answer it can be given are at or above it);
- an AskLeader asks about one of the follower's own epochs (0 ≤ epoch ≤ its latest), and each new
  question after an answer asks an older epoch than the one before (KIP-279 walks back; asking
  the same again gets the same answer, so the partition would never be fetched);
- after the leader answered with an epoch and its end offset, the truncation is at or below that
  end offset (§9: "truncates to min(that, its LEO)"): the follower's records past it are not the
  leader's;
- the same view gives the same decisions, on one instance and on a fresh one.
Then the same rules on the decisions of a short run of the real model (_replication_run.py).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rig.strategies import registry
from rig.strategies.replication.base import AskLeader, FollowerView, TruncateTo
from rig.testing._common import ConformanceError, Report, create, static_problems
from rig.testing._replication_rules import _check_question, _check_truncation, _Stop
from rig.testing._replication_run import CASE, check_replication_model

MAX_ROUNDS = 64  # OffsetsForLeaderEpoch round trips before the kit calls it a loop


@dataclass(frozen=True)
class LogPair:
    """A follower's log and its new leader's, as a leadership history left them."""

    label: str
    follower_epochs: tuple[tuple[int, int], ...]  # (epoch, start offset), ascending
    follower_leo: int
    follower_hw: int
    leader_epochs: tuple[tuple[int, int], ...]
    leader_leo: int
    follower_log_start: int = 0


STANDARD_CASES: tuple[LogPair, ...] = (
    LogPair("empty follower log", (), 0, 0, ((0, 0),), 10),
    LogPair("no epochs in the follower's log (old message format)", (), 50, 40,
            ((3, 60),), 80),
    LogPair("leader's log has no epochs (old message format)", ((0, 0),), 50, 40, (), 80),
    LogPair("a prefix of the leader's log, same epoch", ((0, 0),), 40, 30, ((0, 0),), 100),
    LogPair("caught up with the old leader, which leads again", ((0, 0), (1, 50)), 80, 80,
            ((0, 0), (1, 50), (2, 80)), 80),
    LogPair("KIP-101 case 1: a record above its HW, leader unchanged", ((0, 0),), 2, 1,
            ((0, 0), (1, 2)), 2),
    LogPair("KIP-101 case 2: the new leader lost offset 1 and wrote another", ((0, 0),), 2, 2,
            ((0, 0), (1, 1)), 2),
    LogPair("checkpointed HW above the LEO after a power loss", ((0, 0),), 1, 2,
            ((0, 0), (1, 2)), 3),
    LogPair("more of the last epoch than the new leader had", ((2, 0),), 100, 60,
            ((2, 0), (3, 70)), 120),
    LogPair("KIP-279: the leader never had the follower's latest epoch", ((1, 0), (3, 50)), 80, 40,
            ((1, 0), (2, 40), (4, 60)), 90),
    LogPair("head deleted by retention (log start 500)", ((4, 500),), 900, 800,
            ((2, 0), (4, 300), (5, 850)), 1000, follower_log_start=500),
    LogPair("head deleted, KIP-279 walk back (log start 500)", ((3, 500), (5, 650)), 700, 600,
            ((3, 0), (4, 640), (6, 660)), 800, follower_log_start=500),
    LogPair("many epochs, diverged at the first", tuple((e, 10 * e) for e in range(0, 40, 2)), 400,
            5, ((0, 0), *((e, 5 + 10 * e) for e in range(1, 41, 2))), 500),
)


def _logs(case: LogPair) -> tuple[Any, Any]:
    """The two logs, as the model keeps them (its leader-epoch cache answers the questions)."""
    from rig.cluster.log import Log  # the model stays out of `import rig.testing`

    follower = Log(epochs=list(case.follower_epochs), log_end_offset=case.follower_leo,
                   log_start_offset=case.follower_log_start, flushed=case.follower_leo)
    leader = Log(epochs=list(case.leader_epochs), log_end_offset=case.leader_leo,
                 flushed=case.leader_leo)
    return follower, leader


def _view(case: LogPair, follower: Any) -> FollowerView:
    return FollowerView(case.follower_leo, case.follower_hw, follower.latest_epoch,
                        follower.end_offset_for_epoch)


def _run_case(instance: Any, case: LogPair, problems: list[str]) -> list[Any]:
    """Drive one becoming-follower to its truncation; the decisions, in order."""
    tag = f"[{case.label}]"
    follower, leader = _logs(case)
    view = _view(case, follower)
    own = (f"its epochs are {', '.join(str(e) for e, _ in case.follower_epochs)}"
           if case.follower_epochs else "its log has no epoch")
    decisions: list[Any] = []

    def call(what: str, method: str, *args: Any) -> Any:
        try:
            decision = getattr(instance, method)(*args)
        except Exception as exc:
            problems.append(f"{tag} {what} raised {registry.describe_exception(exc)}")
            raise _Stop from None
        decisions.append(decision)
        if not isinstance(decision, (TruncateTo, AskLeader)):
            problems.append(f"{tag} {what} returned {type(decision).__name__} {decision!r}, "
                            "expected a TruncateTo or an AskLeader")
            raise _Stop
        return decision

    try:
        decision = call("on_become_follower(view)", "on_become_follower", view)
        again = call("on_become_follower(view), asked again", "on_become_follower", view)
        decisions.pop()
        if again != decision:
            problems.append(f"{tag} not deterministic: on_become_follower answered {decision}, "
                            f"then {again} for the same view")
        previous: int | None = None
        answer: tuple[int, int] | None = None
        for _round in range(MAX_ROUNDS):
            if isinstance(decision, TruncateTo):
                _check_truncation(tag, view, case.follower_log_start, decision, answer, problems)
                return decisions
            asked = decision.epoch
            _check_question(tag, view, own, asked, previous, problems)
            answer = leader.end_offset_for_epoch(asked)
            what = (f"on_epoch_end(view, asked={asked}, leader_epoch={answer[0]}, "
                    f"leader_end_offset={answer[1]})")
            decision = call(what, "on_epoch_end", view, asked, *answer)
            previous = asked
        problems.append(f"{tag} still asking the leader after {MAX_ROUNDS} answers: it never "
                        "truncates, so the partition is never fetched")
    except _Stop:
        pass
    return decisions


def check_replication(cls: Any, **options: Any) -> Report:
    """Check a replication strategy class against the replication contract; raise
    ConformanceError listing every problem, or return what was checked.

    On each standard pair of logs (empty, no epochs, a prefix of the leader's, KIP-101's two
    failures, a HW above the LEO after a power loss, KIP-279's unknown epoch, logs whose head
    retention deleted, twenty epochs) the kit plays the fetcher: it asks `on_become_follower`
    (twice: the same answer), answers every AskLeader with the leader's OffsetsForLeaderEpoch
    answer, and judges the truncation: between the log start offset and the LEO, at or below
    the leader's end offset when the leader gave one, after questions about the follower's own
    epochs, each older than the last. Then every case again on a fresh instance with the global
    random reseeded: the same decisions. Last, the real model: leaders crash and lose power
    under acks=all traffic; every decision the model asks for is judged by the same rules,
    every follower must be back in sync at the end, no epoch may have two leaders, and the run
    twice must write the same event log.
    """
    problems = static_problems("replication", cls)
    if problems:
        raise ConformanceError("replication", cls, problems)
    report = Report("replication", str(getattr(cls, "name", cls.__qualname__)))
    runs: list[list[list[Any]]] = []
    for seed in (1, 2):
        instance, trouble = create("replication", cls, options)
        if instance is None:
            raise ConformanceError("replication", cls, trouble)
        random.seed(seed)  # a strategy drawing from the global random diverges between runs
        found: list[str] = []
        runs.append([_run_case(instance, case, found) for case in STANDARD_CASES])
        if seed == 1:
            problems += found
    for case, first, again in zip(STANDARD_CASES, *runs, strict=True):
        if first != again:
            problems.append(f"[{case.label}] not deterministic: a fresh instance decided "
                            f"{_show(again)}, the first {_show(first)} (take no randomness from "
                            "the global random or the clock)")
    report.cases += [case.label for case in STANDARD_CASES]
    report.cases.append("every case again on a fresh instance, decision for decision")
    found, calls = check_replication_model(cls, options)
    problems += found
    asked = sum(call.startswith("on_epoch_end") for call in calls)
    report.cases += [f"{CASE[1:-1]}: {len(calls) - asked} on_become_follower and {asked} "
                     "on_epoch_end decisions judged, every follower back in sync, one leader "
                     "per epoch",
                     "the model run twice, byte for byte"]
    if problems:
        raise ConformanceError("replication", cls, problems)
    return report


def _show(decisions: Sequence[Any]) -> str:
    return " → ".join(map(str, decisions)) or "nothing"

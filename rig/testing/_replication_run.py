"""The replication contract in the real model: leaders crash and lose power under acks=all traffic
and come back as followers. Every decision the strategy makes there is judged by the same rules
as the standard cases (on the views the model really builds), every follower must settle back in
sync, no epoch may have two leaders, and the run twice must write the same event log.

Acknowledged-record loss and divergence are not judged here: they are what the pre-0.11 rule
(hw-truncation) is in rig to show (scenarios/kip101-*.yaml)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from rig.strategies import registry
from rig.strategies.base import api_version_of
from rig.strategies.replication.base import AskLeader, FollowerView, TruncateTo
from rig.testing._model import (
    failed_checks,
    run_model,
    same_log_problem,
    settled_problem,
    strategy_ref,
)
from rig.testing._replication_rules import _check_question, _check_truncation, _Stop

CASE = ("[model: 3 brokers, 200 records/s acks=all; leader 0 crashes at 5 s for 10 s, leader 1 "
        "loses power at 22 s for 5 s]")


def _scenario(name: str, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "rig-testing-replication",
        "seed": 9,
        "duration": "40s",
        "kafka": "2.4",
        "cluster": {"brokers": 3,
                    "config": {"zookeeper.session.timeout.ms": "6s",
                               "min.insync.replicas": 1}},
        "topics": [{"name": "t", "partitions": 2, "replication_factor": 3,
                    "assignment": [[0, 1, 2], [1, 2, 0]]}],
        "workload": {"producers": [{"name": "app", "topic": "t", "rate": 200, "acks": "all",
                                    "linger": "100ms"}]},
        "faults": [
            {"kind": "crash", "broker": 0, "at": "5s", "restart_after": "10s",
             "description": "the leader of t-0 crashes"},
            {"kind": "power-loss", "broker": 1, "at": "22s", "restart_after": "5s",
             "description": "the leader of t-1 loses power"},
        ],
        "strategies": {"replication": strategy_ref(name, options)},
    }


def _judging(cls: Any, problems: list[str], calls: list[str]) -> type:
    """`cls` behind a recorder that judges each decision as the kit's standard cases do."""

    def judge(view: FollowerView, decision: Any, asked: int | None,
              answer: tuple[int, int] | None) -> None:
        what = (f"on_epoch_end(asked={asked}, leader_epoch={answer[0]}, "
                f"leader_end_offset={answer[1]})" if answer is not None
                else "on_become_follower")
        calls.append(what)
        tag = (f"{CASE} {what} for a follower with LEO {view.log_end_offset}, HW "
               f"{view.high_watermark}, latest epoch {view.latest_epoch}:")
        try:
            if isinstance(decision, TruncateTo):
                _check_truncation(tag, view, 0, decision, answer, problems)
            elif isinstance(decision, AskLeader):
                _check_question(tag, view, f"its latest epoch is {view.latest_epoch}",
                                decision.epoch, asked, problems)
            else:
                problems.append(f"{tag} returned {type(decision).__name__} {decision!r}, "
                                "expected a TruncateTo or an AskLeader")
        except _Stop:
            pass

    class Judged:
        name = getattr(cls, "name", cls.__qualname__)
        description = getattr(cls, "description", "")
        api_version = api_version_of(cls)

        def __init__(self, **options: Any):
            self.inner = cls(**options)

        def on_become_follower(self, view: FollowerView) -> Any:
            decision = self.inner.on_become_follower(view)
            judge(view, decision, None, None)
            return decision

        def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                         leader_end_offset: int) -> Any:
            decision = self.inner.on_epoch_end(view, asked, leader_epoch, leader_end_offset)
            judge(view, decision, asked, (leader_epoch, leader_end_offset))
            return decision

    Judged.__qualname__ = Judged.__name__ = f"Judged{getattr(cls, '__name__', 'Strategy')}"
    Judged.__module__ = getattr(cls, "__module__", __name__)
    return Judged


def check_replication_model(cls: Any, options: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The problems found, and the calls the model made (to show what was exercised)."""
    problems: list[str] = []
    calls: list[str] = []
    runs = []
    with tempfile.TemporaryDirectory(prefix="rig-testing-") as tmp:
        for label in ("failover", "failover-again"):
            found: list[str] = []
            made: list[str] = []
            with registry.temporarily("replication", _judging(cls, found, made)) as name:
                run, trouble = run_model(_scenario(name, options), Path(tmp), label, CASE)
            runs.append(run)
            if label == "failover":
                problems += trouble + found
                calls += made
                if run is not None:
                    problems += (failed_checks(run, ("one-leader-per-epoch",), CASE)
                                 + settled_problem(run, CASE))
        problems += same_log_problem(runs[0], runs[1], CASE)
    return problems, calls

"""The isr contract in the real model: a follower crashes under steady acks=all traffic and comes
back. Its leaders must take it out of their ISRs by themselves within ten lag times (its
ZooKeeper session outlives them, so the controller acts only later), let it back in once it has
caught up after its restart (once that session expired: a process started inside it cannot
register), and the run must end settled, safe, and the same twice."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from rig.strategies import registry
from rig.testing._model import (
    ModelRun,
    failed_checks,
    run_model,
    same_log_problem,
    settled_problem,
    strategy_ref,
)

LAG_MS = 1000
CRASH_MS = 5000
DOWN_MS = 15 * LAG_MS
DEAD = 2
PARTITIONS = ("t", 0), ("t", 1)
CASE = (f"[model: 3 brokers, 200 records/s acks=all, follower {DEAD} crashes at "
        f"{CRASH_MS // 1000} s for {DOWN_MS // 1000} s, lag {LAG_MS} ms]")
SAFETY = ("no-acked-loss", "replicas-agree", "one-leader-per-epoch")


def _scenario(name: str, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "rig-testing-isr",
        "seed": 7,
        "duration": "30s",
        "kafka": "2.4",
        "cluster": {"brokers": 3,
                    "config": {"replica.lag.time.max.ms": f"{LAG_MS}ms",
                               "zookeeper.session.timeout.ms": "12s",
                               "min.insync.replicas": 1}},
        "topics": [{"name": "t", "partitions": 2, "replication_factor": 3,
                    "assignment": [[0, 1, DEAD], [1, 0, DEAD]]}],
        "workload": {"producers": [{"name": "app", "topic": "t", "rate": 200, "acks": "all",
                                    "linger": "100ms"}]},
        "faults": [{"kind": "crash", "broker": DEAD, "at": f"{CRASH_MS}ms",
                    "restart_after": f"{DOWN_MS}ms", "description": "a follower crashes"}],
        "strategies": {"isr": strategy_ref(name, options)},
    }


def _shrink_problems(run: ModelRun) -> list[str]:
    problems = []
    deadline = CRASH_MS + 10 * LAG_MS
    for topic, partition in PARTITIONS:
        shrinks = [e for e in run.events if e["event"] == "isr.shrink" and e["topic"] == topic
                   and e["partition"] == partition and DEAD in e.get("removed", ())
                   and e["t_ms"] >= CRASH_MS]
        first = shrinks[0] if shrinks else None
        if first is None or first["t_ms"] > deadline:
            when = f"only at {first['t_ms']:g} ms, by the {first.get('by')}" if first else "never"
            problems.append(f"{CASE} the dead follower left the ISR of {topic}-{partition} "
                            f"{when}: a follower that stops fetching leaves the ISR within ten "
                            f"lag times (by {deadline} ms; docs/kafka.md §10)")
        elif first.get("by") != "leader":
            problems.append(f"{CASE} {topic}-{partition}: the dead follower was removed by the "
                            f"{first.get('by')}, not by its leader's isr-expiration task")
    return problems


def check_isr_model(cls: Any, options: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rig-testing-") as tmp, \
            registry.temporarily("isr", cls) as name:
        runs = []
        for label in ("crash", "crash-again"):
            run, trouble = run_model(_scenario(name, options), Path(tmp), label, CASE)
            runs.append(run)
            if label == "crash":
                problems += trouble
                if run is not None:
                    problems += (failed_checks(run, SAFETY, CASE) + _shrink_problems(run)
                                 + settled_problem(run, CASE))
        problems += same_log_problem(runs[0], runs[1], CASE)
    return problems

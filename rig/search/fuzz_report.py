"""What a `rig fuzz` session found, and fuzz.json, the report it writes: the options, each
variant's outcome (its runs, the violation shrunk and replayed, the runs left unsettled) and the
session's (rig.search.fuzz runs it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig._version import __version__
from rig.search.bounds import FuzzBounds
from rig.search.cases import CaseResult
from rig.search.draw import Fault, as_yaml_faults
from rig.search.parallel import Tally
from rig.search.shrink import Shrunk
from rig.worker_processes import all_cores

MARKER = "fuzz.json"
# fuzz.json keys whose values depend on the machine, its load or the number of workers; every
# other key is a function of the inputs and of the runs done (the `command` echoes the input).
TIMING_KEYS = ("wall_seconds", "runs_per_second", "speed")


@dataclass
class FuzzOptions:
    runs: int | None  # None: until a violation (--until-violation) or the time budget
    seed: int = 0
    variants: Sequence[str] = ()
    out: Path | None = None
    spark_master: str | None = None
    shrink_budget: int = 120
    command: str = ""
    workers: int | None = None  # local processes; None: every core
    until_violation: bool = False
    time_budget_s: float | None = None  # the fuzz runs of the whole session (all variants)


@dataclass
class Replay:
    """A written scenario run again from its file: does it give the run's event log?"""

    file: Path
    expected_sha256: str
    replayed_sha256: str
    failed: list[str]

    @property
    def reproduced(self) -> bool:
        return self.expected_sha256 == self.replayed_sha256

    def as_json(self) -> dict[str, Any]:
        return {"file": str(self.file), "events_sha256": self.expected_sha256,
                "replayed_sha256": self.replayed_sha256, "reproduced": self.reproduced,
                "failed": self.failed}


@dataclass
class VariantOutcome:
    variant: str
    runs_done: int
    wall_s: float
    found: CaseResult | None = None
    violating_runs: list[int] = field(default_factory=list)
    minimal: list[Fault] = field(default_factory=list)
    minimal_file: Path | None = None
    shrink_attempts: int = 0  # runs the shrink simulated (its 1-minimality proof included)
    tally: Tally = field(default_factory=Tally)
    workers: int = 1
    duration_ms: int = 0
    shrunk: Shrunk | None = None
    shrink_wall_s: float = 0.0
    replays: dict[str, Replay] = field(default_factory=dict)
    error: str | None = None  # a violation rig could not reproduce from what it wrote
    unsettled_file: Path | None = None  # the first run the quiesce left unsettled, as a scenario

    @property
    def simulated_s(self) -> float:
        """The runs' simulated seconds, counting each run's duration (not its quiesce)."""
        return self.runs_done * self.duration_ms / 1000

    def speed(self) -> dict[str, Any]:
        wall, cpu = self.wall_s, self.tally.cpu_s
        per_wall = self.simulated_s / wall if wall else None
        return {
            "workers": self.workers,
            "wall_seconds": round(wall, 3),
            "runs_per_second": round(self.runs_done / wall, 2) if wall else None,
            "simulated_seconds_per_wall_second": None if per_wall is None else round(per_wall, 1),
            "simulated_seconds_per_wall_second_per_worker": (
                None if per_wall is None else round(per_wall / self.workers, 1)),
            "cpu_seconds": round(cpu, 3),
            "simulated_seconds_per_cpu_second": round(self.simulated_s / cpu, 1) if cpu else None,
            "shrink_and_replay_wall_seconds": round(self.shrink_wall_s, 3),
        }


@dataclass
class FuzzOutcome:
    out: Path
    variants: list[VariantOutcome]

    @property
    def exit_code(self) -> int:
        """3: a violation did not replay from its written scenario; 1: a violation; 2: a worker
        died, so fewer runs were done than asked; else 0."""
        if any(v.error is not None for v in self.variants):
            return 3
        if any(v.found is not None for v in self.variants):
            return 1
        return 2 if any(v.tally.stopped_by == "worker-lost" for v in self.variants) else 0


def variant_report(o: VariantOutcome, b: FuzzBounds, options: FuzzOptions,
                    file: str) -> dict[str, Any]:
    t = o.tally
    reproduce = (f"rig fuzz {file} --variant {o.variant} --seed {options.seed} "
                 f"--runs {o.runs_done}") if o.variant != "default" else (
        f"rig fuzz {file} --seed {options.seed} --runs {o.runs_done}")
    entry: dict[str, Any] = {
        "runs_done": o.runs_done,
        "run_indices": {"first": 0, "last": o.runs_done - 1} if o.runs_done else None,
        "stopped_by": t.stopped_by,
        "reproduce": reproduce,
        "wall_seconds": round(o.wall_s, 3),
        "runs_per_second": round(o.runs_done / o.wall_s, 2) if o.wall_s else None,
        "speed": o.speed(),
        "simulated_seconds": o.simulated_s,
        "simulated_seconds_with_quiesce": round(t.simulated_ms / 1000, 3),
        "events": t.events,
        "runs_sha256": t.runs_sha256,
        "violating_runs": [r.index for r in t.violating],
        # Liveness, which the checks do not judge: runs not settled when their quiesce ran out.
        "unsettled_runs": [r.index for r in t.unsettled],
        # … and of those, the ones that met a liveness defect of Kafka's own release
        # (rig.checks.kafka_defects): run index → the JIRAs.
        "unsettled_kafka_defects": {str(r.index): r.kafka_defects for r in t.unsettled
                                    if r.kafka_defects},
        "unsettled_scenario": str(o.unsettled_file) if o.unsettled_file else None,
        "bounds": {"kinds": list(b.kinds), "max_faults": b.max_faults,
                   "window_ms": list(b.window_ms), "hold_ms": list(b.hold_ms),
                   "brokers": list(b.brokers)},
        "violation": None,
    }
    if o.found is not None:
        shrunk = o.shrunk
        assert shrunk is not None
        entry["violation"] = {
            **o.found.as_json(),
            "violating_runs": o.violating_runs,
            "minimal_faults": as_yaml_faults(o.minimal),
            "minimal_scenario": str(o.minimal_file),
            "shrink_attempts": o.shrink_attempts,
            "one_minimal": shrunk.one_minimal,
            "shrink": {
                "runs": o.shrink_attempts,
                "budget": options.shrink_budget,
                "budget_exhausted": shrunk.budget_exhausted,
                "faults_found": len(o.found.faults),
                "faults_after_search": shrunk.searched,
                "faults_minimal": len(o.minimal),
                "one_minimal": shrunk.one_minimal,
                "one_minimal_runs": shrunk.one_minimal_runs,
            },
            "replay": {role: r.as_json() for role, r in o.replays.items()},
            "error": o.error,
        }
    return entry


def write_report(options: FuzzOptions, scenario: str, file: str,
                  outcomes: list[VariantOutcome], bounds: dict[str | None, FuzzBounds]) -> None:
    assert options.out is not None
    report = {
        "scenario": scenario, "file": file, "rig_version": __version__, "seed": options.seed,
        "runs": options.runs, "until_violation": options.until_violation,
        "time_budget_seconds": options.time_budget_s,
        "spark_master": options.spark_master, "command": options.command,
        "speed": {"workers": None if options.spark_master else (options.workers or all_cores()),
                  "cores": all_cores()},
        "variants": {
            o.variant: variant_report(o, b, options, file)
            for o, b in zip(outcomes, bounds.values(), strict=True)
        },
    }
    (options.out / MARKER).write_bytes(
        orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))


def kafka_defect_runs(unsettled: list[CaseResult]) -> str:
    """Which unsettled runs met a liveness defect of Kafka's own release, e.g. "runs 62, 80 met
    KAFKA-1120; run 78 met KAFKA-10706" ("" when none did)."""
    by_defect: dict[str, list[int]] = {}
    for run in unsettled:
        for defect in run.kafka_defects:
            by_defect.setdefault(defect, []).append(run.index)
    parts = []
    for defect, runs in by_defect.items():
        shown = ", ".join(map(str, runs[:5])) + (", …" if len(runs) > 5 else "")
        parts.append(f"run{'s' if len(runs) > 1 else ''} {shown} met {defect}")
    return "; ".join(parts)

"""One fuzz case: a scenario variant with a drawn fault schedule, simulated and judged by the
safety checks. The same document, written out, is the runnable scenario that reproduces it.
"""

from __future__ import annotations

import copy
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rig.checks import Status
from rig.scenario.load import load_scenario
from rig.search.draw import Fault, as_yaml_faults
from rig.simulate import simulate

SAFETY_CHECKS = ("no-acked-loss", "replicas-agree", "one-leader-per-epoch")


@dataclass
class CaseResult:
    """What one case found: the failed safety checks (empty: none) and their first violations."""

    index: int
    seed: int
    faults: list[Fault]
    failed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0

    @property
    def violated(self) -> bool:
        return bool(self.failed)

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "seed": self.seed, "faults": as_yaml_faults(self.faults),
                "failed": self.failed, "unknown": self.unknown,
                "violations": self.violations[:3], "events": self.events}


def case_document(data: dict[str, Any], variant: str | None, faults: list[Fault],
                  seed: int) -> dict[str, Any]:
    """The scenario `data` reduced to `variant`, with `faults` as its only faults and `seed`.

    The variant keeps its name (so summary.json speaks of `variants.<name>`) and its overrides,
    except faults; expectations and the fuzz block are dropped: the case is judged by the checks.
    """
    doc = {k: copy.deepcopy(v) for k, v in data.items() if k not in ("variants", "expect", "fuzz")}
    doc["seed"] = seed
    doc["faults"] = as_yaml_faults(faults)
    if variant is not None and data.get("variants"):
        override = {k: copy.deepcopy(v) for k, v in data["variants"][variant].items()
                    if k != "faults"}
        doc["variants"] = {variant: override}
    return doc


def dump_case(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def run_case(data: dict[str, Any], variant: str | None, faults: list[Fault], seed: int,
             index: int = 0) -> CaseResult:
    """Simulate one case (no event log is kept) and return what the safety checks found."""
    doc = case_document(data, variant, faults, seed)
    with tempfile.TemporaryDirectory(prefix="rig-fuzz-") as folder:
        path = Path(folder) / "case.yaml"
        path.write_text(dump_case(doc), encoding="utf-8")
        spec = load_scenario(path).variants[0]
        result = simulate(spec, Path(os.devnull), scenario=str(doc.get("name", "")))
    case = CaseResult(index=index, seed=seed, faults=faults, events=result.events)
    for check in result.checks:
        if check.name not in SAFETY_CHECKS:
            continue
        if check.status is Status.FAILED:
            case.failed.append(check.name)
            case.violations.extend(check.violations[:3])
        elif check.status is Status.UNKNOWN:
            case.unknown.append(check.name)
    return case

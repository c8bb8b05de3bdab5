"""One fuzz case: a scenario variant with a drawn fault schedule, simulated and judged by the
safety checks. The same document, written out, is the runnable scenario that reproduces it.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

import orjson
import yaml

from rig.checks import Status
from rig.errors import ScenarioError
from rig.events.log import HashingSink
from rig.scenario.faults import read_faults
from rig.scenario.load import load_scenario
from rig.scenario.model import VariantSpec
from rig.scenario.problems import Collector
from rig.scenario.source import load_yaml_file
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
    events_sha256: str = ""  # of the event log the case writes (HashingSink: never written)
    log_bytes: int = 0
    simulated_ms: float = 0.0  # the simulated time of its last event, the quiesce included
    cpu_s: float = 0.0  # CPU time of the simulation: a timing figure, not part of the result
    settled: bool = True  # the quiesce ended settled (liveness: reported, not a violation)
    kafka_defects: list[str] = field(default_factory=list)  # Kafka's own, met (e.g. KAFKA-1120)

    @property
    def violated(self) -> bool:
        return bool(self.failed)

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "seed": self.seed, "faults": as_yaml_faults(self.faults),
                "failed": self.failed, "unknown": self.unknown,
                "violations": self.violations[:3], "events": self.events,
                "events_sha256": self.events_sha256, "settled": self.settled,
                "kafka_defects": self.kafka_defects}


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


def write_case(path: Path, data: dict[str, Any], variant: str | None, faults: list[Fault],
               seed: int, *, name: str, header: str, description: str | None = None) -> Path:
    """Write one case as a scenario file `rig run` reproduces: `header` (comment lines), then
    the case document named `name`."""
    doc = case_document(data, variant, faults, seed)
    doc["name"] = name
    if description is not None:
        doc["description"] = description
    path.write_text(header + dump_case(doc), encoding="utf-8")
    return path


class CaseCompiler:
    """Turns (faults, seed) into the variant `load_scenario` would give for the written case.

    The scenario is loaded, validated and resolved once (a case with no faults); each case then
    only compiles its faults with the loader's own code and swaps them and the seed in. Loading
    a YAML file per run cost more than set-up; what a case runs is unchanged: a case written to
    YAML and loaded gives an equal VariantSpec (tests/search/test_fuzz_speed.py checks it, and
    every violation is replayed from its written YAML before it is reported).
    """

    def __init__(self, data: dict[str, Any], variant: str | None):
        self.scenario = str(data.get("name", ""))
        doc = case_document(data, variant, [], 0)
        with tempfile.TemporaryDirectory(prefix="rig-fuzz-") as folder:
            path = Path(folder) / "case.yaml"
            path.write_text(dump_case(doc), encoding="utf-8")
            self._document = load_yaml_file(path)
            self.template = load_scenario(path).variants[0]

    def variant(self, faults: list[Fault], seed: int) -> VariantSpec:
        written = as_yaml_faults(faults)
        problems = Collector(self._document)
        template = self.template
        # (the topics too: a reassign fault names a topic and partition of the scenario's)
        compiled = read_faults({"topics": self._document.data.get("topics"), "faults": written},
                               template.brokers, template.duration_ms, problems,
                               template.producers, template.consumers, template.controllers)
        if problems.problems:
            raise ScenarioError(problems.problems)
        document = {**self.template.document, "seed": seed, "faults": written}
        return replace(self.template, seed=seed, faults=compiled, document=document)

    def run(self, faults: list[Fault], seed: int, index: int = 0) -> CaseResult:
        """Simulate one case, its event log digested (never written), judged by safety checks."""
        return judge(self.variant(faults, seed), self.scenario, faults, seed, index)


def judge(spec: VariantSpec, scenario: str, faults: list[Fault], seed: int,
          index: int = 0) -> CaseResult:
    """Simulate `spec` into a HashingSink; what the safety checks found and the log's digest."""
    sink = HashingSink()
    cpu = time.process_time()
    result = simulate(spec, Path(os.devnull), scenario=scenario, sink=cast(BinaryIO, sink))
    case = CaseResult(index=index, seed=seed, faults=faults, events=result.events,
                      events_sha256=sink.hexdigest(), log_bytes=sink.bytes,
                      simulated_ms=_last_t_ms(sink.last_line),
                      cpu_s=time.process_time() - cpu, settled=result.settled,
                      kafka_defects=list(result.kafka_defects))
    for check in result.checks:
        if check.name not in SAFETY_CHECKS:
            continue
        if check.status is Status.FAILED:
            case.failed.append(check.name)
            case.violations.extend(check.violations[:3])
        elif check.status is Status.UNKNOWN:
            case.unknown.append(check.name)
    return case


def _last_t_ms(line: bytes) -> float:
    """The simulated time of the run's last event (run.end: after the quiesce)."""
    if not line:
        return 0.0
    return float(orjson.loads(line)["t_ms"])


_compiled: dict[tuple[bytes, str | None], CaseCompiler] = {}


def compiler(data: dict[str, Any], variant: str | None) -> CaseCompiler:
    """The CaseCompiler of (data, variant), made once per process (a worker, a Spark executor)."""
    key = (orjson.dumps(data, option=orjson.OPT_SORT_KEYS), variant)
    found = _compiled.get(key)
    if found is None:
        found = _compiled[key] = CaseCompiler(data, variant)
    return found


def run_case(data: dict[str, Any], variant: str | None, faults: list[Fault], seed: int,
             index: int = 0) -> CaseResult:
    """Simulate one case (no event log is kept) and return what the safety checks found."""
    return compiler(data, variant).run(faults, seed, index)

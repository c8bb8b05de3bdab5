"""A whole-cluster test's run: one variant simulated into `tmp_path`, every safety check passed,
its event log read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from rig.scenario.load import load_scenario
from rig.scenario.model import VariantSpec
from rig.simulate import SimulationResult, simulate

# One partition of three replicas under acks=all load, reassigned to `target` at 5 s.
REASSIGN = """
name: reassign
duration: {duration}
kafka: "{kafka}"
cluster: {{brokers: {brokers}, config: {{min.insync.replicas: 2{config}}}}}
topics:
  - {{name: t, partitions: 1, replication_factor: 3, assignment: [{origin}]}}
workload:
  producers:
    - {{name: app, topic: t, rate: 300, keys: {{uniform: 100}}, acks: all, linger: 20ms}}
faults:
  - {{kind: reassign, topic: t, partition: 0, replicas: {target}, at: 5s}}
{more}
"""


# The cluster of the ZooKeeper fuzz runs the regression tests replay: two partitions of three
# replicas, min ISR 2, acks=all at 100 records/s for 12 s, then up to a minute to settle.
FUZZED = """
name: {name}
seed: {seed}
duration: 12s
quiesce: 60s
kafka: "{kafka}"
cluster:
  brokers: {brokers}
  config:
    min.insync.replicas: 2
    replica.lag.time.max.ms: 10s
    zookeeper.session.timeout.ms: 6s
topics:
  - {{name: t, partitions: 2, replication_factor: 3}}
workload:
  producers:
    - {{topic: t, rate: 100, acks: all, linger: 20ms}}
faults:
{faults}
"""


# The load of scenarios/fuzz-replication.yaml and fuzz-kraft.yaml, whose drawn cases the
# regression tests replay: one partition of three replicas, acks=all at 100 records/s.
FUZZ_LOAD = """\
topics:
  - {name: t, partitions: 1, replication_factor: 3}
workload:
  producers:
    - {topic: t, rate: 100, acks: all, linger: 20ms}
"""


def fuzzed_scenario(name: str, faults: str, *, kafka: str = "3.9", seed: int = 7,
                    brokers: int = 4) -> str:
    return FUZZED.format(name=name, faults=faults, kafka=kafka, seed=seed, brokers=brokers)


def reassign_scenario(*, kafka: str, target: str, more: str = "", duration: str = "30s",
                      brokers: int = 4, origin: str = "[0, 1, 2]", config: str = "") -> str:
    return REASSIGN.format(kafka=kafka, target=target, more=more, duration=duration,
                           brokers=brokers, origin=origin, config=config)


def checked_run(variant: VariantSpec, tmp_path: Path, scenario: str,
                ) -> tuple[list[dict[str, Any]], SimulationResult]:
    """The variant's events, in order, and its result; fails the test on any failed check."""
    log = tmp_path / "events.jsonl"
    result = simulate(variant, log, scenario=scenario)
    failed = [(c.name, len(c.violations), c.violations[:1]) for c in result.checks
              if c.status.value != "ok"]
    assert not failed, failed
    return [orjson.loads(line) for line in log.read_bytes().splitlines()], result


def simulate_variants(directory: Path, scenario: str,
                      only: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The events of every variant of `scenario` (YAML text), or of those in `only`."""
    path = directory / "scenario.yaml"
    path.write_text(scenario)
    runs = {}
    for spec in load_scenario(path, only_variants=only or []).variants:
        log = directory / f"{spec.name}.jsonl"
        simulate(spec, log)
        runs[spec.name] = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    return runs


def named(events: list[dict[str, Any]], *wanted: str) -> list[dict[str, Any]]:
    """The events of the kinds `wanted`, in order."""
    return [e for e in events if e["event"] in wanted]


def lifecycle_origin(deliver: Any) -> str:
    """The KRaft lifecycle function a message's delivery leads back to
    ("BrokerLifecycle._heartbeat.<locals>…", "BrokerLifecycle._register.<locals>…"; "" if
    none): the broker's channel to the controller holds it in its callbacks' closures."""
    seen, todo = set(), [deliver]
    while todo:
        fn = todo.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        name = getattr(fn, "__qualname__", "")
        if name.startswith(("BrokerLifecycle._heartbeat.", "BrokerLifecycle._register.")):
            return str(name)
        todo.extend(c.cell_contents for c in getattr(fn, "__closure__", None) or ()
                    if callable(c.cell_contents))
    return ""

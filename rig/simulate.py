"""Simulate one variant: build its cluster, run the kernel, write its event log.

This is the engine stage of the pipeline; it knows nothing of Spark or reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from rig.checks import CheckResult, default_checks
from rig.checks.kafka_defects import KafkaDefects
from rig.cluster.cluster import Cluster
from rig.cluster.wire import Meter
from rig.engine import Simulation, Streams
from rig.engine.heap import LongLivedModel
from rig.events import EventLog, names
from rig.faults import FaultSchedule
from rig.scenario.model import VariantSpec
from rig.strategies import registry
from rig.strategies.guard import RunContext, guard_all
from rig.workload import ConsumerGroup, Producer

Progress = Callable[[int, int], None]  # (simulated µs done, events written)


@dataclass
class SimulationResult:
    variant: str
    events: int
    steps: int
    wall_s: float
    sizes_verified: int
    checks: list[CheckResult]
    settled: bool = True  # whether the quiesce ended settled (run.quiesced): liveness, not safety
    # Kafka's own liveness defects the run met (rig.checks.kafka_defects), e.g. "KAFKA-10706"
    kafka_defects: tuple[str, ...] = ()


def _quiesce(cluster: Cluster, faults: FaultSchedule, limit_ms: int) -> bool:
    """Heal every fault, start again the brokers whose start failed, stop the producers, and
    let replication settle (up to `limit_ms`); whether it did."""
    if not cluster.producers and not faults.faults:
        return True  # nothing was disturbed: an idle run is settled as it is
    cluster.supervise()
    faults.heal_all()
    for producer in cluster.producers:
        producer.stop()
    sim = cluster.sim
    started = sim.now_us
    while sim.now_us - started < limit_ms * 1000 and not cluster.settled():
        sim.run(sim.now_us + 100_000)
    settled = cluster.settled()
    cluster.log.emit(names.RUN_QUIESCED, settled=settled, waited_ms=(sim.now_us - started) / 1000)
    return settled


def simulate(variant: VariantSpec, events_path: Path, *, scenario: str = "",
             allow_plugin_paths: bool = False,
             progress: Progress | None = None,
             sink: BinaryIO | None = None) -> SimulationResult:
    """Run `variant` for its duration and write its events to `events_path` (JSON lines).

    With `sink`, the events go there instead (the same bytes) and `events_path` is not opened:
    rig fuzz digests them with a HashingSink rather than writing a file.
    """
    strategies = {
        kind: registry.instantiate(kind, ref.name, dict(ref.options),
                                   allow_paths=allow_plugin_paths)
        for kind, ref in variant.strategies.items()}
    sim = Simulation()
    streams = Streams(variant.seed)
    checks = default_checks()
    started = time.perf_counter()
    if sink is None:
        events_path.parent.mkdir(parents=True, exist_ok=True)
    replicas = sum(topic.partitions * topic.replication_factor for topic in variant.topics)
    opened = (events_path.open("wb", buffering=1 << 20) if sink is None
              else nullcontext(sink))
    with opened as out, LongLivedModel(replicas) as heap:
        log = EventLog(out, lambda: sim.now_us / 1000, variant=variant.name)
        for check in checks:
            log.observe(check.observe, getattr(check, "events", None))
        defects = KafkaDefects()
        log.observe(defects.observe, defects.events)
        # The data plane's strategies; the control plane shows in its own events (a KRaft
        # controller.elected names its node and quorum epoch) and in the resolved scenario.
        log.emit(names.RUN_START, scenario=scenario, seed=variant.seed,
                 duration_ms=variant.duration_ms, fetch_version=variant.config.fetch_version,
                 strategies={kind: ref.name for kind, ref in variant.strategies.items()
                             if kind != "controller"})
        meter = Meter()
        # Every strategy runs behind its kind's contract checks (a StrategyFailure, exit 1).
        guarded = guard_all(strategies, variant, RunContext(
            scenario, variant.name, lambda: sim.now_us / 1000, log.settled_count))
        cluster = Cluster(variant, sim, streams, log, guarded, meter)
        cluster.build()
        faults = FaultSchedule(cluster, variant.faults)
        faults.arm()
        for index, spec in enumerate(variant.producers):
            producer = Producer(cluster, spec, index, streams.get(f"workload/producer/{index}"))
            cluster.producers.append(producer)
            producer.start()
        groups = [ConsumerGroup(cluster, spec) for spec in variant.consumers]
        cluster.start()
        for group in groups:
            group.start()
        heap.built()
        report = (lambda now_us: progress(now_us, log.settled_count())) if progress else None
        sim.run(variant.duration_ms * 1000, on_progress=report)
        settled = _quiesce(cluster, faults, variant.quiesce_ms)
        cluster.finish_coasting()
        for (src, dst, kind), (nbytes, messages) in sorted(
                cluster.transport.traffic.items(),
                key=lambda item: (str(item[0][0]), str(item[0][1]), item[0][2])):
            log.emit(names.NET_TRAFFIC, src=str(src), dst=str(dst), kind=kind, bytes=nbytes,
                     messages=messages)
        # The checks judge a read-only view of the end; what they found goes into the log
        # here, in the order found (they never write into the stream they observe).
        final = cluster.final_state()
        for check in checks:
            for event, fields in check.finish(final):
                log.emit(event, **fields)
        log.emit(names.RUN_END, events=log.count)
    return SimulationResult(variant.name, log.count, sim.steps, time.perf_counter() - started,
                            meter.verified, [check.result() for check in checks], settled,
                            tuple(defects.met))

"""A retried batch goes again when its retry.backoff.ms is over, even when nothing else drains
the producer. Found among `rig fuzz` runs that never settled (ZooKeeper 2.5): after the run's
last record, a batch refused NOT_ENOUGH_REPLICAS at 32,727.755 ms was due at 32,827.755 ms, but
that sum in milliseconds rounds to 32,827.755000000005, above the clock's 32,827.755 when the
drain scheduled for it ran: the batch stayed queued for ever and the cluster never settled. The
backoff is kept in integer microseconds now. (The fuzz case itself no longer meets the rounding:
its network partition goes through TCP's retransmission now. The case below does, on purpose:
with 0.377 ms links one refusal comes back at 32,706.804 ms.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named

# Broker 1, the only follower, crashes at 0.5 s; its 32 s session expires at 32 s and the
# controller shrinks the ISR below min.insync.replicas 2: the leader refuses the producer's 50
# records (made by 1.5 s) until broker 1 is back at 40.5 s.
SCENARIO = """
name: retry-after-the-last-record
seed: 5
duration: 60s
quiesce: 30s
kafka: "2.5"
network: {latency: 377us}
cluster: {brokers: 2, config: {min.insync.replicas: 2, zookeeper.session.timeout.ms: 32s}}
topics:
  - {name: t, assignment: [[0, 1]]}
workload:
  producers:
    - {name: app, topic: t, rate: 100, count: 50, start: 1s, acks: all}
faults:
  - {kind: crash, at: 500ms, broker: 1, restart_after: 40s}
"""


def test_a_retried_batch_goes_again_after_its_backoff_and_the_run_settles(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "retry-after-the-last-record")
    errors = named(events, names.PRODUCE_ERROR)
    assert errors and all(e["retrying"] and e["t_ms"] > 30_000 for e in errors)
    # One answer comes at an instant where float milliseconds + 100 round above the clock's
    # reading 100 ms later: the case the integer backoff is for.
    assert any(e["t_ms"] + 100 > (round(e["t_ms"] * 1000) + 100_000) / 1000 for e in errors)
    # Every refused batch is sent again retry.backoff.ms (100 ms) after its answer...
    requests = [e["t_ms"] for e in named(events, names.PRODUCE_REQUEST)]
    for error in errors:
        assert any(abs(t - error["t_ms"] - 100) < 0.5 for t in requests), error
    # ... and every batch is acknowledged in the end: nothing waits when the run settles.
    acked = {tuple(e["id"]) for e in named(events, names.PRODUCE_ACK)}
    assert {tuple(e["id"]) for e in errors} <= acked
    [quiesced] = named(events, names.RUN_QUIESCED)
    assert quiesced["settled"] is True

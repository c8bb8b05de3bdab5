"""A retried batch goes again when its retry.backoff.ms is over, even when nothing else drains
the producer. Found among `rig fuzz` runs that never settled (ZooKeeper 2.5): after the run's
last record, a batch refused NOT_ENOUGH_REPLICAS at 32,727.755 ms was due at 32,827.755 ms, but
that sum in milliseconds rounds to 32,827.755000000005, above the clock's 32,827.755 when the
drain scheduled for it ran: the batch stayed queued for ever (119 batches behind it) and the
cluster never settled. The backoff is kept in integer microseconds now."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, fuzzed_scenario, named

SCENARIO = fuzzed_scenario("retry-after-the-run", """\
  - {kind: controller-failover, at: 3843ms}
  - {kind: network-partition, at: 7140ms, groups: [[2], [0, 1, 3, zk]], heal_after: 1604ms}
  - {kind: fetcher-stuck, at: 7256ms, broker: 2, heal_after: 4381ms}""",
                           kafka="2.5", seed=1019464281, brokers=4)


def test_a_retried_batch_goes_again_after_its_backoff_and_the_run_settles(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "retry-after-the-run")
    errors = [e for e in named(events, names.PRODUCE_ERROR) if e["t_ms"] > 12_000]
    assert errors and all(e["retrying"] for e in errors)
    # Every refused batch is sent again retry.backoff.ms (100 ms) after its answer...
    requests = [e["t_ms"] for e in named(events, names.PRODUCE_REQUEST)]
    for error in errors:
        assert any(abs(t - error["t_ms"] - 100) < 0.5 for t in requests), error
    # ... and every batch is acknowledged in the end: nothing waits when the run settles.
    acked = {tuple(e["id"]) for e in named(events, names.PRODUCE_ACK)}
    assert {tuple(e["id"]) for e in errors} <= acked
    [quiesced] = named(events, names.RUN_QUIESCED)
    assert quiesced["settled"] is True

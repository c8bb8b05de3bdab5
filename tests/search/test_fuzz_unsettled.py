"""`rig fuzz` reports the runs its quiesce left unsettled (run.quiesced settled: false): not a
violation (the checks judge safety), but how this session's liveness defects were found (a
follower that stopped fetching, a controller never elected again, a stranded retry). fuzz.json
lists them, the screen says so, and the first is written as a scenario `rig run` reproduces."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import yaml
from typer.testing import CliRunner

from rig.cli import app
from rig.scenario.load import load_scenario
from rig.search.cases import CaseResult, judge
from rig.search.fuzz_report import kafka_defect_runs
from rig.simulate import simulate
from tests.cluster.simulated import named

runner = CliRunner()

# No time to settle: a run with a fault still open at its end, or a batch in flight, cannot be
# whole at the first look. With a minute, every run of these schedules settles.
SCENARIO = """
name: no-quiesce
duration: 6s
quiesce: {quiesce}
kafka: "3.9"
cluster:
  brokers: 3
  config: {{min.insync.replicas: 2}}
topics:
  - {{name: t, partitions: 1, replication_factor: 3}}
workload:
  producers:
    - {{topic: t, rate: 100, acks: all, linger: 20ms}}
fuzz:
  kinds: [crash, stall]
  max_faults: 2
  window: [1s, 5900ms]
  hold: [1s, 3s]
"""


def fuzz(tmp_path: Path, quiesce: str) -> tuple[str, dict[str, object], Path]:
    file = tmp_path / f"q{quiesce}.yaml"
    file.write_text(SCENARIO.format(quiesce=quiesce))
    out = tmp_path / f"out-{quiesce}"
    result = runner.invoke(app, ["fuzz", str(file), "--runs", "6", "--workers", "1",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    entry = json.loads((out / "fuzz.json").read_text())["variants"]["default"]
    return result.output, entry, out


def test_runs_left_unsettled_are_listed_and_the_first_is_written(tmp_path: Path) -> None:
    output, entry, out = fuzz(tmp_path, "0s")
    unsettled = entry["unsettled_runs"]
    assert unsettled and unsettled == sorted(unsettled) and entry["violating_runs"] == []
    assert entry["unsettled_scenario"] == str(out / "default-unsettled.yaml")
    assert entry["unsettled_kafka_defects"] == {}  # 3.9: no time to settle, not Kafka's defect
    assert "liveness defects of this Kafka release" not in output
    assert (f"default: {len(unsettled)} run{'s' if len(unsettled) != 1 else ''} not settled "
            f"when the quiesce ran out (run {unsettled[0]}") in output
    written = out / "default-unsettled.yaml"
    assert f"# Run {unsettled[0]} of" in written.read_text()
    assert "fuzz" not in yaml.safe_load(written.read_text())
    # `rig run`'s model of that file ends unsettled too: the same run.
    [variant] = load_scenario(written).variants
    log = tmp_path / "replay.jsonl"
    simulate(variant, log, scenario="replay")
    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    [quiesced] = named(events, "run.quiesced")
    assert quiesced["settled"] is False


def test_with_time_to_settle_none_is_listed(tmp_path: Path) -> None:
    output, entry, out = fuzz(tmp_path, "60s")
    assert entry["unsettled_runs"] == [] and entry["unsettled_scenario"] is None
    assert "not settled" not in output and not (out / "default-unsettled.yaml").exists()


# Found by a fuzz of consumers across unclean elections: broker 1, restarted, had led the idle
# partition at an epoch without writing to it; asked about that epoch, the new leader answers an
# older one whose end is the follower's log end, and before 2.7 the walk-back's truncation at
# the log end keeps the epoch (KAFKA-10706): the follower asks the same question for ever.
KAFKA_10706 = """
name: walk-back-at-log-end
seed: 7
duration: 12s
quiesce: 60s
kafka: "{kafka}"
cluster:
  brokers: 3
  config: {{replica.lag.time.max.ms: 4s, zookeeper.session.timeout.ms: 6s}}
topics:
  - {{name: t, partitions: 2, replication_factor: 2}}
  - {{name: idle, partitions: 1, replication_factor: 3}}
workload:
  producers:
    - {{topic: t, rate: 100, acks: 1, linger: 20ms}}
faults:
  - {{kind: zk-session-expiry, at: 2916ms, broker: 1}}
  - {{kind: controller-failover, at: 3378ms}}
  - {{kind: link, at: 6381ms, between: [0, 2], loss: 0.5, heal_after: 7462ms}}
  - {{kind: crash, at: 10853ms, broker: 1, restart_after: 9666ms}}
"""


def test_a_run_kafkas_own_defect_leaves_unsettled_says_which(tmp_path: Path) -> None:
    results = {}
    for kafka in ("2.4", "2.7"):
        file = tmp_path / f"k{kafka}.yaml"
        file.write_text(KAFKA_10706.format(kafka=kafka))
        results[kafka] = judge(load_scenario(file).variants[0], "k", [], 7)
    assert (results["2.4"].settled, results["2.4"].kafka_defects) == (False, ["KAFKA-10706"])
    assert (results["2.7"].settled, results["2.7"].kafka_defects) == (True, [])
    assert results["2.4"].as_json()["kafka_defects"] == ["KAFKA-10706"]


def test_the_screen_names_the_runs_each_defect_explains() -> None:
    runs = [CaseResult(i, 0, [], settled=False, kafka_defects=d) for i, d in
            ((3, ["KAFKA-1120"]), (5, []), (8, ["KAFKA-1120", "KAFKA-10706"]))]
    assert kafka_defect_runs(runs) == "runs 3, 8 met KAFKA-1120; run 8 met KAFKA-10706"
    assert kafka_defect_runs(runs[1:2]) == ""

"""The README's examples are real: its scenario tour validates, its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_scenario_tour_validates_and_runs(tmp_path: Path) -> None:
    [tour] = [block for block in re.findall(r"```yaml\n(.*?)```", README, re.S)
              if block.startswith("name: my-scenario")]
    path = tmp_path / "tour.yaml"
    path.write_text(tour, encoding="utf-8")
    scenario = load_scenario(path, sets=["duration=3s"])
    assert [v.name for v in scenario.variants] == ["v6", "v7"]
    v7 = scenario.variant("v7")
    simulate(v7, tmp_path / "v7.jsonl")
    assigned = {(e["topic"], e["partition"]): e["replicas"]
                for e in map(orjson.loads, (tmp_path / "v7.jsonl").read_bytes().splitlines())
                if e["event"] == "partition.assigned"}
    assert assigned[("pinned", 0)] == [0, 1] and assigned[("pinned", 1)] == [1, 2]
    assert len([k for k in assigned if k[0] == "orders"]) == 100


def test_the_makefile_targets_the_readme_names_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test", "quick", "bench"):
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_workload_and_fault_fragments_validate_inside_the_tour(tmp_path: Path) -> None:
    import yaml

    blocks = re.findall(r"```yaml\n(.*?)```", README, re.S)
    [tour] = [b for b in blocks if b.startswith("name: my-scenario")]
    [workload, consumers] = [b for b in blocks if b.startswith("workload:")]
    [trigger] = [b for b in blocks if b.startswith("faults:") and "\n    after:" in b]
    document = yaml.safe_load(tour)
    fragment = yaml.safe_load(workload)
    document["workload"] = fragment["workload"] | yaml.safe_load(consumers)["workload"]
    document["faults"] = fragment["faults"] + yaml.safe_load(trigger)["faults"]
    document["strategies"].update(fragment["strategies"])
    path = tmp_path / "tour.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    scenario = load_scenario(path)
    variant = scenario.variants[0]
    assert variant.producers[0].rate == 2000 and variant.producers[0].acks == -1
    assert [f.kind for f in variant.faults] == ["crash", "crash"]
    assert variant.faults[1].after_event == "replica.become_follower"
    assert variant.strategies["replication"].name == "leader-epoch"
    groups = [c.group for c in variant.consumers]
    assert groups[:2] == ["readers", "app-0001"] and groups[-1] == "app-1100"


def test_the_controlled_shutdown_and_client_partition_fragment_validates(tmp_path: Path) -> None:
    import yaml

    blocks = re.findall(r"```yaml\n(.*?)```", README, re.S)
    [tour] = [b for b in blocks if b.startswith("name: my-scenario")]
    [fragment] = [b for b in blocks if b.startswith("faults:") and "controlled-shutdown" in b]
    document = yaml.safe_load(tour)
    document["workload"] = {"producers": [{"name": "app", "topic": "orders", "rate": 10}],
                            "consumers": [{"group": "readers", "topic": "orders", "members": 2}]}
    document["faults"] = yaml.safe_load(fragment)["faults"]
    path = tmp_path / "tour.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    shutdown, partition = load_scenario(path).variants[0].faults
    assert shutdown.kind == "controlled-shutdown" and shutdown.brokers == (0,)
    assert partition.groups == (("producer-app", "consumer-readers-0"), (0, 1, 2, "zk"))


def test_the_run_directory_table_lists_every_file_rundir_names() -> None:
    from rig import rundir

    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in README.splitlines()
            if line.startswith("| `")}
    assert re.findall(r"`(\w+)`", rows["`metrics/*.json`"]) == list(rundir.METRIC_TABLES)
    for name in (rundir.RUN_JSON, rundir.SCENARIO, rundir.CHECKS, rundir.SUMMARY,
                 rundir.COMMAND, f"{rundir.ANALYSIS_DIR}/{rundir.EVENT_TABLE}"):
        assert f"`{name}`" in rows, name
    assert "| `rig analyze RUN_DIR" in README


def test_the_version_table_is_the_one_the_profiles_hold() -> None:
    from rig.scenario.version_table import rules_table

    table = README.split("<!-- profiles:begin -->\n", 1)[1].split("\n<!-- profiles:end -->", 1)[0]
    assert table == rules_table()


def test_every_version_rule_starts_at_the_oldest_profile() -> None:
    """A rule's first value holds from the oldest profile rig models: a rule that starts later
    would print a wrong first release in README's table and leave older profiles undefined."""
    from rig.scenario.profiles import VERSIONS
    from rig.scenario.version_rules import RULES

    assert [r.field for r in RULES if r.values[0][0] != VERSIONS[0]] == []

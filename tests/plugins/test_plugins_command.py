"""`rig plugins`: every strategy of every kind with its origin and description, text or JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rig.cli import app
from tests.plugins.conftest import Install

runner = CliRunner()

ACME = """
    import random
    from rig.strategies.placement.kafka import kafka_assignment

    class Spread:
        name = "spread"
        description = "Spreads things.\\nA second line that rig plugins does not show."

        def assign(self, brokers, topic, rng):
            return kafka_assignment(brokers, topic.partitions, topic.replication_factor, rng)
"""


def test_lists_every_kind_with_builtins_and_their_description() -> None:
    result = runner.invoke(app, ["plugins"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for kind in ("placement", "replication", "isr", "fetch_session", "compaction"):
        assert kind in lines
    kafka = next(line for line in lines if line.strip().startswith("kafka "))
    assert "built-in" in kafka and "AdminUtils" in kafka and kafka.endswith("[default]")
    assert any(line.strip().startswith("kraft-striped ") and "StripedReplicaPlacer" in line
               for line in lines)


def test_an_installed_plugin_shows_its_distribution_and_a_shadow_attempt_is_reported(
        install: Install) -> None:
    install("acme-strategies", "1.4.2",
            entry_points={"rig.placement": {"spread": "acme_spread:Spread",
                                            "kafka": "acme_spread:Spread"}},
            modules={"acme_spread": ACME})
    result = runner.invoke(app, ["plugins"])
    assert result.exit_code == 0, result.output
    spread = next(line for line in result.output.splitlines()
                  if line.strip().startswith("spread "))
    assert spread.split()[:3] == ["spread", "acme-strategies", "1.4.2"]
    assert spread.endswith("Spreads things.")
    assert ("ignored: placement strategy 'kafka' (acme_spread:Spread) from acme-strategies "
            "1.4.2: a built-in has this name, and plugins cannot shadow built-ins") in (
        result.output)


def test_json_has_origin_version_description_and_default() -> None:
    data = json.loads(runner.invoke(app, ["plugins", "--json"]).output)
    placement = {s["name"]: s for s in data["kinds"]["placement"]["strategies"]}
    assert data["kinds"]["placement"]["default"] == "kafka"
    assert placement["kraft-striped"]["origin"] == "built-in"
    assert placement["kraft-striped"]["distribution"] == "rig"
    assert placement["kraft-striped"]["api_version"] == 1
    assert placement["kraft-striped"]["ok"] is True
    assert set(data["kinds"]) == {"placement", "replication", "isr", "fetch_session",
                                  "compaction", "controller"}
    controllers = {s["name"]: s for s in data["kinds"]["controller"]["strategies"]}
    assert {"zookeeper", "kraft"} <= set(controllers)
    assert all(controllers[name]["ok"] for name in ("zookeeper", "kraft"))


def test_a_broken_plugin_is_listed_as_such_and_the_exit_code_says_so(install: Install) -> None:
    install("acme-broken", entry_points={"rig.fetch_session": {"broken": "acme_gone:Nothing"}},
            modules={"acme_gone": "x = 1\n"})
    result = runner.invoke(app, ["plugins"])
    assert result.exit_code == 2
    line = next(line for line in result.output.splitlines() if line.strip().startswith("broken"))
    assert "BROKEN: fetch_session strategy 'broken' (acme_gone:Nothing, from acme-broken 1.0): " \
           "acme_gone has no 'Nothing'" in line
    data = json.loads(runner.invoke(app, ["plugins", "--json"]).output)
    [broken] = [s for s in data["kinds"]["fetch_session"]["strategies"] if s["name"] == "broken"]
    assert broken["ok"] is False and "has no 'Nothing'" in broken["problem"]

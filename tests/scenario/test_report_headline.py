"""`report: {headline: [...]}`: the figures a scenario's report leads with, checked on load."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario
from rig.scenario.resolve import resolved_yaml
from tests.conftest import SMALL

Write = Callable[..., Path]


def test_headline_paths_are_kept_in_order_and_resolved(write_scenario: Write) -> None:
    text = SMALL + "report:\n  headline: [replication.offline_partition_seconds, produce.acked]\n"
    scenario = load_scenario(write_scenario(text))
    assert scenario.report_headline == ("replication.offline_partition_seconds",
                                        "produce.acked")
    # Not a variant key: no variant's document carries it.
    assert all("report" not in v.document for v in scenario.variants)
    assert "headline:\n  - replication.offline_partition_seconds" in resolved_yaml(scenario, "x")


def test_without_report_the_headline_is_empty(write_scenario: Write) -> None:
    assert load_scenario(write_scenario(SMALL)).report_headline == ()


@pytest.mark.parametrize(("paths", "message"), [
    ("[produce.aked_lost]", "$.report.headline[0]: 'produce.aked_lost' is not a key of a "
                            "variant's summary (summary.json variants.<name>); did you mean "
                            "'produce.acked_lost'?"),
    ("[produce.acked, isr]", "$.report.headline[1]: 'isr' is a group of metrics"),
    ("[variants.v7.produce.acked]", "$.report.headline[0]: 'variants.v7.produce.acked' is not "
                                    "a key of a variant's summary"),
])
def test_a_bad_headline_path_is_one_message(write_scenario: Write, paths: str,
                                            message: str) -> None:
    path = write_scenario(SMALL + f"report:\n  headline: {paths}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    [problem] = [str(p) for p in info.value.problems]
    assert f"{path}:" in problem and message in problem, problem


def test_a_variant_may_not_override_the_report(write_scenario: Write) -> None:
    text = SMALL.replace("strategies: {fetch_session: sessionless}",
                         "strategies: {fetch_session: sessionless}\n    report: {headline: []}")
    assert text != SMALL
    with pytest.raises(ScenarioError) as info:
        load_scenario(write_scenario(text))
    assert any("report" in str(p) for p in info.value.problems)

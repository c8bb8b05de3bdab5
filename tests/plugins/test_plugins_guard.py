"""A strategy that misbehaves mid-run stops it with one message naming the plugin, its kind, the
scenario, the simulated time and what the model asked; exit 1; the run so far is kept."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.errors import PluginError, StrategyFailure
from rig.scenario.load import load_scenario
from rig.scenario.model import BrokerSpec, TopicSpec
from rig.simulate import simulate
from rig.strategies import registry
from rig.strategies.fetch_session import SessionRequest
from rig.strategies.fetch_session.incremental import (
    Incremental,
    IncrementalCache,
    IncrementalClient,
)
from rig.strategies.placement.kafka import KafkaPlacement
from tests.conftest import SMALL
from tests.plugins.conftest import WriteModule

runner = CliRunner()
Write = Callable[..., Path]


class TwiceOnOneBroker(KafkaPlacement):
    name: ClassVar[str] = "twice"

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        result = super().assign(brokers, topic, rng)
        result[3] = (result[3][0], result[3][0])
        return result


class LateDictClient(IncrementalClient):
    """Fine for four requests, then answers a dict."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def next_request(self, partitions: Mapping[Any, None], dirty: Mapping[Any, None],
                     version: int) -> Any:
        self.sent += 1
        if self.sent > 4:
            return {"full": True}
        return super().next_request(partitions, dirty, version)


class LateDictSessions(Incremental):
    name: ClassVar[str] = "late-dict"

    def new_client(self) -> IncrementalClient:
        return LateDictClient()


class CrashingClient(IncrementalClient):
    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        raise ZeroDivisionError("division by zero")


class CrashingSessions(Incremental):
    name: ClassVar[str] = "crashing"

    def new_client(self) -> IncrementalClient:
        return CrashingClient()


class GreedySessions(Incremental):
    name: ClassVar[str] = "greedy"

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> IncrementalCache:
        return IncrementalCache(slots + 5, rng)


def _run(write_scenario: Write, tmp_path: Path, kind: str, cls: type,
         text: str = SMALL) -> StrategyFailure:
    with registry.temporarily(kind, cls, cls.name) as name:  # type: ignore[attr-defined]
        chosen = {"fetch_session": "incremental", kind: name}
        variant = load_scenario(write_scenario(text.replace(
            "strategies: {fetch_session: incremental}",
            "strategies: {" + ", ".join(f"{k}: {v}" for k, v in chosen.items()) + "}"))
        ).variant("v7")
        with pytest.raises(StrategyFailure) as failure:
            simulate(variant, tmp_path / "v7.jsonl", scenario="small")
    return failure.value


def test_an_invalid_assignment_names_plugin_kind_scenario_time_and_topic(
        write_scenario: Write, tmp_path: Path) -> None:
    failure = _run(write_scenario, tmp_path, "placement", TwiceOnOneBroker)
    assert str(failure).startswith(
        "placement strategy 'twice' (from rig.testing) broke its contract in scenario 'small', "
        "variant 'v7', at t=0 ms (after event #3), while placing topic 'test' (10 partitions, "
        "replication factor 2): partition 3 lists a broker twice")
    assert failure.exit_code == 1


def test_a_client_returning_nonsense_later_in_the_run(write_scenario: Write,
                                                      tmp_path: Path) -> None:
    failure = _run(write_scenario, tmp_path, "fetch_session", LateDictSessions)
    assert (failure.kind, failure.plugin, failure.scenario) == ("fetch_session", "late-dict",
                                                                "small")
    assert failure.t_ms > 1000 and failure.last_seq > 10
    assert "while session client #1 built its next Fetch request" in str(failure)
    assert "next_request returned a dict, expected a SessionRequest" in str(failure)
    # The event log up to the failure is on disk, ending before the failing request.
    lines = (tmp_path / "v7.jsonl").read_bytes().splitlines()
    assert len(lines) == failure.last_seq


def test_an_exception_in_a_plugin_says_which_and_where(write_scenario: Write,
                                                       tmp_path: Path) -> None:
    failure = _run(write_scenario, tmp_path, "fetch_session", CrashingSessions)
    assert "read a Fetch response (error 0" in str(failure)
    assert "raised ZeroDivisionError: division by zero (at " in str(failure)
    assert "test_plugins_guard.py:" in str(failure)


def test_a_cache_over_its_slots_is_stopped(write_scenario: Write, tmp_path: Path) -> None:
    text = SMALL.replace("  brokers: 2\n", "  brokers: 2\n  config:\n"
                         "    max.incremental.fetch.session.cache.slots: 1\n"
                         "    num.replica.fetchers: 3\n")
    failure = _run(write_scenario, tmp_path, "fetch_session", GreedySessions, text)
    assert "the cache holds 2 sessions with max.incremental.fetch.session.cache.slots = 1" in (
        str(failure))


def test_a_strategy_too_new_for_the_variants_fetch_version_is_refused_before_running(
        write_scenario: Write, tmp_path: Path) -> None:
    class NeedsV12(Incremental):
        name = "needs-v12"
        min_fetch_version = 12

    with registry.temporarily("fetch_session", NeedsV12, "needs-v12"):
        variant = load_scenario(write_scenario(SMALL.replace(
            "strategies: {fetch_session: incremental}",
            "strategies: {fetch_session: needs-v12}"))).variant("v7")
        with pytest.raises(PluginError, match=r"'needs-v12' needs Fetch v12 or later, but "
                                              r"variant 'v7' sends v7"):
            simulate(variant, tmp_path / "v7.jsonl")


BROKEN_MODULE = """
    from rig.strategies.placement.kafka import KafkaPlacement

    class Twice(KafkaPlacement):
        name = "twice"

        def assign(self, brokers, topic, rng):
            result = super().assign(brokers, topic, rng)
            return [(r[0], r[0]) for r in result]
"""


def _path_scenario(write_scenario: Write) -> Path:
    return write_scenario(SMALL.replace("strategies: {fetch_session: incremental}",
                                        "strategies: {fetch_session: incremental, "
                                        "placement: 'acme_twice:Twice'}"))


def test_rig_run_exits_1_keeps_the_partial_run_and_leaves_the_target_alone(
        write_scenario: Write, module: WriteModule, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import rig.analysis.spark

    # The plugin breaks v7's simulation, before any analysis: the test needs no Java. `rig run`
    # still boots Spark on a thread beside the simulation (when Java is there), and stops the
    # session after the failure unless this process had one before (pipeline._stop_after).
    monkeypatch.setattr(rig.analysis.spark, "check_java", lambda: None)
    module("acme_twice", BROKEN_MODULE)
    out = tmp_path / "runs" / "small"
    result = runner.invoke(app, ["run", str(_path_scenario(write_scenario)), "--out", str(out),
                                 "--allow-plugin-paths", "--quiet"])
    assert result.exit_code == 1, result.output
    message = result.output.strip().splitlines()[-1]
    # Only variant v7 uses the plugin: v6 ran first, whole, and is kept with v7's first events.
    assert message.startswith("error: placement strategy 'acme_twice:Twice' (from a "
                              "module:Class path) broke its contract in scenario 'small', "
                              "variant 'v7', at t=0 ms (after event #3), while placing topic "
                              "'test' (10 partitions, replication factor 2): partition 0 lists "
                              "a broker twice: [0, 0]")
    assert not out.exists()
    [kept] = (tmp_path / "runs").glob("small.failed-*")
    assert message.endswith(f"; the run so far is kept in {kept}")
    assert (kept / "events" / "v7.jsonl").read_bytes().count(b"\n") == 3
    assert b'"event":"run.end"' in (kept / "events" / "v6.jsonl").read_bytes()
    assert (kept / "run.json").exists() and (kept / "scenario.yaml").exists()


def test_rig_run_and_validate_refuse_a_code_path_without_the_flag(
        write_scenario: Write, tmp_path: Path) -> None:
    path = _path_scenario(write_scenario)
    run = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "o")])
    assert run.exit_code == 2
    assert "loading code named in a scenario file executes that code" in run.output
    assert "events in" not in run.output  # refused before variant v6 was simulated
    assert not any(p.name.startswith(".o.staging") for p in tmp_path.iterdir())
    check = runner.invoke(app, ["validate", str(path)])
    assert check.exit_code == 2
    assert f"{path}: $.strategies.placement: placement strategy 'acme_twice:Twice' is a code " in (
        check.output)


def test_validate_with_the_flag_loads_the_plugin_and_reports_its_problems(
        write_scenario: Write, module: WriteModule) -> None:
    path = _path_scenario(write_scenario)
    module("acme_twice", "class Twice:\n    name = 'twice'\n")
    result = runner.invoke(app, ["validate", "--allow-plugin-paths", str(path)])
    assert result.exit_code == 2
    assert ("placement strategy 'acme_twice:Twice' (from a module:Class path) does not fit the "
            "placement Protocol: class attribute 'description' (a str) is missing; method "
            "assign(brokers, topic, rng) is missing") in result.output


def test_validate_with_the_flag_accepts_a_good_plugin(write_scenario: Write,
                                                       module: WriteModule) -> None:
    module("acme_twice", BROKEN_MODULE.replace(
        'name = "twice"', 'name = "twice"\n        description = "d"'))
    result = runner.invoke(app, ["validate", "--allow-plugin-paths",
                                 str(_path_scenario(write_scenario))])
    assert result.exit_code == 0, result.output  # run-time nonsense is for the guard to find

"""`rig fuzz` on several workers: the same runs give the same fuzz.json (apart from its timing
keys) whatever the number of workers; --until-violation stops at the first violation in run
order; --time-budget is honoured and records runs that reproduce; a violation is replayed from
its written YAML and a replay that does not match is an error (exit 3), not a violation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.search import case_files
from rig.search.fuzz_report import TIMING_KEYS

runner = CliRunner()
SMALL = str(Path(__file__).parent / "data" / "fuzz-small.yaml")
# Seed 14 of fuzz-small first violates no-acked-loss at run 9 (shrunk to 2 faults: the
# controller's broker crashes, a follower's quick restart fails); replicas-agree fails with it,
# as a follower that finds the new leader's log end below its own halts its broker with its
# records kept (ReplicaFetcherThread.handleOffsetOutOfRange, unclean election off).
FIRST_VIOLATION = 9


def _fuzz(out: Path, *args: str) -> tuple[int, str, dict[str, Any]]:
    result = runner.invoke(app, ["fuzz", SMALL, "--seed", "14", "--out", str(out), *args])
    report = json.loads((out / "fuzz.json").read_text()) if (out / "fuzz.json").is_file() else {}
    return result.exit_code, result.output, report


def _untimed(report: dict[str, Any], out: Path) -> dict[str, Any]:
    """The report without its timing keys and the echo of the command line; paths relative."""
    text = json.dumps(report).replace(str(out), "<out>")
    clean: dict[str, Any] = json.loads(text)
    clean.pop("command")
    for key in TIMING_KEYS:
        clean.pop(key, None)
        for entry in clean["variants"].values():
            entry.pop(key, None)
    return clean


@pytest.fixture(scope="module")
def until_violation(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, Any]]:
    """The same --until-violation session on one worker (in process) and on two processes."""
    sessions = {}
    for workers in (1, 2):
        out = tmp_path_factory.mktemp("fz") / f"w{workers}"
        code, output, report = _fuzz(out, "--until-violation", "--runs", "40",
                                     "--workers", str(workers))
        assert code == 1, output
        assert "VIOLATION of no-acked-loss" in output and "1-minimal" in output
        sessions[workers] = (out, report)
    return sessions


@pytest.mark.slow
def test_one_or_two_workers_give_the_same_fuzz_json(
        until_violation: dict[int, tuple[Path, Any]]) -> None:
    (out1, one), (out2, two) = until_violation[1], until_violation[2]
    assert one["speed"]["workers"] == 1 and two["speed"]["workers"] == 2
    assert _untimed(one, out1) == _untimed(two, out2)
    for out in (out1, out2):
        assert (out / "default-minimal.yaml").read_text() == (
            out1 / "default-minimal.yaml").read_text().replace(str(out1), str(out))


@pytest.mark.slow
def test_until_violation_stops_at_the_first_violation_in_run_order(
        until_violation: dict[int, tuple[Path, Any]], tmp_path: Path) -> None:
    _, report = until_violation[2]
    entry = report["variants"]["default"]
    assert entry["stopped_by"] == "violation"
    assert entry["runs_done"] == FIRST_VIOLATION + 1
    assert entry["run_indices"] == {"first": 0, "last": FIRST_VIOLATION}
    assert entry["violating_runs"] == [FIRST_VIOLATION]
    assert entry["violation"]["index"] == FIRST_VIOLATION
    # Without --until-violation the same runs and more are done; the first violation is the same.
    code, output, full = _fuzz(tmp_path / "all", "--runs", str(FIRST_VIOLATION + 3),
                               "--workers", "2")
    assert code == 1, output
    everything = full["variants"]["default"]
    assert everything["runs_done"] == FIRST_VIOLATION + 3 and everything["stopped_by"] == "runs"
    assert everything["violating_runs"][0] == FIRST_VIOLATION
    assert everything["violation"]["faults"] == entry["violation"]["faults"]
    assert everything["violation"]["minimal_faults"] == entry["violation"]["minimal_faults"]


@pytest.mark.slow
def test_the_violation_is_1_minimal_and_replayed(
        until_violation: dict[int, tuple[Path, Any]]) -> None:
    out, report = until_violation[2]
    violation = report["variants"]["default"]["violation"]
    shrink = violation["shrink"]
    assert violation["one_minimal"] is True and shrink["one_minimal"] is True
    # The proof ran every one-fault drop of the result at least once, counted in the runs.
    assert shrink["one_minimal_runs"] >= len(violation["minimal_faults"]) >= 1
    assert violation["shrink_attempts"] == shrink["runs"] > shrink["one_minimal_runs"]
    assert violation["error"] is None
    for role in ("found", "minimal"):
        replay = violation["replay"][role]
        assert replay["reproduced"] is True
        assert replay["replayed_sha256"] == replay["events_sha256"]
        assert replay["failed"] == ["no-acked-loss", "replicas-agree"]
        assert Path(replay["file"]) == out / f"default-{role}.yaml"
    assert violation["replay"]["found"]["events_sha256"] == violation["events_sha256"]


@pytest.mark.slow
def test_a_time_budget_is_honoured_and_its_runs_reproduce(tmp_path: Path) -> None:
    code, output, report = _fuzz(tmp_path / "budget", "--time-budget", "4s", "--workers", "2")
    assert code in (0, 1), output
    entry = report["variants"]["default"]
    assert report["runs"] is None and report["time_budget_seconds"] == 4
    assert entry["stopped_by"] == "time-budget"
    # Runs started before the budget ran out finish (one run of fuzz-small takes well under 10 s
    # even on a loaded machine); nothing starts after it.
    assert entry["wall_seconds"] < 4 + 10
    done = entry["runs_done"]
    assert done >= 1 and entry["run_indices"] == {"first": 0, "last": done - 1}
    assert entry["reproduce"].endswith(f"--runs {done}")
    code, output, again = _fuzz(tmp_path / "again", "--runs", str(done), "--workers", "1")
    assert code == (1 if entry["violation"] else 0), output
    assert again["variants"]["default"]["runs_sha256"] == entry["runs_sha256"]
    assert again["variants"]["default"]["violating_runs"] == entry["violating_runs"]


@pytest.mark.slow
def test_a_replay_that_does_not_match_is_an_error(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    written = case_files.write_case

    def another_seed(path: Path, data: dict[str, Any], variant: str | None, faults: list[Any],
                     seed: int, **names: Any) -> Path:
        return written(path, data, variant, faults, seed + 1, **names)  # not what ran

    monkeypatch.setattr(case_files, "write_case", another_seed)
    code, output, report = _fuzz(tmp_path / "bad", "--runs", str(FIRST_VIOLATION + 1),
                                 "--workers", "1")
    assert code == 3, output
    assert "error:" in output and "does not reproduce run 9" in output
    violation = report["variants"]["default"]["violation"]
    assert violation["error"] and "does not reproduce" in violation["error"]
    assert violation["replay"]["minimal"]["reproduced"] is False


def test_bad_worker_and_budget_options_exit_2(tmp_path: Path) -> None:
    code, output, _ = _fuzz(tmp_path / "a", "--time-budget", "soon")
    assert code == 2 and "--time-budget" in output
    code, output, _ = _fuzz(tmp_path / "b", "--time-budget", "0s")
    assert code == 2 and "--time-budget must be more than 0" in output
    code, output, _ = _fuzz(tmp_path / "c", "--time-budget", "1m", "--spark-master", "local[1]")
    assert code == 2 and "with --spark-master, give --runs" in output
    code, output, _ = _fuzz(tmp_path / "d", "--workers", "0")
    assert code == 2

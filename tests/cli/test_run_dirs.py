"""`rig run` never loses files: foreign folders are refused, earlier runs are kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rig import pipeline
from rig.errors import RunDirError
from rig.pipeline import RunOptions, is_run_dir, run
from rig.progress import Progress
from tests.conftest import SMALL


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about folders: skip Spark and the report."""
    from rig.analysis import stages

    monkeypatch.setattr(stages, "analyse", lambda run_dir, **_: ({}, stages.Timings()))


def _run(path: Path, out: Path) -> pipeline.RunOutcome:
    return run(path, RunOptions(out=out, report=False, command="rig run x"), Progress(quiet=True))


def test_a_folder_with_someone_elses_files_is_refused(write_scenario: Any, tmp_path: Path,
                                                      no_spark: None) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(RunDirError, match="not a rig run directory"):
        _run(write_scenario(SMALL), out)
    assert (out / "thesis.tex").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "scenario.yaml"]


def test_a_new_run_keeps_the_previous_one(write_scenario: Any, tmp_path: Path,
                                          no_spark: None) -> None:
    out = tmp_path / "runs" / "small"
    first = _run(write_scenario(SMALL), out)
    assert first.previous is None and is_run_dir(out)
    (out / "notes.txt").write_text("kept with the run")
    second = _run(write_scenario(SMALL), out)
    assert second.previous is not None and (second.previous / "notes.txt").exists()
    assert is_run_dir(out) and not (out / "notes.txt").exists()
    for folder in (out, second.previous):
        assert {p.name for p in folder.iterdir()} >= {"run.json", "summary.json", "events",
                                                       "scenario.yaml", "command.txt",
                                                       "checks.json"}


def test_a_failing_run_leaves_no_staging_folder(write_scenario: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from rig.analysis import stages

    def broken(run_dir: Path, **_: Any) -> Any:
        raise RuntimeError("analysis exploded")

    monkeypatch.setattr(stages, "analyse", broken)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        _run(write_scenario(SMALL), out)
    assert list(tmp_path.iterdir()) == [tmp_path / "scenario.yaml"]


def test_the_run_dir_holds_the_resolved_scenario_and_the_command(
        write_scenario: Any, tmp_path: Path, no_spark: None) -> None:
    outcome = _run(write_scenario(SMALL), tmp_path / "out")
    resolved = (outcome.run_dir / "scenario.yaml").read_text()
    assert "replica.fetch.wait.max.ms: 500" in resolved and "fetch_version: 6" in resolved
    assert (outcome.run_dir / "command.txt").read_text() == "rig run x\n"
    assert sorted(p.name for p in (outcome.run_dir / "events").iterdir()) == ["v6.jsonl",
                                                                              "v7.jsonl"]
    checks = outcome.summary["variants"]["v7"]["checks"]
    assert checks["ok"] is True and checks["sizes_verified_by_encoder"] > 0

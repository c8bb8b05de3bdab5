"""The stages of an analysis run side by side (rig.analysis.stages.STAGE_THREADS): what they add
to summary.json is merged in the stages' order whatever order they end in, each stage's time
is its own, and a failing stage's error reaches the caller. These stages need no Spark: the run
directory has no event logs, so the analysis parses nothing and starts no session."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.side_by_side import side_by_side
from rig.analysis.stages import STAGE_THREADS, FunctionStage, analyse


def _run_dir(tmp_path: Path) -> Path:
    rundir.write_run(tmp_path, {"variants": {"a": {}, "b": {}}})
    return tmp_path


def _stage(name: str, sleep: float, started: list[tuple[str, str]], key: str | None = None,
           fail: bool = False) -> FunctionStage:
    """A stage that notes (its name, its thread) as it starts, sleeps, and adds {key: name}."""
    def job(analysis: Analysis) -> dict[str, dict[str, Any]]:
        started.append((name, threading.current_thread().name))
        time.sleep(sleep)
        if fail:
            raise RuntimeError(f"{name} failed")
        return {v: {key or name: name} for v in analysis.variants}

    return FunctionStage(name=name, writes=(), schema=lambda: None,  # type: ignore[arg-type,return-value]
                         job=job)


def test_entries_merge_in_stage_order_although_the_stages_end_in_reverse(tmp_path: Path) -> None:
    started: list[tuple[str, str]] = []
    # The first stage sleeps longest: one by one they would end first to last, side by side
    # last to first.
    stages = [_stage(f"s{i}", 0.3 - 0.1 * i, started) for i in range(STAGE_THREADS)]
    lines: list[str] = []
    merged, timings = analyse(_run_dir(tmp_path), stages=stages, say=lines.append)

    assert list(merged) == ["a", "b"]
    assert list(merged["a"]) == [f"s{i}" for i in range(STAGE_THREADS)]
    assert len({thread for _, thread in started}) == STAGE_THREADS, \
        "each stage ran on its own thread"
    # Said as they end: the shortest first. Timings in the stages' order, each its own time.
    assert lines == [f"  s{i}: {timings.stages[f's{i}']:.2f} s"
                     for i in reversed(range(STAGE_THREADS))]
    assert list(timings.stages) == [f"s{i}" for i in range(STAGE_THREADS)]
    assert timings.stages["s0"] >= 0.3 > timings.stages[f"s{STAGE_THREADS - 1}"]
    # The analysis took about the longest stage, not their sum.
    summed = sum(timings.stages.values())
    assert timings.stages_wall is not None and timings.stages_wall < summed
    assert timings.as_json()["analysis_seconds"] == round(timings.parse + timings.stages_wall, 3)


def test_a_later_stage_overrides_an_earlier_ones_key_as_one_by_one(tmp_path: Path) -> None:
    # "fast" ends first but comes later in the order: its value is kept, as when one by one.
    stages = [_stage("slow", 0.2, [], key="same"), _stage("fast", 0.0, [], key="same")]
    merged, _ = analyse(_run_dir(tmp_path), stages=stages)
    assert merged == {"a": {"same": "fast"}, "b": {"same": "fast"}}


def test_a_failing_stage_raises_and_later_stages_do_not_start(tmp_path: Path) -> None:
    started: list[tuple[str, str]] = []
    stages = [_stage("fails", 0.0, started, fail=True),
              *(_stage(f"slow{i}", 0.3, started) for i in range(STAGE_THREADS - 1)),
              *(_stage(f"queued{i}", 0.0, started) for i in range(3))]
    with pytest.raises(RuntimeError, match="fails failed"):
        analyse(_run_dir(tmp_path), stages=stages)
    assert not [name for name, _ in started if name.startswith("queued")]


def test_side_by_side_gives_results_in_order_and_the_first_error_after_all_ended() -> None:
    ended: list[str] = []

    def job(name: str, sleep: float, fail: bool = False) -> Any:
        def run() -> str:
            time.sleep(sleep)
            ended.append(name)
            if fail:
                raise ValueError(name)
            return name
        return run

    assert side_by_side(job("a", 0.2), job("b", 0.0), job("c", 0.1)) == ("a", "b", "c")
    ended.clear()
    with pytest.raises(ValueError, match=r"^first$"):
        side_by_side(job("first", 0.1, fail=True), job("second", 0.0, fail=True),
                     job("slow", 0.3))
    assert sorted(ended) == ["first", "second", "slow"]


def test_an_analysis_whose_session_died_closes_quietly(tmp_path: Path) -> None:
    """Closing drops the event table's view; when the JVM died with the analysis, the drop
    fails, and that failure must not replace the analysis' own error."""

    class DeadCatalog:
        def dropTempView(self, name: str) -> None:
            raise ConnectionError(f"cannot drop {name}: the Java side is gone")

    analysis = Analysis(run_dir=tmp_path)
    analysis._spark = SimpleNamespace(catalog=DeadCatalog())  # type: ignore[assignment]
    analysis._view = "rig_events_0"
    analysis.close()
    assert analysis._view is None and analysis._table is None

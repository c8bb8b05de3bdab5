"""A fuzz worker killed mid-run (the out-of-memory killer's SIGKILL) stops the session as an
interrupt does: the runs before the lost one are kept in fuzz.json, stopped_by "worker-lost",
exit 2, one line on screen; it was a BrokenProcessPool traceback, and no fuzz.json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.processes import forkserver_workers, wait_gone


def test_a_killed_worker_stops_the_session_and_keeps_its_runs(tmp_path: Path) -> None:
    out = tmp_path / "fuzz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rig.cli", "fuzz", str(ROOT / "scenarios" / "fuzz-replication.yaml"),
         "--variant", "leader-epoch", "--runs", "100000", "--workers", "2", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
        workers = forkserver_workers(proc.pid)
    assert len(workers) == 2, "the workers never started"
    time.sleep(1.0)  # some runs done
    os.kill(min(workers), signal.SIGKILL)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 2, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    assert "STOPPED: a worker process died mid-run" in stdout, stdout
    report = json.loads((out / "fuzz.json").read_text())["variants"]["leader-epoch"]
    assert report["stopped_by"] == "worker-lost"
    done = report["runs_done"]
    assert 0 < done < 100000 and report["run_indices"] == {"first": 0, "last": done - 1}
    assert f"--runs {done}" in report["reproduce"]
    assert not wait_gone(workers), "a worker outlived the session"

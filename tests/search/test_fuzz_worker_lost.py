"""A fuzz worker killed mid-run (the out-of-memory killer's SIGKILL) stops the session as an
interrupt does: the runs before the lost one are kept in fuzz.json, stopped_by "worker-lost",
exit 2, one line on screen; it was a BrokenProcessPool traceback, and no fuzz.json.

The worker is killed once the session's progress line has counted a run, not after a fixed
sleep: on a slow machine a second after the workers start, no run had ended yet."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.processes import forkserver_workers, wait_gone


def test_a_killed_worker_stops_the_session_and_keeps_its_runs(tmp_path: Path) -> None:
    out = tmp_path / "fuzz"
    errors = tmp_path / "stderr"  # (stdout is read line by line as it comes, stderr at the end)
    with errors.open("w") as stderr_file:  # (the child keeps its own copy open)
        proc = subprocess.Popen(
            [sys.executable, "-m", "rig.cli", "fuzz",
             str(ROOT / "scenarios" / "fuzz-replication.yaml"), "--variant", "leader-epoch",
             "--runs", "100000", "--workers", "2", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=stderr_file, text=True, cwd=ROOT)
    lines: list[str] = []
    counted = threading.Event()  # a progress line ("  leader-epoch: N runs, T s, ...") with N > 0

    def read_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            found = re.search(r"^ +leader-epoch: (\d+) runs, [\d.]+ s,", line)
            if found and int(found.group(1)) > 0:
                counted.set()

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        assert proc.poll() is None, "".join(lines) + errors.read_text()
        time.sleep(0.1)
        workers = forkserver_workers(proc.pid)
    assert len(workers) == 2, "the workers never started"
    assert counted.wait(timeout=180), ("no run was counted", "".join(lines))
    os.kill(min(workers), signal.SIGKILL)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    reader.join(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()
    stdout, stderr = "".join(lines), errors.read_text()
    assert proc.returncode == 2, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    assert "STOPPED: a worker process died mid-run" in stdout, stdout
    report = json.loads((out / "fuzz.json").read_text())["variants"]["leader-epoch"]
    assert report["stopped_by"] == "worker-lost"
    done = report["runs_done"]
    assert 0 < done < 100000 and report["run_indices"] == {"first": 0, "last": done - 1}
    assert f"--runs {done}" in report["reproduce"]
    assert not wait_gone(workers), "a worker outlived the session"

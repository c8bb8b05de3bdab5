"""Fuzzing speed: runs per second and simulated seconds per wall second (and per core) of
`rig fuzz scenarios/fuzz-replication.yaml`, for each of its variants.

Run: python benchmarks/fuzz.py [--runs N] [--workers W]... [--root DIR]

Each measurement is one `python -m rig fuzz ... --quiet` process, as a user runs it. Printed:

- runs/s and simulated s per wall s of the fuzzing loop (fuzz.json's `runs_done` over its
  `wall_seconds`: the runs themselves, shrinking excluded), and per core (over the workers used);
- simulated s per CPU s: every run the process simulated (fuzz runs, shrinking's runs, replays)
  over the CPU time of the process and its workers (getrusage, start-up included): the per-core
  figure that a busy shared machine distorts least;
- the whole process's wall time (start-up, loading, runs, shrinking and writing included).

A run simulates the scenario's `duration` (12 s for fuzz-replication); the quiesce after it (at
most 60 s, usually far less) is not counted, so the figures are conservative.

`--root DIR` measures another checkout of rig (e.g. `git archive 3795c29 | tar -x -C DIR`, the
base before issue 14): its code is imported first (PYTHONPATH). A checkout whose `rig fuzz` has
no `--workers` runs one process, which is what it did.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "scenarios/fuzz-replication.yaml"
VARIANTS = ("hw-truncation", "leader-epoch")
SIMULATED_S_PER_RUN = 12.0  # fuzz-replication's duration
TARGET_PER_CORE = 300.0  # issue 14: ≥ 300 simulated s per wall s per core


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def has_workers(root: Path, env: dict[str, str]) -> bool:
    """Whether this checkout's `rig fuzz` knows `--workers`."""
    proc = subprocess.run([sys.executable, "-m", "rig", "fuzz", "--help"], cwd=root, env=env,
                          capture_output=True, text=True, check=True)
    return "--workers" in proc.stdout


def measure(root: Path, env: dict[str, str], variant: str, runs: int, seed: int,
            workers: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="rig-bench-fuzz-") as tmp:
        out = Path(tmp) / "out"
        command = [sys.executable, "-m", "rig", "fuzz", SCENARIO, "--variant", variant,
                   "--runs", str(runs), "--seed", str(seed), "--out", str(out), "--quiet"]
        if workers is not None:
            command += ["--workers", str(workers)]
        cpu_before = _children_cpu_s()
        started = time.perf_counter()
        proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        process_wall = time.perf_counter() - started
        cpu = _children_cpu_s() - cpu_before
        if proc.returncode not in (0, 1):
            sys.exit(f"rig fuzz failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        entry = json.loads((out / "fuzz.json").read_text())["variants"][variant]
    done, wall = entry["runs_done"], entry["wall_seconds"]
    used = workers or 1
    simulated = done * SIMULATED_S_PER_RUN
    violation = entry.get("violation")
    # Every run the process simulated: the fuzz runs, shrinking's runs, replays of what it wrote.
    simulations = done + (0 if not violation else
                          violation["shrink_attempts"] + len(violation.get("replay") or {}))
    return {"runs": done, "wall_s": wall, "runs_per_s": done / wall,
            "sim_per_wall": simulated / wall, "sim_per_wall_per_core": simulated / wall / used,
            "sim_per_cpu": simulations * SIMULATED_S_PER_RUN / cpu, "cpu_s": cpu,
            "process_wall_s": process_wall,
            "workers": used, "violation_run": -1 if not violation else violation["index"],
            "shrink_runs": 0 if not violation else violation["shrink_attempts"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the rig checkout to measure")
    parser.add_argument("--runs", type=int, default=60, help="runs per variant (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, action="append",
                        help="worker counts to measure (default: 1 and every core)")
    parser.add_argument("--variant", choices=VARIANTS, action="append")
    args = parser.parse_args()
    root = args.root.resolve()
    env = {**os.environ, "PYTHONPATH": str(root)}
    cores = os.cpu_count() or 1
    parallel = has_workers(root, env)
    counts: list[int | None] = ([None] if not parallel
                                else list(dict.fromkeys(args.workers or [1, cores])))
    load = os.getloadavg()[0]
    print(f"rig at {root}; python {sys.version.split()[0]}, {cores} cores, load average "
          f"{load:.1f}; {args.runs} runs per variant, seed {args.seed}"
          + ("" if parallel else "; this rig has no --workers: one process"))
    for variant in args.variant or VARIANTS:
        for workers in counts:
            r = measure(root, env, variant, args.runs, args.seed, workers)
            verdict = "ok" if r["sim_per_wall_per_core"] >= TARGET_PER_CORE else "below target"
            found = (f"; violation at run {r['violation_run']:.0f}, shrunk in "
                     f"{r['shrink_runs']:.0f} runs" if r["violation_run"] >= 0 else "")
            print(f"  {variant:14} workers {r['workers']:.0f}: {r['runs']:4.0f} runs in "
                  f"{r['wall_s']:6.2f} s = {r['runs_per_s']:6.2f} runs/s, "
                  f"{r['sim_per_wall']:6.1f} sim s/wall s, "
                  f"{r['sim_per_wall_per_core']:6.1f} per core [{verdict}], "
                  f"{r['sim_per_cpu']:6.1f} sim s/CPU s; process {r['process_wall_s']:.1f} s"
                  f"{found}")


if __name__ == "__main__":
    main()

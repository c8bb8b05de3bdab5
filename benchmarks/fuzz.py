"""Fuzzing speed: runs per second and simulated seconds per wall second (and per core) of
`rig fuzz scenarios/fuzz-replication.yaml`, for each of its variants.

Run: python benchmarks/fuzz.py [--runs N] [--workers W]... [--root DIR]

Each measurement is one `python -m rig fuzz ... --quiet` process, as a user runs it. Printed:

- runs/s and simulated s per wall s of the fuzzing loop (fuzz.json's `runs_done` over its
  `wall_seconds`: the runs themselves, shrinking excluded), and per core (over the workers used);
- simulated s per CPU s: with one worker, every run the process simulated (fuzz runs,
  shrinking's runs, replays) over the process's CPU time (getrusage, start-up, loading and
  writing included): the per-core figure that a busy shared machine distorts least, comparable
  between checkouts. Worker processes are the forkserver's children, not the benchmark's, so
  with several workers the figure is the runs' own CPU time as fuzz.json's `speed` reports it
  (marked "runs only");
- the whole process's wall time (start-up, loading, runs, shrinking and writing included).

A run simulates the scenario's `duration` (12 s for fuzz-replication), the basis of these
figures, then settles (the quiesce, at most 60 s, ~9 s on average here) before the checks judge
it; a second line gives the figure counting the quiesce too, from fuzz.json.

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

from machine import describe  # (benchmarks/machine.py: run as a script, its folder is on the path)

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
    with_quiesce = entry.get("simulated_seconds_with_quiesce")  # only rig ≥ issue 14 says
    return {"with_quiesce_per_wall": -1.0 if with_quiesce is None else with_quiesce / wall,
            "runs": done, "wall_s": wall, "runs_per_s": done / wall,
            "sim_per_wall": simulated / wall, "sim_per_wall_per_core": simulated / wall / used,
            "sim_per_cpu": (simulations * SIMULATED_S_PER_RUN / cpu if used == 1
                            else float(entry["speed"]["simulated_seconds_per_cpu_second"])),
            "cpu_s": cpu,
            "process_wall_s": process_wall,
            "workers": used, "violation_run": -1 if not violation else violation["index"],
            "shrink_runs": 0 if not violation else violation["shrink_attempts"]}


BREAKDOWN = """
import functools, gc, json, sys, time, tempfile
from pathlib import Path
import orjson
cpu = time.process_time
spent, calls, stack = {}, {}, []  # exclusive CPU per part: a part's time excludes inner parts'
def enter():
    stack.append([cpu(), 0.0])
def leave(name):
    started, inner = stack.pop()
    elapsed = cpu() - started
    spent[name] = spent.get(name, 0.0) + elapsed - inner
    calls[name] = calls.get(name, 0) + 1
    if stack:
        stack[-1][1] += elapsed
def timed(name, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        enter()
        try:
            return function(*args, **kwargs)
        finally:
            leave(name)
    return wrapper
def calibrate():  # what one timed call costs by itself, to take off per call
    empty = timed("calibration", lambda: None)
    started = cpu()
    for _ in range(100_000):
        empty()
    cost = (cpu() - started) / 100_000
    spent.clear(); calls.clear()
    return cost
orjson.dumps = timed("rendering events (orjson)", orjson.dumps)
started = cpu()
import rig.cli, rig.simulate
from rig.checks import safety, fetch_sessions, consumer_reads, base
from rig.cluster.cluster import Cluster
from rig.events.log import DigestWriter
from rig.scenario.load import load_scenario
from rig.scenario.source import load_yaml_file
from rig.search import parallel
from rig.search.bounds import fuzz_bounds, merged_variant
from rig.search.cases import CaseCompiler, case_document, dump_case
from rig.search.draw import draw_run
imports = cpu() - started
Cluster.build = timed("set-up (cluster build and start)", Cluster.build)
Cluster.start = timed("set-up (cluster build and start)", Cluster.start)
simulate_module = sys.modules["rig.simulate"]
simulate_module._quiesce = timed("quiesce (settling after the duration)", simulate_module._quiesce)
DigestWriter.write = timed("hashing (SHA-256 of the log)", DigestWriter.write)
for module in (safety, fetch_sessions, consumer_reads, base):
    for name in dir(module):
        kind = getattr(module, name)
        if isinstance(kind, type) and "finish" in vars(kind):
            kind.finish = timed("checks' verdicts (finish)", kind.finish)
        if isinstance(kind, type) and "observe" in vars(kind):
            kind.observe = timed("online checks (observing events)", kind.observe)
def on_gc(phase, info):
    if phase == "start":
        enter()
    else:
        leave("cycle collector (gc)")
gc.callbacks.append(on_gc)
doc = load_yaml_file(Path(sys.argv[1]))
variant, runs = sys.argv[2], int(sys.argv[3])
bounds = fuzz_bounds(doc, merged_variant(doc.data, variant))
started = cpu()
compiled = CaseCompiler(doc.data, variant)
compile_once = cpu() - started
yaml_load = 0.0
for index in range(runs):
    faults, seed = draw_run(bounds, 0, index)
    started = cpu()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.yaml"
        path.write_text(dump_case(case_document(doc.data, variant, faults, seed)))
        load_scenario(path)
    yaml_load += cpu() - started
per_call = calibrate()
total = 0.0
with parallel.fuzz_gc():
    for index in range(runs):
        faults, seed = draw_run(bounds, 0, index)
        started = cpu()
        compiled.run(faults, seed, index)
        total += cpu() - started
overhead = sum(calls.values()) * per_call
parts = {k: max(0.0, v - calls[k] * per_call) / runs for k, v in spent.items()}
# A/B, interleaved run by run so the machine's load falls on both alike, no timing wrappers:
# the base's way (write the case as YAML, load it, simulate into /dev/null, the collector's
# default thresholds) against this one (compiled once, digested, fuzz_gc).
gc.callbacks.remove(on_gc)
Cluster.build, Cluster.start = Cluster.build.__wrapped__, Cluster.start.__wrapped__
simulate_module._quiesce = simulate_module._quiesce.__wrapped__
DigestWriter.write = DigestWriter.write.__wrapped__
orjson.dumps = orjson.dumps.__wrapped__
for module in (safety, fetch_sessions, consumer_reads, base):
    for name in dir(module):
        kind = getattr(module, name)
        for method in ("finish", "observe"):
            if isinstance(kind, type) and hasattr(vars(kind).get(method), "__wrapped__"):
                setattr(kind, method, vars(kind)[method].__wrapped__)
base_s = this_s = 0.0
for index in range(runs):
    faults, seed = draw_run(bounds, 0, index)
    started = cpu()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.yaml"
        path.write_text(dump_case(case_document(doc.data, variant, faults, seed)))
        spec = load_scenario(path).variants[0]
    simulate_module.simulate(spec, Path("/dev/null"), scenario=doc.data["name"])
    base_s += cpu() - started
    started = cpu()
    with parallel.fuzz_gc():
        compiled.run(faults, seed, index)
    this_s += cpu() - started
print(json.dumps({"imports": imports, "compile_once": compile_once,
                  "yaml_load_per_run": yaml_load / runs, "run": (total - overhead) / runs,
                  "timing_overhead_per_run": overhead / runs, "parts": parts,
                  "ab_base_per_run": base_s / runs, "ab_this_per_run": this_s / runs}))
"""


def breakdown(root: Path, env: dict[str, str], variant: str, runs: int) -> None:
    """Where a fuzz run's CPU time goes, by timing wrappers in one process (this checkout)."""
    proc = subprocess.run([sys.executable, "-c", BREAKDOWN, SCENARIO, variant, str(runs)],
                          cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"breakdown failed:\n{proc.stderr}")
    r = json.loads(proc.stdout)
    run = r["run"]
    print(f"\n  {variant}: CPU per run {run * 1000:.0f} ms ({SIMULATED_S_PER_RUN / run:.0f} sim s "
          f"per CPU s); once per process: imports {r['imports'] * 1000:.0f} ms, compiling "
          f"the scenario {r['compile_once'] * 1000:.0f} ms (the YAML write and load it "
          f"replaces cost {r['yaml_load_per_run'] * 1000:.0f} ms per run)")
    parts = r["parts"]
    names = {"quiesce (settling after the duration)": "engine and model during the quiesce"}
    for name, value in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"    {value * 1000:6.1f} ms {value / run:5.1%}  {names.get(name, name)}")
    rest = run - sum(parts.values())
    print(f"    {rest * 1000:6.1f} ms {rest / run:5.1%}  engine and model up to the duration "
          f"(and draw, compile, structlog's chain)")
    print(f"    (each part is exclusive of the others; the timing itself, "
          f"{r['timing_overhead_per_run'] * 1000:.0f} ms a run, is taken off)")
    a, b = r["ab_base_per_run"], r["ab_this_per_run"]
    print(f"  interleaved A/B, CPU per run: the base's way (a YAML file per run, loaded, logged to "
          f"/dev/null, default collector) {a * 1000:.0f} ms = {SIMULATED_S_PER_RUN / a:.0f} sim s "
          f"per CPU s; this one {b * 1000:.0f} ms = {SIMULATED_S_PER_RUN / b:.0f} sim s per CPU s "
          f"({(a - b) / a:.0%} less)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the rig checkout to measure")
    parser.add_argument("--runs", type=int, default=60, help="runs per variant (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, action="append",
                        help="worker counts to measure (default: 1 and every core)")
    parser.add_argument("--variant", choices=VARIANTS, action="append")
    parser.add_argument("--breakdown", action="store_true",
                        help="instead: where one run's CPU time goes, in one process")
    args = parser.parse_args()
    root = args.root.resolve()
    env = {**os.environ, "PYTHONPATH": str(root)}
    cores = os.cpu_count() or 1
    parallel = has_workers(root, env)
    counts: list[int | None] = ([None] if not parallel
                                else list(dict.fromkeys(args.workers or [1, cores])))
    if args.breakdown:
        print(f"CPU time per fuzz run of {SCENARIO}, {args.runs} runs, rig at {root}; load "
              f"average {os.getloadavg()[0]:.1f}")
        for variant in args.variant or VARIANTS:
            breakdown(root, env, variant, args.runs)
        return
    load = os.getloadavg()[0]
    print(describe())
    print(f"rig at {root}; load average "
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
                  f"{r['sim_per_cpu']:6.1f} sim s/CPU s"
                  f"{' (runs only)' if r['workers'] > 1 else ''}; "
                  f"process {r['process_wall_s']:.1f} s"
                  f"{found}")
            if r["with_quiesce_per_wall"] >= 0:
                print(f"  {'':14}   counting each run's quiesce too: "
                      f"{r['with_quiesce_per_wall']:6.1f} sim s/wall s, "
                      f"{r['with_quiesce_per_wall'] / r['workers']:6.1f} per core")
    print(f"after: {describe()}")


if __name__ == "__main__":
    main()

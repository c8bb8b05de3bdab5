"""Analysis benchmarks: how long the Spark stages take on a run's event logs, next to Spark's
own start-up, with `events: full` and `events: fetch-aggregated`.

Run: python benchmarks/analysis.py [--only NAME] [--events full|fetch-aggregated].
Each case runs in a fresh process: it simulates the scenario's variants into a temporary run
directory (as `rig run` would), starts Spark and times a trivial job (the start-up), then times
rig's analysis (summary metrics and every stage) on the logs. Issue 9's target: for runs under a
million events, the analysis time is dominated by Spark's start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BOTH = ("full", "fetch-aggregated")
CASES = {
    # name: (scenario, --set overrides, event modes worth running)
    "fetch-sessions-1000-partitions-1h": (
        ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml", ["duration=1h"], BOTH),
    "fetch-versions-bandwidth": (ROOT / "scenarios" / "fetch-versions-bandwidth.yaml", [], BOTH),
    "million-records-with-faults": (ROOT / "benchmarks" / "scenarios" /
                                    "million-records-faults.yaml", [], BOTH),
    # 12.5 million fetches an hour: only sensible aggregated.
    "idle-100k-partitions-1h-v7": (ROOT / "benchmarks" / "scenarios" /
                                   "idle-100k-partitions.yaml", [], ("fetch-aggregated",)),
}

CHILD = """
import json, sys, time
from pathlib import Path
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig import pipeline
from rig.pipeline import RunOptions, write_json, RUN_MARKER
scenario = load_scenario(sys.argv[1], sets=json.loads(sys.argv[2]))
run_dir = Path(sys.argv[3])
only = sys.argv[4]  # a case named ...-<variant> runs that variant alone
if only in {v.name for v in scenario.variants}:
    import dataclasses
    scenario = dataclasses.replace(scenario, variants=tuple(
        v for v in scenario.variants if v.name == only))
write_json(run_dir / RUN_MARKER, pipeline._run_json(scenario, RunOptions(command="bench")))
events = 0
started = time.perf_counter()
for variant in scenario.variants:
    events += simulate(variant, run_dir / "events" / f"{variant.name}.jsonl",
                       scenario=scenario.name).events
simulated = time.perf_counter() - started
started = time.perf_counter()
from rig.analysis.spark import get_spark
spark = get_spark()
spark.range(1).count()
spark_start = time.perf_counter() - started
started = time.perf_counter()
from rig.analysis import analyze_run
from rig.analysis.stages import run_stages
analyze_run(run_dir)
run_stages(run_dir)
analysis = time.perf_counter() - started
log_bytes = sum(p.stat().st_size for p in (run_dir / "events").glob("*.jsonl"))
print(json.dumps({"events": events, "simulate_s": simulated, "spark_start_s": spark_start,
                  "analysis_s": analysis, "log_bytes": log_bytes}))
"""


def run_case(name: str, events: str) -> None:
    scenario, sets, _ = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(scenario), json.dumps([*sets, f"events={events}"]),
             tmp, name.rsplit("-", 1)[-1]], capture_output=True, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode:
        sys.exit(f"{name} failed:\n{proc.stderr}")
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    verdict = ("start-up dominates" if r["analysis_s"] < r["spark_start_s"]
               else "analysis dominates")
    print(f"{name} (events: {events})\n"
          f"  {r['events']:>10,} events, log {r['log_bytes'] / 2**20:7.1f} MiB; simulated in "
          f"{r['simulate_s']:6.1f} s\n"
          f"  Spark start-up {r['spark_start_s']:5.1f} s; rig's analysis {r['analysis_s']:6.1f} s"
          f"  [{verdict}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=sorted(CASES), action="append")
    parser.add_argument("--events", choices=["full", "fetch-aggregated"], action="append")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for name in args.only or CASES:
        for events in args.events or CASES[name][2]:
            run_case(name, events)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - started:.0f} s")

"""Analysis benchmarks: how long rig's analysis takes on a run's event logs, as a ratio to Spark's
own start-up measured in the same process, with `events: full` and `events: fetch-aggregated`.

Run: python benchmarks/analysis.py [--only NAME] [--events full|fetch-aggregated].
Each case runs in a fresh process. An analysis case simulates the scenario's variants into a
temporary run directory (as `rig run` would, checks.json included), starts Spark and times a
trivial job (the start-up), then times `rig analyze`'s work on it: the one parse of the logs,
every stage, the summary and the expectations. The `rig-run` case times a whole `rig run` of the
seed scenario (simulate, analyse, report) from a cold process, against the cold Spark start-up
that run measured itself (summary.json's timings.spark_start_seconds). The `seed-first-query`
case measures the floor under any Spark analysis: a fresh JVM's start-up (and trivial job), then
one minimal query over the seed's event table, then rig's whole analysis in that JVM, each in
wall time and in the JVM's own CPU seconds (which the machine's other load changes less).
Issue 19's targets: analysis ≤ 1.0 × start-up for the million records and the idle 100k hour;
the seed scenario's whole `rig run` ≤ 1.4 × start-up.
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
    "fetch-versions-bandwidth": (ROOT / "scenarios" / "fetch-versions-bandwidth.yaml",
                                 ["duration=1m"], BOTH),  # the minute it ran before issue 14
    "million-records-with-faults": (ROOT / "benchmarks" / "scenarios" /
                                    "million-records-faults.yaml", [], BOTH),
    # 12.5 million fetches an hour: only sensible aggregated.
    "idle-100k-partitions-1h-v7": (ROOT / "benchmarks" / "scenarios" /
                                   "idle-100k-partitions.yaml", [], ("fetch-aggregated",)),
    # The whole `rig run` of the seed scenario, report included (its own events setting), its
    # variants side by side as the command line runs them.
    "seed-rig-run": (ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml", [], ("full",)),
    # What one Spark query costs in a JVM that has just started (and run its trivial job): the
    # least any Spark analysis adds to the start-up, measured on the seed's event table.
    "seed-first-query": (ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml", [],
                         ("full",)),
}

# Both analysis children start alike: argv is the scenario, its --set values (JSON), the run
# directory and a variant to run alone (or ""); they simulate into the run directory as `rig run`
# would, checks.json included.
SIMULATED = """
import json, os, sys, time
from pathlib import Path
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig import pipeline, rundir
from rig.pipeline import RunOptions
scenario = load_scenario(sys.argv[1], sets=json.loads(sys.argv[2]))
run_dir = Path(sys.argv[3])
only = sys.argv[4]  # a case named ...-<variant> runs that variant alone
if only in {v.name for v in scenario.variants}:
    import dataclasses
    scenario = dataclasses.replace(scenario, variants=tuple(
        v for v in scenario.variants if v.name == only))
rundir.write_run(run_dir, pipeline._run_json(scenario, RunOptions(command="bench")))
results = {}
started = time.perf_counter()
for variant in scenario.variants:
    results[variant.name] = simulate(variant, rundir.event_log(run_dir, variant.name),
                                     scenario=scenario.name)
simulated = time.perf_counter() - started
events = sum(r.events for r in results.values())
pipeline.record_checks(run_dir, scenario, results)
"""

CHILD = SIMULATED + """
started = time.perf_counter()
from rig.analysis.spark import get_spark
spark = get_spark()
spark.range(1).count()
spark_start = time.perf_counter() - started
started = time.perf_counter()
summary = pipeline.analyze(run_dir)
analysis = time.perf_counter() - started
log_bytes = sum(p.stat().st_size for p in rundir.event_logs(run_dir))
print(json.dumps({"events": events, "simulate_s": simulated, "spark_start_s": spark_start,
                  "analysis_s": analysis, "log_bytes": log_bytes,
                  "timings": summary["timings"]}))
"""

WHOLE_RUN = """
import json, sys, time
started = time.perf_counter()
from pathlib import Path
from rig.pipeline import RunOptions, run
from rig.progress import Progress
outcome = run(Path(sys.argv[1]),
              RunOptions(out=Path(sys.argv[2]) / "run", command="bench", workers=None),
              Progress(quiet=True))
timings = outcome.summary.get("timings") or {"spark_start_seconds": float("nan"),
                                             "parse_seconds": float("nan"), "stages": {}}
whole = time.perf_counter() - started
# The cold start-up is the one the run itself measured: a session stopped and started again in
# this process reuses its JVM (a fraction of a second), which would make any ratio meaningless.
print(json.dumps({"run_s": whole, "spark_start_s": timings["spark_start_seconds"],
                  "timings": timings,
                  "events": sum(v["simulation"]["events"]
                                for v in outcome.summary["variants"].values())}))
"""


FIRST_QUERY = SIMULATED + """
from rig.analysis import stages
from rig.analysis.analysis import Analysis
# The parse as `prepare` does it, without starting Spark: the start-up is timed alone below.
from rig.analysis.columnar import parse_event_logs
analysis = Analysis(run_dir=run_dir, run=rundir.read_run(run_dir))
analysis.parsed = parse_event_logs(rundir.event_logs(run_dir),
                                   stages._fields(stages.load_stages()),
                                   rundir.event_table_path(run_dir))

def jvm_cpu():  # user + system CPU seconds of Spark's JVM so far
    from pyspark import SparkContext
    fields = Path(f"/proc/{SparkContext._gateway.proc.pid}/stat").read_text().rsplit(")", 1)[1]
    utime, stime = fields.split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")

from rig.analysis.spark import get_spark
started = time.perf_counter()
spark = get_spark()
spark.range(1).count()
start_s, start_cpu = time.perf_counter() - started, jvm_cpu()
from pyspark.sql import functions as F
started = time.perf_counter()
analysis.open_table().groupBy("variant").agg(F.count(F.lit(1))).toArrow()
query_s, query_cpu = time.perf_counter() - started, jvm_cpu() - start_cpu
started, before = time.perf_counter(), jvm_cpu()
stages.analyse(run_dir)  # then the whole analysis, in the same, no longer cold JVM
rest_s, rest_cpu = time.perf_counter() - started, jvm_cpu() - before
print(json.dumps({"start_s": start_s, "start_cpu": start_cpu, "query_s": query_s,
                  "query_cpu": query_cpu, "rest_s": rest_s, "rest_cpu": rest_cpu,
                  "events": analysis.parsed.lines}))
"""


CODE_ROOT = ROOT  # where the children import rig from (--code-root: an older checkout)


def _child(code: str, args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=CODE_ROOT, env={**os.environ, "PYTHONHASHSEED": "0",
                                              "PYTHONPATH": str(CODE_ROOT)})
    if proc.returncode:
        sys.exit(f"failed:\n{proc.stderr}")
    result: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _stages(timings: dict) -> str:
    return ", ".join(f"{name} {s:.1f}" for name, s in timings["stages"].items())


def run_case(name: str, events: str) -> None:
    scenario, sets, _ = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        if name == "seed-first-query":
            r = _child(FIRST_QUERY, [str(scenario), "[]", tmp, ""])
            print(f"{name}\n  {r['events']:>10,} events; Spark start-up {r['start_s']:.2f} s "
                  f"({r['start_cpu']:.2f} JVM CPU s); then one query (the events per variant) "
                  f"{r['query_s']:.2f} s ({r['query_cpu']:.2f} JVM CPU s)\n"
                  f"  ratio to the start-up {r['query_s'] / r['start_s']:.2f}× wall, "
                  f"{r['query_cpu'] / r['start_cpu']:.2f}× JVM CPU (the seed's whole run may "
                  f"add 0.4× to the start-up, simulation and report included)\n"
                  f"  then rig's whole analysis in that JVM {r['rest_s']:.2f} s "
                  f"({r['rest_cpu']:.2f} JVM CPU s, {r['rest_cpu'] / r['start_cpu']:.2f}× the "
                  f"start-up's)")
            return
        if name == "seed-rig-run":
            r = _child(WHOLE_RUN, [str(scenario), tmp])
            print(f"{name}\n  {r['events']:>10,} events; whole `rig run` {r['run_s']:6.1f} s "
                  f"(Spark's start-up inside it {r['timings']['spark_start_seconds']:.1f} s, "
                  f"parse {r['timings']['parse_seconds']:.1f} s; stages: "
                  f"{_stages(r['timings'])})\n"
                  f"  ratio to that start-up {r['run_s'] / r['spark_start_s']:.2f}× "
                  f"(target ≤ 1.4×)")
            return
        r = _child(CHILD, [str(scenario), json.dumps([*sets, f"events={events}"]), tmp,
                           name.rsplit("-", 1)[-1]])
    ratio = r["analysis_s"] / r["spark_start_s"]
    print(f"{name} (events: {events})\n"
          f"  {r['events']:>10,} events, log {r['log_bytes'] / 2**20:7.1f} MiB; simulated in "
          f"{r['simulate_s']:6.1f} s\n"
          f"  Spark start-up {r['spark_start_s']:5.1f} s; rig's analysis {r['analysis_s']:6.1f} s"
          f"  ratio {ratio:.2f}× (parse {r['timings']['parse_seconds']:.1f} s; stages: "
          f"{_stages(r['timings'])})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=sorted(CASES), action="append")
    parser.add_argument("--events", choices=["full", "fetch-aggregated"], action="append")
    parser.add_argument("--code-root", type=Path, default=ROOT,
                        help="time the rig in this checkout instead (seed-rig-run only: the "
                             "analysis cases need `rig analyze`'s pipeline.analyze)")
    args = parser.parse_args()
    global CODE_ROOT
    CODE_ROOT = args.code_root.resolve()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}, rig from {CODE_ROOT}")
    for name in args.only or CASES:
        modes = CASES[name][2]
        for events in [e for e in args.events or modes if e in modes]:
            run_case(name, events)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - started:.0f} s")

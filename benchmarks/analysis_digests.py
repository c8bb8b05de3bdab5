"""The sha256 of every shipped scenario's summary.json and of each of its metric tables: proof that
a change to the analysis changed no result (issue 19: parse the event log once, same numbers).

Run before the change: python benchmarks/analysis_digests.py record digests.json [--set K=V]...
and after it:          python benchmarks/analysis_digests.py check digests.json
or record both sides at once (two checkouts) and: ... compare before.json after.json
(`check` runs with the `--set` values stored by `record`). The scenarios run one after another
as `rig run --no-report` would (rig.pipeline.run), in one fresh process with PYTHONHASHSEED=0
(one Spark start for all of them), each into a temporary folder.

What is compared: summary.json without the keys that measure this machine rather than the run
(the top-level `timings`, each variant's `simulation.wall_seconds`), and every metrics/*.json,
as parsed JSON dumped with sorted keys (row order counts, key order in an object does not).
A table present in the record must be there and equal; a table new since is listed, not failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def canonical(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def stable_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """summary.json without what depends on the machine (wall-clock figures)."""
    summary = {k: v for k, v in summary.items() if k != "timings"}
    for entry in (summary.get("variants") or {}).values():
        if isinstance(entry, dict) and isinstance(entry.get("simulation"), dict):
            entry["simulation"] = {k: v for k, v in entry["simulation"].items()
                                   if k != "wall_seconds"}
    return summary


CHILD = """
import json, sys, tempfile
from pathlib import Path
from rig.pipeline import RunOptions, run
from rig.progress import Progress
sys.path.insert(0, sys.argv[1])
from analysis_digests import digests_of
sets = json.loads(sys.argv[2])
for scenario in sys.argv[3:]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        run(Path(scenario), RunOptions(out=out, sets=sets, report=False, command="digest"),
            Progress(quiet=True))
        print(json.dumps({"scenario": scenario, "digests": digests_of(out)}), flush=True)
"""


def digests_of(run_dir: Path) -> dict[str, str]:
    """{"summary.json": sha, "metrics/<name>.json": sha, ...} of a finished run directory."""
    found = {"summary.json": canonical(stable_summary(
        json.loads((run_dir / "summary.json").read_text())))}
    for table in sorted((run_dir / "metrics").glob("*.json")):
        found[f"metrics/{table.name}"] = canonical(json.loads(table.read_text()))
    return found


def all_digests(scenarios: list[Path], sets: list[str]) -> Iterator[tuple[Path, dict[str, str]]]:
    """Run `scenarios` in one child process; yield each one's digests as it finishes."""
    command = [sys.executable, "-c", CHILD, str(Path(__file__).parent), json.dumps(sets),
               *map(str, scenarios)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": "0"}) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("{"):
                record = json.loads(line)
                yield Path(record["scenario"]), record["digests"]
    if proc.returncode:
        sys.exit(f"the digest run failed (exit {proc.returncode}); its stderr is above")


def _compare(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> int:
    """Print scenario by scenario what differs between two records; 1 if anything does."""
    problems = 0
    for name in sorted(set(before) & set(after)):
        changed = sorted(f for f in before[name] if before[name][f] != after[name].get(f))
        new = sorted(set(after[name]) - set(before[name]))
        problems += len(changed)
        print(f"{name}  {'same' if not changed else 'CHANGED: ' + ', '.join(changed)}"
              f"  ({len(before[name])} files{'; new: ' + ', '.join(new) if new else ''})")
    for name in sorted(set(before) ^ set(after)):
        print(f"{name}  only in {'the first' if name in before else 'the second'} record")
    print(f"{len(set(before) & set(after))} scenarios in both records, {problems} files differ")
    return 1 if problems else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["record", "check", "compare"])
    parser.add_argument("file", type=Path)
    parser.add_argument("other", type=Path, nargs="?", help="compare: the later record")
    parser.add_argument("--set", dest="sets", action="append", default=[],
                        help="scenario override for every scenario (record only)")
    parser.add_argument("--only", action="append", default=[],
                        help="a scenario file name (e.g. rack-failure.yaml); repeatable")
    args = parser.parse_args()
    if args.action == "compare":
        before = json.loads(args.file.read_text())["digests"]
        after = json.loads(args.other.read_text())["digests"]
        sys.exit(_compare(before, after))
    if args.action == "record":
        sets: list[str] = args.sets
        recorded: dict[str, dict[str, str]] = {}
    else:
        saved = json.loads(args.file.read_text())
        sets, recorded = saved["sets"], saved["digests"]
    found: dict[str, dict[str, str]] = {}
    problems: list[str] = []
    chosen = []
    for scenario in SCENARIOS:
        name = str(scenario.relative_to(ROOT))
        if args.only and scenario.name not in args.only:
            continue
        if args.action == "check" and name not in recorded:
            print(f"{name}  not recorded (new since): skipped", flush=True)
            continue
        chosen.append(scenario)
    for scenario, digests in all_digests(chosen, sets):
        name = str(scenario.relative_to(ROOT))
        found[name] = digests
        if args.action == "record":  # written as it goes: a long record survives a stop
            args.file.write_text(json.dumps({"sets": sets, "digests": found}, indent=1) + "\n")
            print(f"{name}  {len(found[name])} files", flush=True)
            continue
        before, after = recorded[name], found[name]
        changed = sorted(f for f in before if before[f] != after.get(f))
        new = sorted(set(after) - set(before))
        problems += [f"{name}: {f} {'missing' if f not in after else 'changed'}"
                     for f in changed]
        print(f"{name}  {'same' if not changed else 'CHANGED: ' + ', '.join(changed)}"
              f"  ({len(before)} files{'; new: ' + ', '.join(new) if new else ''})", flush=True)
    if args.action == "record":
        return
    problems += [f"{scenario.relative_to(ROOT)}: did not finish" for scenario in chosen
                 if str(scenario.relative_to(ROOT)) not in found]
    if problems:
        sys.exit(f"{len(problems)} results differ:\n" + "\n".join(problems))
    print(f"all {len(found)} scenarios: the same summary.json and metric tables")


if __name__ == "__main__":
    main()

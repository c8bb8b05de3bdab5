"""The sha256 of every variant's event log of every scenario: proof that a change to the engine
changed no event (a speed-up must leave every log byte-identical).

Run before the change: python benchmarks/log_digests.py record digests.json [--set duration=20s]
and after it:          python benchmarks/log_digests.py check digests.json
(`check` runs with the `--set` values stored by `record`). Each scenario runs in a fresh process
with PYTHONHASHSEED=0; the logs go to a temporary folder. `--skip NAME` (repeatable, a substring
of the scenario's path) leaves a scenario out of a record or a check, e.g. `--skip idle-100k` for
the unaggregated hour of 100k partitions. A scenario that the overrides make invalid (a fault after
a shortened duration) is skipped with its validation message, not recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [*sorted((ROOT / "scenarios").glob("*.yaml")),
             *sorted((ROOT / "benchmarks" / "scenarios").glob("*.yaml"))]

CHILD = """
import hashlib, json, sys
from pathlib import Path
from rig.scenario.load import load_scenario
from rig.errors import ScenarioError
from rig.simulate import simulate
try:
    scenario = load_scenario(sys.argv[1], sets=json.loads(sys.argv[2]))
except ScenarioError as error:
    sys.exit(f"invalid with these overrides: {str(error).splitlines()[0]}")
digests = {}
for variant in scenario.variants:
    log = Path(sys.argv[3]) / f"{variant.name}.jsonl"
    simulate(variant, log, scenario=scenario.name)
    digests[variant.name] = hashlib.sha256(log.read_bytes()).hexdigest()
print(json.dumps(digests))
"""


class Invalid(Exception):
    """The scenario does not validate with these overrides."""


def digests(scenario: Path, sets: list[str]) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(scenario), json.dumps(sets), tmp],
                              capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode and proc.stderr.startswith("invalid with these overrides"):
        raise Invalid(proc.stderr.strip())
    if proc.returncode:
        sys.exit(f"{scenario.name} failed:\n{proc.stderr}")
    result: dict[str, str] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["record", "check"])
    parser.add_argument("file", type=Path)
    parser.add_argument("--set", dest="sets", action="append", default=[],
                        help="scenario override for every scenario (record only)")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME",
                        help="leave out scenarios whose path contains NAME")
    args = parser.parse_args()
    if args.action == "record":
        sets = args.sets
        recorded = {}
    else:
        saved = json.loads(args.file.read_text())
        sets, recorded = saved["sets"], saved["digests"]
    found = {}
    for scenario in SCENARIOS:
        name = str(scenario.relative_to(ROOT))
        if args.action == "check" and name not in recorded:
            print(f"{name}  not recorded: skipped", flush=True)
            continue
        if any(skip in name for skip in args.skip):
            print(f"{name}  --skip: not {args.action}ed", flush=True)
            continue
        try:
            found[name] = digests(scenario, sets)
        except Invalid as error:
            print(f"{name}  skipped: {error}", flush=True)
            continue
        verdict = "" if args.action == "record" else (
            "  same" if recorded[name] == found[name] else "  CHANGED")
        print(f"{name}{verdict}", flush=True)
    if args.action == "record":
        args.file.write_text(json.dumps({"sets": sets, "digests": found}, indent=1) + "\n")
        return
    changed = sorted(name for name in found if recorded[name] != found[name])
    if changed:
        sys.exit(f"{len(changed)} scenarios wrote different event logs: {', '.join(changed)}")
    print(f"all {len(found)} scenarios wrote the same event logs")


if __name__ == "__main__":
    main()

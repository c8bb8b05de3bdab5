"""The sha256 of every variant's event log of every scenario: proof that a change to the engine
changed no event (a speed-up must leave every log byte-identical).

Run before the change: python benchmarks/log_digests.py record digests.json [--set duration=20s]
and after it:          python benchmarks/log_digests.py check digests.json
(`check` runs with the `--set` values stored by `record`). Each scenario runs in a fresh process
with PYTHONHASHSEED=0; the logs go to a temporary folder.
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
from rig.simulate import simulate
scenario = load_scenario(sys.argv[1], sets=json.loads(sys.argv[2]))
digests = {}
for variant in scenario.variants:
    log = Path(sys.argv[3]) / f"{variant.name}.jsonl"
    simulate(variant, log, scenario=scenario.name)
    digests[variant.name] = hashlib.sha256(log.read_bytes()).hexdigest()
print(json.dumps(digests))
"""


def digests(scenario: Path, sets: list[str]) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(scenario), json.dumps(sets), tmp],
                              capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
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
            print(f"{name}  not recorded (new since): skipped", flush=True)
            continue
        found[name] = digests(scenario, sets)
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

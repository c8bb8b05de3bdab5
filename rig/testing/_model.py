"""Short runs of the real model for the kits: a scenario written to a file, loaded and simulated
as `rig run` would, with its event log read back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from rig.errors import PluginError, StrategyFailure
from rig.strategies import registry


@dataclass
class ModelRun:
    log: bytes  # the event log, byte for byte
    events: list[dict[str, Any]]
    checks: dict[str, Any]  # check name → CheckResult


def strategy_ref(name: str, options: dict[str, Any]) -> Any:
    return {"name": name, "options": options} if options else name


def run_model(doc: dict[str, Any], tmp: Path, label: str,
              case: str) -> tuple[ModelRun | None, list[str]]:
    """Simulate the scenario `doc`; the run, or None and the problem that stopped it."""
    from rig.scenario.load import load_scenario  # the model stays out of `import rig.testing`
    from rig.simulate import simulate

    path = tmp / f"{label}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
    try:
        variant = load_scenario(path).variants[0]
        result = simulate(variant, tmp / f"{label}.jsonl", scenario="rig.testing")
    except (StrategyFailure, PluginError) as exc:
        return None, [f"{case} {exc}"]
    except Exception as exc:
        return None, [f"{case} the run raised {registry.describe_exception(exc)}"]
    log = (tmp / f"{label}.jsonl").read_bytes()
    return ModelRun(log, [orjson.loads(line) for line in log.splitlines()],
                    {check.name: check for check in result.checks}), []


def failed_checks(run: ModelRun, names: tuple[str, ...], case: str) -> list[str]:
    """A problem for each of the named checks that did not pass, with its first violations."""
    problems = []
    for name in names:
        check = run.checks.get(name)
        if check is None or check.status.value == "ok":
            continue
        shown = [", ".join(f"{k} {v}" for k, v in violation.items() if k != "seq")
                 for violation in check.violations[:3]] or [check.note]
        problems += [f"{case} {name} check {check.status.value}: {what}" for what in shown]
    return problems


def settled_problem(run: ModelRun, case: str) -> list[str]:
    """The run must end settled: every partition led, its ISR full, every follower caught up."""
    end = next((e for e in reversed(run.events) if e["event"] == "run.quiesced"), None)
    if end is None or end.get("settled"):
        return []
    return [f"{case} not settled {end['waited_ms']:g} ms after every fault healed and the "
            "producers stopped: some partition's ISR is not full or a follower never caught up"]


def same_log_problem(first: ModelRun | None, again: ModelRun | None, case: str) -> list[str]:
    if first is None or again is None or first.log == again.log:
        return []
    return [f"{case} not deterministic: the same run twice wrote different event logs (take "
            "no randomness from the global random, set order, id() or the clock)"]

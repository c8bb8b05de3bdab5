"""The scenario files rig fuzz writes for the runs it reports, each reproduced by `rig run`:
a violation's schedule as drawn and as shrunk, and the first run the quiesce left unsettled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig._version import __version__
from rig.search.cases import CaseResult, write_case
from rig.search.draw import Fault


def write_minimal(out: Path, command: str, file: Path, data: dict[str, Any],
                  variant: str | None, found: CaseResult, faults: list[Fault],
                  check: str) -> Path:
    """`<variant>-minimal.yaml` (the shrunk schedule breaking `check`) and
    `<variant>-found.yaml` (the schedule as first drawn); the minimal file's path."""
    name = variant or "default"
    path = out / f"{name}-minimal.yaml"
    write_case(path, data, variant, faults, found.seed, name=f"{data['name']}-{name}-minimal",
               header=(f"# A fault schedule that breaks `{check}`, found and shrunk by\n"
                       f"#   {command}\n# rig {__version__}. Reproduce: rig run {path}\n"),
               description=(f"Found by rig fuzz (run {found.index} of {file.name}, variant "
                            f"{name}) and shrunk from {len(found.faults)} faults to "
                            f"{len(faults)}: the {check} check fails."))
    write_case(out / f"{name}-found.yaml", data, variant, found.faults, found.seed,
               name=f"{data['name']}-{name}-found",
               header=f"# The schedule as first drawn (run {found.index}), before shrinking.\n")
    return path


def write_unsettled(out: Path, command: str, data: dict[str, Any], variant: str | None,
                    first: CaseResult) -> Path:
    """`<variant>-unsettled.yaml`: the first run not settled when its quiesce ran out
    (run.quiesced says settled: false), a liveness question the safety checks do not judge."""
    name = variant or "default"
    path = out / f"{name}-unsettled.yaml"
    return write_case(path, data, variant, first.faults, first.seed,
                      name=f"{data['name']}-{name}-unsettled",
                      header=(f"# Run {first.index} of\n#   {command}\n# not settled when its "
                              f"quiesce ran out (rig {__version__}). Reproduce: rig run {path}\n"))

"""How the traces of a figure are told apart: a colour per variant, a dash per role (one run)
or per run (a comparison), and the legend name of each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rig.report.charts.figure import PALETTE

__all__ = [
    "BAR_PATTERNS",
    "ROLE_LABEL",
    "RUN_DASHES",
    "Styler",
    "TraceStyle",
    "comparison_styler",
    "report_styler",
]

RUN_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
BAR_PATTERNS = {"dash": ".", "dot": "x", "dashdot": "-", "longdash": "|", "longdashdot": "+"}
ROLE_LABEL = {"follower": "followers", "consumer": "consumers"}


@dataclass(frozen=True)
class TraceStyle:
    name: str
    color: str
    dash: str = "solid"
    width: float = 2.0


Styler = Callable[[str, str, str], TraceStyle]  # (run, variant, role) → how to draw it


def report_styler(variants: Sequence[str], roles: Sequence[str]) -> Styler:
    """One run: a colour per variant; consumers dashed (named only when both roles show)."""
    index = {v: i for i, v in enumerate(variants)}

    def style(run: str, variant: str, role: str) -> TraceStyle:
        name = variant if len(roles) == 1 else f"{variant} · {ROLE_LABEL.get(role, role)}"
        color = PALETTE[index.get(variant, 0) % len(PALETTE)]
        return TraceStyle(name, color, "solid" if role == "follower" else "dash")

    return style


def comparison_styler(runs: Sequence[str], variants: Sequence[str], roles: Sequence[str]) -> Styler:
    """Several runs: a colour per variant, a dash pattern per run (the baseline solid);
    consumers thinner, so the same variant in two runs reads as a pair."""
    v_index = {v: i for i, v in enumerate(variants)}
    r_index = {r: i for i, r in enumerate(runs)}

    def style(run: str, variant: str, role: str) -> TraceStyle:
        name = f"{run} · {variant}"
        if len(roles) > 1:
            name += f" · {ROLE_LABEL.get(role, role)}"
        return TraceStyle(
            name,
            PALETTE[v_index.get(variant, 0) % len(PALETTE)],
            RUN_DASHES[r_index.get(run, 0) % len(RUN_DASHES)],
            2.0 if role == "follower" else 1.2,
        )

    return style

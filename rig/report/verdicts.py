"""A verdict per variant, as the report's first screen and the index page show it.

A variant's verdict merges its safety checks with the scenario's expectations that name it.
Checks that failed where the scenario's own expectations judge them (a variant built to lose a
record) are not a plain PASS or FAIL: they read "violation expected by the scenario", and the
expectations about that variant carry the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rig.report.charts.figure import PALETTE
from rig.report.inputs import RunInputs, checks_status, dig, expectation_rows, merge
from rig.scenario.summary_keys import path_parts, quote_part

__all__ = ["EXPECTED_WORD", "Subject", "VariantVerdict", "expectation_subject",
           "variant_verdicts", "verdict_lines"]

EXPECTED_WORD = "VIOLATION EXPECTED BY THE SCENARIO"
WORDS = {"pass": "PASS", "fail": "FAIL", "unknown": "UNKNOWN"}


@dataclass(frozen=True)
class Subject:
    """What an expectation measures: one summary path, or the two of a ratio."""

    paths: tuple[str, ...]
    op: str
    target: str

    @property
    def is_ratio(self) -> bool:
        return len(self.paths) == 2


def expectation_subject(text: str) -> Subject | None:
    """The paths of an expectation from its text in summary.json, which
    rig.scenario.model.Expectation.text writes as `path op value` or `a / b op value` (paths
    never hold a space); None for text of another shape (a hand-edited summary)."""
    words = text.split(" ")
    if len(words) >= 5 and words[1] == "/":
        return Subject((words[0], words[2]), words[3], " ".join(words[4:]))
    if len(words) >= 3:
        return Subject((words[0],), words[1], " ".join(words[2:]))
    return None


def variant_of(path: str, variants: Sequence[str]) -> tuple[str, str] | None:
    """`variants.<name>.<rest>` → (name, rest) for a name of `variants`, None for any other
    path. A name with a dot is quoted or escaped in the path (`variants."zk-2.4".x`,
    rig.scenario.summary_keys.split_path); unquoted, the longest name that fits is taken."""
    parts = path_parts(path)
    if len(parts) > 2 and parts[0] == "variants" and parts[1] in variants:
        return parts[1], ".".join(quote_part(part) for part in parts[2:])
    if not path.startswith("variants."):
        return None
    tail = path[len("variants."):]
    for name in sorted(variants, key=len, reverse=True):
        if tail.startswith(name + "."):
            return name, tail[len(name) + 1:]
    return None


@dataclass(frozen=True)
class VariantVerdict:
    variant: str
    status: str  # pass | fail | unknown: what the run's verdict merges
    word: str  # the badge: PASS, FAIL, UNKNOWN or EXPECTED_WORD
    css: str  # the badge's class: the status, or "expected"
    checks: str  # one line on the safety checks
    expectations: str  # one line on the expectations naming this variant
    named: int = 0  # expectations naming this variant
    passed: int = 0  # of which passed

    def as_dict(self) -> dict[str, Any]:
        return {"variant": self.variant, "status": self.status, "word": self.word,
                "css": self.css, "checks": self.checks, "expectations": self.expectations,
                "named": self.named, "passed": self.passed}


def _checks_line(checks: Any) -> tuple[str, bool]:
    """(what the checks found, in words; whether they found a violation the scenario expects)."""
    if not isinstance(checks, Mapping):
        return "safety checks: not run", False
    violations = checks.get("violations")
    count = len(violations) if isinstance(violations, list) else 0
    found = checks.get("checks")
    checkers: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    failed = [str(name) for name, info in checkers.items()
              if isinstance(info, Mapping) and info.get("status") == "failed"]
    status = checks_status(checks)
    expected = bool(checks.get("expected_by_scenario")) and checks.get("ok") is not True
    if checks.get("ok") is True:
        return f"safety checks: all {len(checkers)} pass" if checkers else "safety checks pass", \
            False
    named = f" ({', '.join(failed)})" if failed else ""
    found = f"{count} violation{'s' if count != 1 else ''}{named}"
    if expected:
        return f"safety checks: {found}, as the scenario expects", True
    if status == "unknown":
        return "safety checks: unknown (not checked, or a checker failed)", False
    return f"safety checks: {found}", False


def variant_verdicts(inputs: RunInputs, variants: Sequence[str]) -> list[VariantVerdict]:
    """One verdict per variant, in `variants` order."""
    rows = expectation_rows(inputs.summary)
    about: dict[str, list[str]] = {v: [] for v in variants}
    for row in rows:
        subject = expectation_subject(row["expect"])
        named = {found[0] for p in (subject.paths if subject else ())
                 if (found := variant_of(p, variants))}
        for v in named:
            about[v].append(row["status"])
    out = []
    for v in variants:
        checks = dig(inputs.summary, "variants", v, "checks")
        line, expected = _checks_line(checks)
        mine = about[v]
        status = merge([checks_status(checks), *mine])
        passed = mine.count("pass")
        if not mine:
            said = "no expectation names this variant"
        else:
            said = f"{passed} of {len(mine)} expectation{'s' if len(mine) != 1 else ''} " \
                   f"about it pass{'es' if len(mine) == 1 else ''}"
        word = EXPECTED_WORD if expected and status == "pass" else WORDS[status]
        css = "expected" if expected and status == "pass" else status
        out.append(VariantVerdict(v, status, word, css, line, said, len(mine), passed))
    return out


def verdict_lines(verdicts: Sequence[Mapping[str, Any]], variants: Sequence[str]
                  ) -> list[dict[str, Any]]:
    """Variants with the same verdict and the same safety-check findings share a line (six
    variants that all pass are one line, not six); each keeps its own name, colour and
    expectation count."""
    index = {v: i for i, v in enumerate(variants)}
    groups: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for verdict in verdicts:
        groups.setdefault((verdict["word"], verdict["checks"]), []).append(verdict)
    lines: list[dict[str, Any]] = []
    for key, members in groups.items():
        if len(members) == 1:
            expectations = members[0]["expectations"]
        elif all(m["named"] and m["passed"] == m["named"] for m in members):
            expectations = "every expectation about them passes"
        else:
            expectations = "; ".join(f"{m['variant']}: {m['expectations']}" for m in members)
        lines.append({"key": key, "word": key[0], "css": members[0]["css"], "checks": key[1],
                      "members": [{"variant": m["variant"],
                                   "color": PALETTE[index[m["variant"]] % len(PALETTE)],
                                   "expectations": m["expectations"]} for m in members],
                      "expectations": expectations})
    return lines

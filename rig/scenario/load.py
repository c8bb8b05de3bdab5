"""From a scenario file to a validated `Scenario`: parse (`source`), `--set` and `--seed`, the
schema (`schema`), each variant merged (`overrides`) and resolved (`variant`), then the
expectations (`expect`).

Every problem found is collected and raised together as one ScenarioError, each located as
`FILE:LINE: $.path: message`.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rig.errors import Problem, ScenarioError
from rig.scenario.expect import read_expectations, read_report_headline
from rig.scenario.model import Expectation, Scenario
from rig.scenario.overrides import apply_sets, deep_merge
from rig.scenario.problems import Collector, holds
from rig.scenario.schema import schema_errors
from rig.scenario.source import Document, Lines, PathKey, load_yaml_file
from rig.scenario.variant import DEFAULT_DURATION, DEFAULT_SEED, read_variant

__all__ = ["DEFAULT_DURATION", "DEFAULT_SEED", "DEFAULT_VARIANT", "MAX_SEED", "load_scenario"]

DEFAULT_VARIANT = "default"
MAX_SEED = 2**63 - 1  # the schema's bound: a Java long


def _spoiled(errors: Sequence[tuple[PathKey, PathKey, str]], variant: str) -> frozenset[str]:
    """The top-level keys of `variant`'s merged document that failed the schema."""
    keys = set()
    for _, spoiled, _ in errors:
        if spoiled[:1] == ("variants",) and len(spoiled) >= 3 and spoiled[1] == variant:
            spoiled = spoiled[2:]
        if spoiled and isinstance(spoiled[0], str) and spoiled[0] != "variants":
            keys.add(spoiled[0])
    return frozenset(keys)


def _with_seed(doc: Document, seed: int) -> Document:
    """`doc` with the seed of `--seed`, which is checked and reported as `--seed`."""
    if not 0 <= seed <= MAX_SEED:
        raise ScenarioError([Problem("--seed", None, "$.seed",
                                     f"must be between 0 and {MAX_SEED} (got {seed})")])
    lines = Lines(dict(doc.lines.by_path))
    lines.by_path[("seed",)] = ("--seed", None)
    return Document({**doc.data, "seed": seed}, doc.file, lines, doc.raw)


def load_scenario(path: str | Path, *, sets: Sequence[str] = (), seed: int | None = None,
                  only_variants: Sequence[str] = ()) -> Scenario:
    """Load, check and resolve a scenario file; raise ScenarioError listing every problem.

    Schema problems do not stop the semantic checks of the parts they leave intact, so a file
    shows all its mistakes at once.
    """
    path = Path(path)
    raw_doc = load_yaml_file(path)
    if not isinstance(raw_doc.data, dict):
        raise ScenarioError([raw_doc.problem((), "a scenario is a map of keys (name, cluster, "
                                             "topics, …)")])
    doc = apply_sets(raw_doc, list(sets)) if sets else raw_doc
    if seed is not None:
        doc = _with_seed(doc, seed)
    out = Collector(doc)
    errors = schema_errors(doc)
    for where, _, message in errors:
        out.add(where, message)
    raw_variants = doc.data.get("variants")
    overrides: dict[str, Any] = (raw_variants if isinstance(raw_variants, dict) and raw_variants
                                 else {DEFAULT_VARIANT: {}})
    unknown = [v for v in only_variants if v not in overrides]
    if unknown:
        raise ScenarioError([doc.problem(("variants",), f"no variant named {', '.join(unknown)}; "
                                         f"variants: {', '.join(overrides)}")])
    base = {k: v for k, v in doc.data.items() if k not in ("variants", "expect", "report")}
    variants = []
    for name, override in overrides.items():
        if only_variants and name not in only_variants:
            continue
        if not isinstance(override, dict):
            continue  # the schema said so
        lines = Lines(dict(doc.lines.by_path))
        sub = Lines({p[2:]: w for p, w in doc.lines.by_path.items()
                     if p[:2] == ("variants", name) and len(p) > 2})
        merged = deep_merge(copy.deepcopy(base), override, lines, sub)
        out.doc, out.variant, out.override = Document(merged, doc.file, lines), name, override
        merged_errors = schema_errors(out.doc)
        for where, _, message in merged_errors:
            if not holds(override, where):  # the override itself was checked with the file
                out.add(where, message)
        variant = read_variant(name, out.doc, out, _spoiled([*errors, *merged_errors], name))
        if variant is not None:
            variants.append(variant)
    out.doc, out.variant, out.override = doc, None, None
    expectations: tuple[Expectation, ...] = ()
    skipped: tuple[Expectation, ...] = ()
    if not any(spoiled[:1] == ("expect",) for _, spoiled, _ in errors):
        # a variant name the schema refused would make every expectation about it "unknown"
        names_ok = not any(spoiled == ("variants",) for _, spoiled, _ in errors)
        expectations, skipped = read_expectations(doc, list(overrides) if names_ok else None,
                                                  list(only_variants) or list(overrides), out)
    headline = read_report_headline(doc, errors, out)
    if out.problems:
        raise ScenarioError(sorted(out.problems, key=_file_order))
    return Scenario(name=doc.data["name"], description=doc.data.get("description", ""),
                    file=str(path), source_sha256=hashlib.sha256(raw_doc.raw).hexdigest(),
                    seed=doc.data.get("seed", DEFAULT_SEED), variants=tuple(variants),
                    expectations=expectations, document=doc.data,
                    skipped_expectations=skipped, report_headline=headline)


def _file_order(problem: Problem) -> tuple[int, str, int, str]:
    """Problems of the file in line order, then those of `--set`/`--seed`."""
    in_file = problem.line is not None
    return (0 if in_file else 1, problem.file, problem.line or 0, problem.path)

"""JSON Schema validation of scenario documents, with messages a person can act on."""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from rig.errors import Problem
from rig.scenario.source import Document, PathKey


@cache
def scenario_schema() -> dict[str, Any]:
    text = resources.files("rig.scenario").joinpath("scenario.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _python_regex(pattern: str) -> re.Pattern[str]:
    r"""`pattern` (ECMA-262, as JSON Schema means it) as a Python regex.

    In ECMA-262 `$` is the end of the text; Python's `$` also matches before a final newline,
    so `^[a-z]+$` would let `evil\n` through. Every `$` outside a character class becomes `\Z`.
    """
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        out.append("\\Z" if ch == "$" and not in_class else ch)
        i += 1
    return re.compile("".join(out))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not _python_regex(pattern).search(instance):
        yield ValidationError(f"{_short(instance)} does not match {pattern!r}")


_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


@cache
def _validator() -> Any:
    return _Validator(scenario_schema())


def _short(value: Any, limit: int = 80) -> str:
    """repr(value), cut: a message never echoes a huge value back."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _one_key_branches(schema: dict[str, Any]) -> list[str] | None:
    """For `oneOf: [{required: [a]}, {required: [b]}]`, the keys a, b; else None."""
    keys = []
    for branch in schema.get("oneOf", ()):
        if not isinstance(branch, dict) or set(branch) != {"required"}:
            return None
        if len(branch["required"]) != 1:
            return None
        keys.append(branch["required"][0])
    return keys or None


_BOUNDS = ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxItems")


def _message(error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    keys = _one_key_branches(schema) if error.validator == "oneOf" else None
    if keys and isinstance(error.instance, dict):
        given = [k for k in keys if k in error.instance]
        names = " or ".join(f"`{k}`" for k in keys)
        if given:
            return (f"give either {names}, not both: "
                    f"{' and '.join(f'`{k}`' for k in given)} are both set")
        return f"needs {names}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        names = ", ".join(_short(k) for k in extra)
        close = (difflib.get_close_matches(str(extra[0]), allowed, n=1)
                 if len(extra) == 1 else [])
        hint = (f"; did you mean {close[0]!r}?" if close
                else f"; known keys here: {', '.join(allowed)}" if allowed else "")
        return f"unknown key {names}{hint}"
    if error.validator in ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"):
        bound = {"maximum": "≤", "exclusiveMaximum": "<", "minimum": "≥",
                 "exclusiveMinimum": ">"}[str(error.validator)]
        return f"must be {bound} {error.validator_value:,} (got {_short(error.instance)})"
    if error.validator == "maxItems" and isinstance(error.instance, list):
        return (f"lists {len(error.instance):,} items; at most {error.validator_value:,} "
                "are allowed here")
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    if error.validator in ("oneOf", "anyOf") and schema.get("description"):
        return f"{_short(error.instance)} is not valid: {schema['description']}"
    parent = error.parent
    if (parent is not None and parent.validator in ("oneOf", "anyOf")
            and isinstance(parent.schema, dict) and parent.schema.get("description")):
        return f"{_short(error.instance)} is not valid: {parent.schema['description']}"
    if error.validator == "enum":
        choices = ", ".join(map(str, error.validator_value))
        return f"{_short(error.instance)} is not one of: {choices}"
    if error.validator == "type" and error.instance is None:
        return f"has no value; expected {error.validator_value}"
    if error.validator == "type":
        return f"{_short(error.instance)} should be of type {error.validator_value}"
    message = str(error.message)
    return message if len(message) <= 300 else message[:300] + "…"


def schema_errors(doc: Document) -> list[tuple[PathKey, PathKey, str]]:
    """Every schema violation of `doc` as (where, what it makes unusable, message).

    `where` is the path to report; the second path is the value the semantic checks must not
    read: the same, or for a missing key, the key itself.
    """
    found: list[tuple[PathKey, PathKey, str]] = []
    for error in _validator().iter_errors(doc.data):
        chosen = best_match([error])
        # best_match descends into oneOf branches; if it chose a branch of the wrong type,
        # the parent's description says more than the branch's message.
        if error.validator in ("oneOf", "anyOf") and chosen.validator == "type":
            chosen = error
        # ...unless the branch of the right type says what bound the value breaks
        bounds = [e for e in error.context or () if e.validator in _BOUNDS]
        if error.validator in ("oneOf", "anyOf") and bounds:
            chosen = bounds[0]
        path: PathKey = tuple(chosen.absolute_path)
        spoiled = path
        if chosen.validator == "additionalProperties" and isinstance(chosen.instance, dict):
            allowed = (chosen.schema or {}).get("properties", {}) if isinstance(
                chosen.schema, dict) else {}
            extra = sorted(set(chosen.instance) - set(allowed))
            if len(extra) == 1:
                path = spoiled = (*path, extra[0])
        if chosen.validator == "required" and isinstance(chosen.instance, dict):
            missing = [k for k in chosen.validator_value if k not in chosen.instance]
            if missing:
                spoiled = (*path, missing[0])
        found.append((path, spoiled, _message(chosen)))
    return found


def schema_problems(doc: Document) -> list[Problem]:
    """Every schema violation of `doc`, one problem per failing place, in file order."""
    problems = {doc.problem(path, message) for path, _, message in schema_errors(doc)}
    return sorted(problems, key=lambda p: (p.file, p.line or 0, p.path, p.message))

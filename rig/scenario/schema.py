"""JSON Schema validation of scenario documents, with messages a person can act on."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from rig.errors import Problem
from rig.scenario.source import Document


@cache
def scenario_schema() -> dict[str, Any]:
    text = resources.files("rig.scenario").joinpath("scenario.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(scenario_schema())


def _message(error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        names = ", ".join(repr(k) for k in extra)
        hint = f"; known keys here: {', '.join(allowed)}" if allowed else ""
        return f"unknown key {names}{hint}"
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    if error.validator in ("oneOf", "anyOf") and schema.get("description"):
        return f"{error.instance!r} is not valid: {schema['description']}"
    parent = error.parent
    if (parent is not None and parent.validator in ("oneOf", "anyOf")
            and isinstance(parent.schema, dict) and parent.schema.get("description")):
        return f"{error.instance!r} is not valid: {parent.schema['description']}"
    if error.validator == "enum":
        return f"{error.instance!r} is not one of: {', '.join(map(str, error.validator_value))}"
    if error.validator == "type" and error.instance is None:
        return f"has no value; expected {error.validator_value}"
    if error.validator == "type":
        return f"{error.instance!r} should be of type {error.validator_value}"
    return error.message


def schema_problems(doc: Document) -> list[Problem]:
    """Every schema violation of `doc`, one problem per failing place, in file order."""
    problems = []
    for error in _validator().iter_errors(doc.data):
        chosen = best_match([error])
        # best_match descends into oneOf branches; if it chose a branch of the wrong type,
        # the parent's description says more than the branch's message.
        if error.validator in ("oneOf", "anyOf") and chosen.validator == "type":
            chosen = error
        path = tuple(chosen.absolute_path)
        if chosen.validator == "additionalProperties" and isinstance(chosen.instance, dict):
            allowed = (chosen.schema or {}).get("properties", {}) if isinstance(
                chosen.schema, dict) else {}
            extra = sorted(set(chosen.instance) - set(allowed))
            if len(extra) == 1:
                path = (*path, extra[0])
        problems.append(doc.problem(path, _message(chosen)))
    return sorted(set(problems), key=lambda p: (p.file, p.line or 0, p.path, p.message))

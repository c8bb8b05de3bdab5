"""The report's topic sections after the fetch charts, in page order.

A section is a builder and a template. The builder is called as
`build(inputs, variants, marks, with_consumers=...)` and returns the template's variables (a dict
with a `charts` list of Chart, drawn by _plots) or None to leave the section out. The dict is
passed to the template under the section's `name`; the template renders one `<section id=name>`.
A new section adds one line here and its template; nothing else in the report changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from rig.report.charts.figure import FaultMark
from rig.report.inputs import RunInputs

Builder = Callable[..., dict[str, Any] | None]


@dataclass(frozen=True)
class Section:
    name: str  # the template's variable and the section's HTML id
    title: str
    builder: str  # module:function
    template: str

    def build(self, inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark], *,
              with_consumers: bool) -> dict[str, Any] | None:
        module, _, function = self.builder.partition(":")
        build: Builder = getattr(import_module(module), function)
        return build(inputs, variants, marks, with_consumers=with_consumers)


SECTIONS: tuple[Section, ...] = (
    Section("bandwidth", "Bandwidth ranking", "rig.report.bandwidth:build_bandwidth",
            "_bandwidth.html.j2"),
    Section("sessions", "Fetch-session cache", "rig.report.sessions:build_sessions",
            "_sessions.html.j2"),
    Section("recovery", "Recovery", "rig.report.recovery.section:build_recovery",
            "_recovery.html.j2"),
    Section("isr", "ISR", "rig.report.isr:build_isr", "_isr.html.j2"),
    Section("storage", "Storage", "rig.report.storage:build_storage", "_storage.html.j2"),
    Section("traffic", "Traffic and cost", "rig.report.traffic:build_traffic",
            "_traffic.html.j2"),
)

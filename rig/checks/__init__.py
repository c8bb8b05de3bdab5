"""Online checks: observers of the event stream that judge a run as it happens."""

from rig.checks.base import Check, CheckResult, Status, merge
from rig.checks.fetch_sessions import FetchSessionCheck

__all__ = ["Check", "CheckResult", "FetchSessionCheck", "Status", "default_checks", "merge"]


def default_checks() -> list[Check]:
    """The checks every run gets."""
    return [FetchSessionCheck()]

"""Online checks: observers of the event stream that judge a run as it happens."""

from rig.checks.base import Check, CheckResult, Status, merge
from rig.checks.consumer_reads import ConsumedRecordsStay, ConsumersSkipNothing
from rig.checks.fetch_sessions import FetchSessionCheck
from rig.checks.safety import NoAckedLoss, OneLeaderPerEpoch, ReplicasAgree

__all__ = ["Check", "CheckResult", "ConsumedRecordsStay", "ConsumersSkipNothing",
           "FetchSessionCheck", "NoAckedLoss", "OneLeaderPerEpoch", "ReplicasAgree", "Status",
           "default_checks", "merge"]


def default_checks() -> list[Check]:
    """The checks every run gets."""
    return [FetchSessionCheck(), NoAckedLoss(), ReplicasAgree(), OneLeaderPerEpoch(),
            ConsumedRecordsStay(), ConsumersSkipNothing()]

"""KRaft's metadata quorum (KIP-595): one RaftNode per controller, as Kafka's KafkaRaftClient
runs QuorumState and its states. What every state shares is in quorum_state (QuorumState); each
state's rules are in leader_state (LeaderState), candidate_state (CandidateState with
ProspectiveState, KIP-996) and follower_state (FollowerState); the module docstring of
quorum_state describes the protocol as rig models it.
"""

from __future__ import annotations

from rig.cluster.kraft.candidate_state import CandidateState
from rig.cluster.kraft.follower_state import FollowerState
from rig.cluster.kraft.leader_state import LeaderState
from rig.cluster.kraft.quorum_state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    PROSPECTIVE,
    RESIGNED,
    RETRY_BACKOFF_BASE_MS,
    UNATTACHED,
    FetchReply,
    QuorumConfig,
    QuorumHost,
)

__all__ = ["CANDIDATE", "FOLLOWER", "LEADER", "PROSPECTIVE", "RESIGNED", "RETRY_BACKOFF_BASE_MS",
           "UNATTACHED", "FetchReply", "QuorumConfig", "QuorumHost", "RaftNode"]


class RaftNode(LeaderState, CandidateState, FollowerState):
    """One voter of the quorum (`cluster.controllers`), in whichever state it is."""

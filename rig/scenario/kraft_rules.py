"""The rules of KRaft mode that changed across releases (rig.scenario.version_rules holds the
others and joins these to them, last)."""

from __future__ import annotations

from rig.scenario.version_rule import VersionRule

KRAFT_RULES: tuple[VersionRule, ...] = (
    VersionRule("eligible_leader_replicas_enable", "eligible.leader.replicas.enable default "
                "(KRaft)", (("0.8.2", False), ("4.1", True)),
                "KIP-966 (preview in 4.0, on for new clusters from 4.1)"),
    VersionRule("leader_epoch_bump_on_shrink", "a controller ISR shrink bumps the leader epoch "
                "(KRaft; the partition epoch always moves)", (("0.8.2", True), ("3.6", False)),
                "KAFKA-15021 (PartitionChangeBuilder, metadata version 3.6)"),
    VersionRule("broker_epoch_checks", "a KRaft leader keeps the broker epoch of each "
                "follower's fetch for ISR eligibility and AlterPartition (not the Fetch version)",
                (("0.8.2", False), ("3.5", True)),
                "KIP-903 (Partition.isBrokerEpochIsrEligible, KAFKA-14617; AlterPartition v3)"),
    VersionRule("elect_fenced_last_known_leader", "with ISR and ELR empty, the last known "
                "leader is elected even while fenced (KRaft, ELR on)",
                (("0.8.2", True), ("4.1", False)),
                "PartitionChangeBuilder.canElectLastKnownLeader; KAFKA-19522 (4.1)"),
    VersionRule("kraft_unclean_election", "a KRaft controller elects an out-of-sync replica "
                "where unclean.leader.election.enable allows it (before, never: only an "
                "ElectLeaders request of type UNCLEAN did)", (("0.8.2", False), ("3.9", True)),
                "KAFKA-12670 (ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic "
                "returned false until 3.9)"),
    VersionRule("raft_pre_vote", "a KRaft voter asks for pre-votes before it bumps the epoch "
                "(cluster.controllers)", (("0.8.2", False), ("4.0", True)),
                "KIP-996 (KafkaRaftClient's ProspectiveState, 4.0)"),
    VersionRule("raft_check_quorum", "a KRaft leader without fetches from a majority for 1.5 × "
                "controller.quorum.fetch.timeout.ms resigns (cluster.controllers)",
                (("0.8.2", False), ("3.7", True)),
                "KAFKA-15489 (LeaderState's checkQuorumTimer, 3.7)"),
    VersionRule("kraft_noop_records", "the active KRaft controller appends a NoOpRecord to the "
                "metadata log every metadata.max.idle.interval.ms (500 ms), written, "
                "replicated and fetched like any record", (("0.8.2", False), ("3.3", True)),
                "KIP-835 (QuorumController.maybeScheduleNextWriteNoOpRecord, from metadata "
                "version 3.3-IV0: MetadataVersion.isNoOpRecordSupported)"),
    VersionRule("heartbeat_retry_timeout_half_session", "a KRaft broker's heartbeat channel "
                "gives a heartbeat or registration up after broker.session.timeout.ms / 2, "
                "each attempt waiting as long at most (before: the full session timeout, each "
                "attempt waiting controller.socket.timeout.ms, 30 s)",
                (("0.8.2", False), ("3.4", True)),
                "KAFKA-14392 (BrokerServer's heartbeat channel, "
                "BrokerToControllerChannelManager's request timeout; 3.3.2 and 3.4.0)"),
)

"""E1 network-logs: flow classification with abstention, scored by a cost profile and the Brier rule."""

from security_verifiers.envs.network_logs.env import Answer, NetworkLogs, NetworkLogsConfig

__all__ = ["Answer", "NetworkLogs", "NetworkLogsConfig"]

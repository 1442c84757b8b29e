"""E2 config-audit: audit and patch Kubernetes manifests and Terraform files, scored by policy engines."""

from security_verifiers.envs.config_audit.env import Answer, ConfigAudit, ConfigAuditConfig

__all__ = ["Answer", "ConfigAudit", "ConfigAuditConfig"]

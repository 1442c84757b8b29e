"""Built-in environments; importing this package registers them."""

from security_verifiers.envs import config_audit, network_logs  # noqa: F401

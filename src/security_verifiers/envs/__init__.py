"""Built-in environments; importing this package registers them."""

from security_verifiers.envs import network_logs  # noqa: F401

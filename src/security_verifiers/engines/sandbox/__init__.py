"""The one sandbox for code that must not be trusted (model-written programs and patches).

bubblewrap with no network, a fresh PID namespace, uid 65534, a read-only runtime, one writable work
directory, rlimits and a wall-clock timeout; ``sv sandbox run`` runs a command in exactly this sandbox.
A sandbox that cannot start is an error (:class:`SandboxUnavailable`, or an :class:`InfraError` of kind
``sandbox`` for one run), never a reason to run the code without it. See ``command.py`` for each option
and why, ``host.py`` for the root and user modes.
"""

from security_verifiers.engines.sandbox.config import EXIT_KILLED, EXIT_TIMEOUT, SandboxLimits, SandboxResult
from security_verifiers.engines.sandbox.host import SandboxUnavailable
from security_verifiers.engines.sandbox.runner import check_available, run, run_async, sandbox_python

__all__ = [
    "EXIT_KILLED",
    "EXIT_TIMEOUT",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "check_available",
    "run",
    "run_async",
    "sandbox_python",
]

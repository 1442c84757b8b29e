"""Security Verifiers' ``network-logs`` environment as a verifiers 0.4.0 taskset: ``vf-eval sv-network-logs``.

verifiers finds it by its id (``sv-network-logs`` imports this module) and takes the taskset,
the harness and the env that ``__all__`` exports; all three are built in :mod:`security_verifiers.adapters.verifiers`.
"""

from security_verifiers.adapters.verifiers import SvEnv, SvHarness, SvTaskset


class NetworkLogsTaskset(SvTaskset):
    """The items of ``network-logs`` (``--env.taskset.split``, ``--env.taskset.options``)."""

    ENV = "network-logs"


__all__ = ["NetworkLogsTaskset", "SvEnv", "SvHarness"]

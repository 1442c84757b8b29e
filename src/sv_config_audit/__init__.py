"""Security Verifiers' ``config-audit`` environment as a verifiers 0.4.0 taskset: ``vf-eval sv-config-audit``.

verifiers finds it by its id (``sv-config-audit`` imports this module) and takes the taskset,
the harness and the env that ``__all__`` exports; all three are built in :mod:`security_verifiers.adapters.verifiers`.
"""

from security_verifiers.adapters.verifiers import SvEnv, SvHarness, SvTaskset


class ConfigAuditTaskset(SvTaskset):
    """The items of ``config-audit`` (``--env.taskset.split``, ``--env.taskset.options``)."""

    ENV = "config-audit"


__all__ = ["ConfigAuditTaskset", "SvEnv", "SvHarness"]

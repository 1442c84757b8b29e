"""Security Verifiers' ``code-repair`` environment as a verifiers 0.4.0 taskset: ``vf-eval sv-code-repair``.

verifiers finds it by its id (``sv-code-repair`` imports this module) and takes the taskset,
the harness and the env that ``__all__`` exports; all three are built in :mod:`security_verifiers.adapters.verifiers`.
"""

from security_verifiers.adapters.verifiers import SvEnv, SvHarness, SvTaskset


class CodeRepairTaskset(SvTaskset):
    """The items of ``code-repair`` (``--env.taskset.split``, ``--env.taskset.options``)."""

    ENV = "code-repair"


__all__ = ["CodeRepairTaskset", "SvEnv", "SvHarness"]

"""Security Verifiers' ``redteam-attack`` environment as a verifiers 0.4.0 taskset: ``vf-eval sv-redteam-attack``.

verifiers finds it by its id (``sv-redteam-attack`` imports this module) and takes the taskset,
the harness and the env that ``__all__`` exports; all three are built in :mod:`security_verifiers.adapters.verifiers`.
"""

from security_verifiers.adapters.verifiers import SvEnv, SvHarness, SvTaskset


class RedteamAttackTaskset(SvTaskset):
    """The items of ``redteam-attack`` (``--env.taskset.split``, ``--env.taskset.options``)."""

    ENV = "redteam-attack"


__all__ = ["RedteamAttackTaskset", "SvEnv", "SvHarness"]

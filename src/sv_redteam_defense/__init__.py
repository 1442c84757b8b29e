"""Security Verifiers' ``redteam-defense`` environment as a verifiers 0.4.0 taskset: ``vf-eval sv-redteam-defense``.

verifiers finds it by its id (``sv-redteam-defense`` imports this module) and takes the taskset,
the harness and the env that ``__all__`` exports; all three are built in :mod:`security_verifiers.adapters.verifiers`.
"""

from security_verifiers.adapters.verifiers import SvEnv, SvHarness, SvTaskset


class RedteamDefenseTaskset(SvTaskset):
    """The items of ``redteam-defense`` (``--env.taskset.split``, ``--env.taskset.options``)."""

    ENV = "redteam-defense"


__all__ = ["RedteamDefenseTaskset", "SvEnv", "SvHarness"]

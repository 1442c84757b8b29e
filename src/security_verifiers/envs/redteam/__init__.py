"""E5 ``redteam-attack`` and E6 ``redteam-defense``: prompt injection against a tool-using assistant, on one
scenario engine (:mod:`.scenario`), scored by exact checks on what happened."""

from security_verifiers.envs.redteam.attack.env import RedteamAttack
from security_verifiers.envs.redteam.defense.env import RedteamDefense

__all__ = ["RedteamAttack", "RedteamDefense"]

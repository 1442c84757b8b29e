"""AgentDojo's suites (workspace, travel, banking, slack; the ``agentdojo`` package, 0.1.35) as E6 items.

An item (kind ``"agentdojo"``) is a user task of a suite, with or without one of its injection tasks, the injection
written by one of E6's techniques. The suite's tools are the model's tools (:mod:`.toolbox`), on a fresh copy of the
suite's environment each episode; AgentDojo's own utility and security checks judge the replayed episode, with E6's
canary leak judge beside them, and E6's reward scores it (:mod:`.scoring`). Items are built by :func:`.suites.
build_items` (``sv data import redteam-defense --format agentdojo --suite S``); the scripted replies of the
``reference`` and ``naive`` baselines are in :mod:`.baselines`. Only :mod:`.items` is imported here: the rest imports
the ``agentdojo`` package when first used.
"""

from security_verifiers.envs.redteam.defense.agentdojo.items import (
    BENCHMARK_VERSION,
    SUITES,
    AgentDojoAttack,
    AgentDojoInput,
    AgentDojoTarget,
    GroundTruthCall,
)

__all__ = ["BENCHMARK_VERSION", "SUITES", "AgentDojoAttack", "AgentDojoInput", "AgentDojoTarget", "GroundTruthCall"]

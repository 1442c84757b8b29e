"""E3 code-repair: find, name and patch the weakness in a small Python program, judged by sandboxed probes."""

from security_verifiers.envs.code_repair.env import CodeRepair
from security_verifiers.envs.code_repair.items import Answer
from security_verifiers.envs.code_repair.scoring import CodeRepairConfig

__all__ = ["Answer", "CodeRepair", "CodeRepairConfig"]

"""The budgeted-toolbox kit: the tools an environment offers the model in an episode, with one call budget, one
refusal past it and JSON answers to bad calls. All four tool-using environments use it: E2's scanners and E3's
test runner and analysers (worker-backed, with per-call time and memory limits), E6's world and AgentDojo tools
(in process), and E5's ``deliver``.

Every toolbox is a :class:`CountingToolbox`: it counts each call, refused ones included, against a
:class:`CallBudget`, and refuses calls past it and unknown tools the same way. Slow or fragile tools are declared
as :class:`Tool` (a name, a description, a pydantic arguments model and a module-level function run in the worker)
on a :class:`BudgetedToolbox` subclass that binds a call's arguments to its episode, with the worker
:func:`shared_worker` keeps for the environment. Cheap deterministic simulations subclass
:class:`InProcessToolbox`, which the scorer replays on a fresh copy. Either way the scorer costs the calls over the
same :class:`CallBudget`.
"""

from security_verifiers.envs.kits.toolbox.arguments import parameters_schema, parse_arguments, parse_object
from security_verifiers.envs.kits.toolbox.toolbox import (
    BudgetedToolbox,
    CallBudget,
    CountingToolbox,
    InProcessToolbox,
    Tool,
    shared_worker,
    tool_error,
)

__all__ = ["BudgetedToolbox", "CallBudget", "CountingToolbox", "InProcessToolbox", "Tool", "parameters_schema",
           "parse_arguments", "parse_object", "shared_worker", "tool_error"]

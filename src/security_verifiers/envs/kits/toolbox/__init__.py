"""The budgeted-toolbox kit: the tools an environment offers the model in an episode (E2's scanners, E3's
test runner and analysers, E5/E6's world tools), with a call budget, per-call time and memory limits, and JSON
answers to bad calls.

An environment declares its tools as :class:`Tool` (a name, a description, a pydantic arguments model and a
module-level function run in the worker) on a :class:`BudgetedToolbox` subclass that binds a call's
arguments to its episode; its ``tools(item)`` builds one per episode with the worker :func:`shared_worker`
keeps for it; its scorer costs the calls over :class:`CallBudget` from the transcript.
"""

from security_verifiers.envs.kits.toolbox.arguments import parameters_schema, parse_arguments
from security_verifiers.envs.kits.toolbox.toolbox import BudgetedToolbox, CallBudget, Tool, shared_worker, tool_error

__all__ = ["BudgetedToolbox", "CallBudget", "Tool", "parameters_schema", "parse_arguments", "shared_worker",
           "tool_error"]

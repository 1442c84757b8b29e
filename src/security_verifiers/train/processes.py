"""Data-parallel ``sv train``: one pipeline over several processes of one machine.

Launched by ``accelerate launch --multi_gpu --num_processes N -m security_verifiers.cli train ...`` (or
``torchrun --nproc_per_node N -m security_verifiers.cli train ...``), every process runs the SFT and GRPO
trainers, which split each batch between the processes and average the gradients (transformers and TRL do the
data parallelism); the main process alone creates the run directory, plays the teacher, writes the manifest, the
step log and the summary, runs the held-out evaluations and prints. The others wait for it where they need what
it wrote (the starting checkpoint, the teacher's answers, a stage's final checkpoint).

The preset's batch figures are per optimiser step over all processes, as in a one-process run: each process takes
its share (``prompts_per_step * num_generations`` and ``sft.batch_size`` must divide by the processes), so a run
on N GPUs trains on the same budget as a run on one. Without a launcher (no ``WORLD_SIZE`` above 1) everything here
is a no-op that leaves accelerate's state alone: transformers initialises it as the trainer's ``use_cpu`` says.
"""

from __future__ import annotations

import os
from typing import Any

from security_verifiers.core.errors import ConfigError

#: How long a collective may wait (the others, while the main process plays the teacher): transformers' default
#: ``ddp_timeout`` is 30 minutes, too short for a slow teacher; a process that fails ends the launch at once anyway.
TIMEOUT_S = 4 * 3600


def state() -> Any:
    """accelerate's process state, initialised as transformers would (CPU processes use the gloo backend), with
    :data:`TIMEOUT_S` as the process group's timeout."""
    from datetime import timedelta

    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.cuda.is_available(), timeout=timedelta(seconds=TIMEOUT_S))


def launched() -> bool:
    """Whether this process is one of several started by a launcher."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def count() -> int:
    return int(state().num_processes) if launched() else 1


def is_main() -> bool:
    return bool(state().is_main_process) if launched() else True


def wait() -> None:
    """Every process waits here until all have come (the main process has written what the others read)."""
    if launched():
        state().wait_for_everyone()


def agreed(value: Any) -> Any:
    """The main process's ``value`` on every process (e.g. a run id made from the clock)."""
    if count() == 1:
        return value
    from accelerate.utils import broadcast_object_list

    return broadcast_object_list([value], from_process=0)[0]


def summed(counts: dict[str, int]) -> dict[str, int]:
    """Counts summed over the processes (every process calls this at the same point)."""
    if count() == 1:
        return counts
    from accelerate.utils import gather_object

    every = gather_object([counts])
    return {key: sum(int(c.get(key, 0)) for c in every) for key in counts}


def gathered(values: list[Any]) -> list[Any]:
    """Every process's ``values``, concatenated in process order (every process calls this at the same point)."""
    if count() == 1:
        return values
    from accelerate.utils import gather_object

    return list(gather_object(values))


def per_process(total: int, what: str) -> int:
    """One process's share of a per-step figure of the preset; a ConfigError when it does not divide."""
    n = count()
    if total % n:
        raise ConfigError(f"{what} is {total}, which {n} processes cannot share equally; make it a multiple of {n} "
                          "or launch a number of processes that divides it")
    return total // n


def check_one_machine() -> None:
    """The processes must share one file system: the others read what the main process wrote."""
    n, local = count(), os.environ.get("LOCAL_WORLD_SIZE")
    if n > 1 and local is not None and int(local) != n:
        raise ConfigError(f"sv train runs its processes on one machine ({local} of {n} processes are here); "
                          "launch all of them on one machine")

"""What a sandboxed run may use (:class:`SandboxLimits`) and what it did (:class:`SandboxResult`).

The limits are a pydantic config so that ``sv sandbox run`` derives its options from them and a scorer
can record them in a run's metadata; the result is what a scorer judges. A result always describes a
program that ran: a sandbox that could not start raises instead (see ``host.py`` and ``runner.py``), so
nothing here can be mistaken for the model's failure.
"""

from __future__ import annotations

import signal

from pydantic import BaseModel, ConfigDict, Field

#: Exit status of a run stopped by the wall-clock timeout, as coreutils ``timeout`` reports it.
EXIT_TIMEOUT = 124
#: Exit status of a run ended by SIGKILL (the CPU-time limit, the kernel's OOM killer): 128 + 9.
EXIT_KILLED = 128 + signal.SIGKILL

MIB = 1024 * 1024


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed run. Every limit is set as both soft and hard limit before the
    command starts, so the command cannot raise it again."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout: float = Field(10.0, gt=0, le=3600, allow_inf_nan=False,
                           description="Wall-clock seconds before the whole sandbox is killed (exit status 124).")
    cpu_s: int = Field(10, ge=1, le=3600,
                       description="CPU seconds per process (RLIMIT_CPU); past it the kernel kills the process "
                       "(exit status 137).")
    memory_mb: int = Field(1024, ge=16, le=65536,
                           description="Address space per process in MiB (RLIMIT_AS): an allocation past it fails "
                           "(Python raises MemoryError).")
    max_processes: int = Field(64, ge=1, le=4096,
                               description="Processes and threads the sandbox may hold at once (RLIMIT_NPROC, "
                               "counted in the sandbox's own user namespace): bounds a fork bomb.")
    file_mb: int = Field(64, ge=1, le=65536,
                         description="Largest file the command may write, in MiB (RLIMIT_FSIZE).")
    open_files: int = Field(256, ge=16, le=65536,
                            description="Open file descriptors per process (RLIMIT_NOFILE).")
    output_bytes: int = Field(1 * MIB, ge=1024, le=256 * MIB,
                              description="Bytes kept of stdout and of stderr each; the rest is read and dropped, "
                              "and the result says it was truncated.")
    tmp_mb: int = Field(64, ge=1, le=4096,
                        description="Size of the sandbox's private /tmp (a tmpfs, so it is memory) in MiB.")


class SandboxResult(BaseModel):
    """How a sandboxed command ended. ``exit_code`` follows the shell's convention: the command's own status,
    128 + N when signal N ended it (137 for SIGKILL), and 124 when the wall-clock timeout stopped it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exit_code: int
    timed_out: bool = Field(description="The wall-clock timeout fired and the sandbox was killed.")
    killed: bool = Field(description="A signal ended the command (a resource limit, a crash); the timeout is "
                         "``timed_out`` instead.")
    signal: int | None = Field(description="The signal that ended it, if one did.")
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    wall_s: float = Field(description="Seconds from starting bubblewrap to the end of the sandbox.")

    @property
    def ok(self) -> bool:
        """The command exited by itself with status 0."""
        return self.exit_code == 0 and not self.timed_out and not self.killed

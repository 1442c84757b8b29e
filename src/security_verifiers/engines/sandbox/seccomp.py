"""The seccomp filter of a judged program: ``getrandom`` fails with ENOSYS, everything else is allowed.

Why: a judged program's entropy must be an input the judge controls, as its files and its network are. CPython (and
glibc, OpenSSL) fall back to reading ``/dev/urandom`` when the ``getrandom`` system call is missing, and the judge
binds a pipe it feeds there (``envs/code_repair/judge/entropy.py``). Two runs fed the same bytes then draw the same
``secrets`` tokens, and a token that stays the same when only the bytes fed during its call change was not drawn
from fresh entropy (a Mersenne Twister seeded earlier, a clock): that is how a predictable token shows from outside
the program, with nothing of the judge in its process.

The filter is classic BPF as the kernel reads it (``struct sock_filter``), handed to bubblewrap's ``--seccomp FD``;
it is small enough to write out here rather than pull in libseccomp. A system call of another architecture (a
32-bit entry from a 64-bit process) passes: it can only fetch more entropy, which makes a program's tokens vary
where they must not, never the reverse.
"""

from __future__ import annotations

import platform
import struct

from security_verifiers.engines.sandbox.host import SandboxUnavailable

#: AUDIT_ARCH_* value of each supported machine, and getrandom's number there.
_ARCHES: dict[str, tuple[int, tuple[int, ...]]] = {
    "x86_64": (0xC000003E, (318, 0x40000000 | 318)),  # the x32 ABI's number carries bit 30
    "aarch64": (0xC00000B7, (278,)),
}
_LD_W_ABS, _JEQ_K, _RET_K = 0x20, 0x15, 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO_ENOSYS = 0x00050000 | 38


def _instruction(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def getrandom_enosys(machine: str | None = None) -> bytes:
    """The filter program for this machine (``platform.machine()``): load arch; other arch -> allow; load nr;
    getrandom -> ENOSYS; else allow."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        raise SandboxUnavailable(f"the judged sandbox knows the getrandom system call of {', '.join(_ARCHES)} only, "
                                 f"not of {machine}")
    arch, numbers = _ARCHES[machine]
    n = len(numbers)
    program = [_instruction(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
               _instruction(_JEQ_K, 0, n + 1, arch),  # not ours: jump to allow
               _instruction(_LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
    for index, number in enumerate(numbers):
        program.append(_instruction(_JEQ_K, n - index, 0, number))  # match: jump to the ENOSYS return
    program += [_instruction(_RET_K, 0, 0, _RET_ALLOW), _instruction(_RET_K, 0, 0, _RET_ERRNO_ENOSYS)]
    return b"".join(program)

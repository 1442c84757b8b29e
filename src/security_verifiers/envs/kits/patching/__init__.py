"""The patching kit: how an environment shows files to the model and applies the unified diff it returns
(E2 config-audit patches one config; E3 code-repair will patch a program of a few modules).

An environment shows its files with :func:`show_file` / :func:`show_files`, applies a reply's patch with
:func:`apply_patch` (one file) or :func:`apply_patch_files` (a fixed set of files: a diff that touches any
other file is a :class:`PatchError`), and writes its baselines' patches with :func:`unified_diff` /
:func:`files_diff`, which the applier reads back byte for byte.

Why a kit and not ``core/``: the code imports nothing beyond the standard library and could live in ``core``,
but it is a convention *of environments* (how a task's files are shown and how its patches are judged), which
only environments use; kept beside the other kits, it is where a newcomer building an environment looks.
"""

from security_verifiers.envs.kits.patching.diff import (
    MAX_DIFF_CHARS,
    MAX_DIFF_RATIO,
    MIN_DIFF_ALLOWANCE,
    PatchError,
    apply_patch,
    apply_patch_files,
)
from security_verifiers.envs.kits.patching.render import (
    NO_NEWLINE_MARKER,
    files_diff,
    show_file,
    show_files,
    unified_diff,
)

__all__ = [
    "MAX_DIFF_CHARS",
    "MAX_DIFF_RATIO",
    "MIN_DIFF_ALLOWANCE",
    "NO_NEWLINE_MARKER",
    "PatchError",
    "apply_patch",
    "apply_patch_files",
    "files_diff",
    "show_file",
    "show_files",
    "unified_diff",
]

"""The two texts every patching environment writes: the files it shows the model, and the diffs it expects back.

Files are shown as ``File `path`:`` followed by a fenced block (DESIGN.md, "Conventions every environment
shares"), so a model meets one layout in every environment and can name in its diff exactly the paths it was
shown. Diffs are rendered the way the applier (:mod:`.diff`) reads them, so that the baselines' patches and a
model's go through one code path.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

NO_NEWLINE_MARKER = "\\ No newline at end of file\n"
_BACKTICKS = re.compile(r"`{3,}")


def show_file(path: str, text: str, note: str | None = None) -> str:
    """One file as the model sees it: its path (and a ``note`` on how to treat it), then its text in a fenced
    block. The fence is longer than any run of backticks in the text, so a file that holds a fenced block itself
    (a README, a docstring) cannot end the block early; a text without a final newline gets one before the
    closing fence, so the fence never reads as part of the file's last line.

    >>> print(show_file("main.tf", "a = 1\\n"))
    File `main.tf`:
    <BLANKLINE>
    ```
    a = 1
    ```
    >>> print(show_file("README.md", "```\\nx\\n```", note="read-only"))
    File `README.md` (read-only):
    <BLANKLINE>
    ````
    ```
    x
    ```
    ````
    """
    fence = "`" * max([3, *(len(run) + 1 for run in _BACKTICKS.findall(text))])
    body = text if not text or text.endswith("\n") else text + "\n"
    label = f"File `{path}`" + (f" ({note})" if note else "")
    return f"{label}:\n\n{fence}\n{body}{fence}"


def show_files(files: Mapping[str, str], note: str | None = None) -> str:
    """Several files, each shown by :func:`show_file` (with the same ``note``), separated by a blank line."""
    return "\n\n".join(show_file(path, text, note) for path, text in files.items())


def unified_diff(original: str, fixed: str, filename: str) -> str:
    """The unified diff turning ``original`` into ``fixed`` (empty when they are equal).

    A last line without a newline is followed by GNU diff's ``\\ No newline at end of file`` marker, so that
    ``patch`` (and our own applier) reproduce ``fixed`` byte for byte.

    >>> print(unified_diff("a\\nb", "a\\nc\\n", "f.txt"), end="")
    --- a/f.txt
    +++ b/f.txt
    @@ -1,2 +1,2 @@
     a
    -b
    \\ No newline at end of file
    +c
    """
    if original == fixed:
        return ""
    out = []
    for line in difflib.unified_diff(original.splitlines(keepends=True), fixed.splitlines(keepends=True),
                                     fromfile=f"a/{filename}", tofile=f"b/{filename}"):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE_MARKER)
    return "".join(out)


def files_diff(originals: Mapping[str, str], fixed: Mapping[str, str]) -> str:
    """One diff turning each file of ``originals`` into its version in ``fixed`` (a file ``fixed`` leaves out is
    unchanged), in the order of ``originals``; a path of ``fixed`` that is not in ``originals`` is an error, as
    a patch may not create files."""
    unknown = sorted(set(fixed) - set(originals))
    if unknown:
        raise ValueError(f"a patch may only change the given files; not given: {', '.join(unknown)}")
    return "".join(unified_diff(text, fixed[path], path) for path, text in originals.items() if path in fixed)

"""How files are shown to the model (one convention for every environment), and the diffs the baselines write."""

import pytest

from security_verifiers.envs.kits.patching import apply_patch, show_file, show_files, unified_diff


@pytest.mark.parametrize(
    ("text", "note", "expected"),
    [
        ("a = 1\n", None, "File `main.tf`:\n\n```\na = 1\n```"),  # E2's layout, unchanged
        ("a = 1\n", "read-only", "File `main.tf` (read-only):\n\n```\na = 1\n```"),
        ("a = 1", None, "File `main.tf`:\n\n```\na = 1\n```"),  # no final newline: the fence stays on its own line
        ("", None, "File `main.tf`:\n\n```\n```"),  # an empty file
        ('"""Use it so:\n```\nx\n```\n"""\n', None,
         'File `main.tf`:\n\n````\n"""Use it so:\n```\nx\n```\n"""\n````'),  # a fence inside: a longer one outside
        ("s = '`````'\n", None, "File `main.tf`:\n\n``````\ns = '`````'\n``````"),
    ],
)
def test_show_file(text: str, note: str | None, expected: str) -> None:
    assert show_file("main.tf", text, note) == expected


def test_show_files_separates_files_by_a_blank_line_in_order() -> None:
    shown = show_files({"b.py": "x\n", "a.py": "y\n"}, note="read-only")
    assert shown == "File `b.py` (read-only):\n\n```\nx\n```\n\nFile `a.py` (read-only):\n\n```\ny\n```"


@pytest.mark.parametrize(
    ("original", "fixed"),
    [
        ("a\nb\n", "a\nc\n"),
        ("a\nb", "a\nc\n"),  # the original has no final newline
        ("a\nb\n", "a\nb"),  # the fix drops it
        ("", "x\n"),
        ("x\n", ""),
    ],
)
def test_unified_diff_applies_back_byte_for_byte(original: str, fixed: str) -> None:
    assert apply_patch(original, unified_diff(original, fixed, "f.txt"), "f.txt") == fixed


def test_unified_diff_of_equal_texts_is_empty() -> None:
    assert unified_diff("a\n", "a\n", "f") == ""

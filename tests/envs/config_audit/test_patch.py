"""The strict unified-diff applier: exact content, one file, bounded size; lenient hunk counts."""

import difflib

import pytest

from security_verifiers.envs.config_audit.patch import PatchError, apply_patch

ORIGINAL = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  hostPID: true\n  containers: []\n"
FIXED = ORIGINAL.replace("  hostPID: true\n", "  hostPID: false\n")


def diff(a: str, b: str, name: str = "manifest.yaml") -> str:
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"a/{name}", f"b/{name}"))


GOOD = diff(ORIGINAL, FIXED)


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        (GOOD, FIXED),  # difflib output
        (GOOD.replace("--- a/manifest.yaml", "--- manifest.yaml").replace("+++ b/", "+++ "), FIXED),  # no prefixes
        (GOOD.replace("@@ -3,5 +3,5 @@", "@@ -1,9 +1,9 @@"), FIXED),  # wrong start and counts: recounted, found
        ("diff --git a/manifest.yaml b/manifest.yaml\nindex 1..2 100644\n" + GOOD, FIXED),  # git headers
        (GOOD.replace("\n", "\r\n"), FIXED),  # CRLF line endings in the diff
        (diff(ORIGINAL, ORIGINAL + "---\nkind: X\n"), ORIGINAL + "---\nkind: X\n"),  # append at the end
    ],
)
def test_valid_patches_apply(patch: str, expected: str) -> None:
    assert apply_patch(ORIGINAL, patch, "manifest.yaml") == expected


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (GOOD.replace("a/manifest.yaml", "a/other.yaml").replace("b/manifest.yaml", "b/other.yaml"),
         "another file"),  # touches another file
        (GOOD + diff("x\n", "y\n", "../../etc/passwd"), "another file"),  # a second file section
        (GOOD.replace("-  hostPID: true", "-  hostPID: maybe"), "does not match"),  # context that is not there
        ("just text, no diff", "outside a hunk"),  # prose
        ("--- a/manifest.yaml\n+++ b/manifest.yaml\n", "no hunks"),  # headers only
        ("--- /dev/null\n+++ b/manifest.yaml\n@@ -0,0 +1 @@\n+x\n", "anew"),  # replace the file wholesale
        (GOOD + "+" + "x" * 300_000 + "\n", "too large"),  # a giant diff
        ("diff --git a/manifest.yaml b/manifest.yaml\ndeleted file mode 100644\n" + GOOD, "may not"),  # delete
    ],
)
def test_bad_patches_are_rejected(patch: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        apply_patch(ORIGINAL, patch, "manifest.yaml")


def test_missing_final_newline_is_kept() -> None:
    original = "a = 1\nb = 2"
    patch = ("--- a/main.tf\n+++ b/main.tf\n@@ -2 +2 @@\n-b = 2\n\\ No newline at end of file\n"
             "+b = 3\n\\ No newline at end of file\n")
    assert apply_patch(original, patch, "main.tf") == "a = 1\nb = 3"


def test_hunks_apply_in_order_without_overlap() -> None:
    original = "".join(f"line{i}\n" for i in range(30))
    fixed = original.replace("line3\n", "LINE3\n").replace("line25\n", "LINE25\n")
    assert apply_patch(original, diff(original, fixed, "f"), "f") == fixed

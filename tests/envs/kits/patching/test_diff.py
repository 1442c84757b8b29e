"""The strict unified-diff applier: exact content, only the given files, bounded size; lenient hunk counts."""

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from security_verifiers.envs.kits.patching import PatchError, apply_patch, apply_patch_files, files_diff

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
        ("diff --git a/manifest.yaml b/manifest.yaml\ndeleted file mode 100644\n" + GOOD, "may not delete files"),
        ("diff --git a/x.yaml b/x.yaml\nnew file mode 100644\n" + GOOD, "may not create files"),
        ("diff --git a/manifest.yaml b/y.yaml\nrename from manifest.yaml\n" + GOOD, "may not rename files"),
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


# -- several files (E3's program of a few modules) ----------------------------------------------------------------
MODULES = {"app.py": "import util\n\nprint(util.greet())\n", "util.py": "def greet():\n    return 'hi'\n",
           "tests_helper.py": "X = 1\n"}


def test_a_diff_may_patch_several_files_of_the_set() -> None:
    fixed = {"app.py": MODULES["app.py"].replace("print", "print(1) or print"),
             "util.py": MODULES["util.py"].replace("'hi'", "'hello'")}
    patched = apply_patch_files(MODULES, files_diff(MODULES, fixed))
    assert patched == {**MODULES, **fixed}
    assert list(patched) == list(MODULES)  # the set, in its order, untouched files included


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        (diff("x\n", "y\n", "evil.py"), "another file \\('evil.py'\\); only 'app.py', 'util.py', 'tests_helper.py'"),
        (diff(MODULES["util.py"], "", "util.py") + diff("", "x\n", "new.py"), "another file"),  # a new module
        (diff(MODULES["util.py"], "x\n", "util.py") * 2, "more than one section for 'util.py'"),
        (diff(MODULES["util.py"], "x\n", "util.py").replace("+++ b/util.py", "+++ b/app.py"), "renames 'util.py'"),
        ("@@ -1 +1 @@\n-X = 1\n+X = 2\n", "before any file header"),  # which file? several could be meant
        ("--- /dev/null\n+++ b/util.py\n@@ -0,0 +1 @@\n+x\n", "anew"),
        (diff(MODULES["util.py"], "x\n", "util.py") + "+" + "y" * 5000 + "\n", "3 files of"),  # size over the set
    ],
)
def test_a_diff_outside_the_set_or_ambiguous_is_refused(diff: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        apply_patch_files(MODULES, diff)


def test_one_file_keeps_the_one_file_conventions() -> None:
    """Bare hunks are the one file's; its messages name it as E2's always did."""
    assert apply_patch_files({"f": "a\n"}, "@@ -1 +1 @@\n-a\n+b\n") == {"f": "b\n"}
    with pytest.raises(PatchError, match="more than one file section"):
        apply_patch_files({"f": "a\nb\n"}, diff("a\nb\n", "A\nb\n", "f") + diff("a\nb\n", "a\nB\n", "f"))


def test_no_files_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="at least one file"):
        apply_patch_files({}, GOOD)


def test_files_diff_refuses_new_files() -> None:
    with pytest.raises(ValueError, match="not given: new.py"):
        files_diff(MODULES, {"new.py": "x\n"})


_LINES = st.lists(st.sampled_from(["a", "b", "c", "", "  d", "e = 1", "---", "+++ x", "@@ y", "\\ z"]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["m.py", "n.py", "o.py"]), st.tuples(_LINES, _LINES, st.booleans(),
                                                                          st.booleans()), min_size=1))
def test_the_applier_reads_back_what_the_renderer_writes(files: dict) -> None:
    """Any edit of any files of a set, final newlines dropped or added, round-trips through diff and apply."""
    def text(lines: list[str], newline: bool) -> str:
        return "\n".join(lines) + ("\n" if newline and lines else "")

    originals = {path: text(old, end) for path, (old, _, end, _) in files.items()}
    fixed = {path: text(new, end) for path, (_, new, _, end) in files.items()}
    rendered = files_diff(originals, fixed)
    if rendered:
        assert apply_patch_files(originals, rendered) == fixed

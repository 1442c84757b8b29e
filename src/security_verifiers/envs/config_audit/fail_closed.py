"""What a Terraform patch leaves undetermined, and how the fix credit stays fail-closed about it.

A finding counts as fixed only when the patched configuration is provably secure. The engines read the
evaluated file (:mod:`security_verifiers.engines.terraform_eval`), so every value the files determine is judged
as Terraform would compute it. What remains is a value the files cannot determine: a variable without a
default, a function the evaluator does not run, a template directive. An engine that compares such a value with
the insecure literal sees "not insecure", so a patch could replace ``publicly_accessible = true`` with
``publicly_accessible = var.x`` and look fixed.

The rule here: every value that the patch made undetermined is *assumed to be what the original had there* (or
absent, where the original had nothing). :func:`fail_closed_variant` writes that assumption as a text; a finding
of the original that the engines still report on the variant is not fixed, except for the rules about a literal
written in the file (``Rule.hardcoded``: secrets): there, a value supplied from outside is the fix. Computed
references to things the module declares (``aws_kms_key.k.arn``) are values, not unknowns: pointing
``kms_key_id`` at a declared key is an honest fix and is kept.

:func:`type_issues` applies Terraform's type rules where the original shows the type: an attribute the original
set to a bool (or a number) must still convert to one (``"TRUE"`` is not a bool, ``"yes"`` is not a number).
"""

from __future__ import annotations

from typing import Any

from security_verifiers.engines.configs import evaluated_terraform, parse_terraform
from security_verifiers.engines.terraform_eval import Attribute, EvaluatedFile, first_unknown, is_known
from security_verifiers.engines.terraform_functions import TerraformError, to_bool, to_number
from security_verifiers.engines.validate import Issue


def _undetermined(attribute: Attribute, original: Attribute | None) -> bool:
    """Whether the patch left this attribute's value undetermined where the original had a value to judge."""
    if original is not None and original.source == attribute.source:
        return False  # the original had the same expression: nothing the patch did
    held_literal = original is not None and is_known(original.value) and isinstance(original.value, bool | int | float)
    missing = first_unknown(attribute.value)
    if missing is None:
        # Known, but read from another resource: engines see the reference as written, so where the original
        # held a literal setting, judge it as that literal (the reference may carry the same insecure value).
        return attribute.references and held_literal
    if not missing.reference:
        return True
    # A computed reference is a real value, but where the original held a literal bool or number a reference
    # (an ARN, an id) cannot be one: judge it as the original value.
    return held_literal


def _block_spans(text: str, context: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """Character spans of the resource and data blocks of ``text``, by address (whole lines)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = {}
    for block in parse_terraform(text, context).blocks:
        if 1 <= block.start_line <= block.end_line < len(starts):
            spans[block.address] = (starts[block.start_line - 1], starts[block.end_line])
    return spans


def fail_closed_variant(original: str, patched: str, context: tuple[str, ...] = ()) -> str | None:
    """``patched`` with every value the patch made undetermined put back to the original's (or removed where
    the original had none); ``None`` when there is no such value (the patched text is judged as it is).

    A value undetermined inside a ``dynamic`` block (its ``for_each`` unknown, or an element's content) cannot be
    put back value by value: the block generates blocks the original may have written one by one. The whole
    resource is then put back as the original wrote it, so every finding of the original on it stays open."""
    before = {(a.address, a.path): a for a in evaluated_terraform(original, context).attributes}
    after = evaluated_terraform(patched, context).attributes
    edits: list[tuple[int, int, str]] = []
    reverted: set[str] = set()
    for attribute in after:
        old = before.get((attribute.address, attribute.path))
        if not _undetermined(attribute, old):
            continue
        if attribute.dynamic and any(address == attribute.address for address, _ in before):
            reverted.add(attribute.address)
        elif old is not None:
            edits.append((attribute.start, attribute.end, old.source))
        else:
            edits.append((attribute.line_start, attribute.end, ""))
    if reverted:
        patched_spans, original_spans = _block_spans(patched, context), _block_spans(original, context)
        spans = {address: patched_spans[address] for address in reverted
                 if address in patched_spans and address in original_spans}
        edits = [e for e in edits if not any(start <= e[0] < end for start, end in spans.values())]
        for address, (start, end) in spans.items():
            old_start, old_end = original_spans[address]
            edits.append((start, end, original[old_start:old_end]))
    if not edits:
        return None
    text = patched
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _type_problem(expected: Any, value: Any) -> str | None:
    try:
        if isinstance(expected, bool):
            to_bool(value)
        elif isinstance(expected, int | float):
            to_number(value)
    except TerraformError as err:
        return str(err)
    return None


def type_issues(original: EvaluatedFile, patched: EvaluatedFile) -> list[Issue]:
    """Attributes whose type the original shows (a bool or number literal) and that the patch set to a value
    Terraform cannot convert to that type: the patched file would not plan."""
    before = {(a.address, a.path): a.value for a in original.attributes}
    issues = []
    for attribute in patched.attributes:
        expected = before.get((attribute.address, attribute.path))
        if not isinstance(expected, bool | int | float) or isinstance(expected, str):
            continue
        value = attribute.value
        if not is_known(value) or value is None:
            continue
        problem = _type_problem(expected, value)
        if problem is not None:
            where = f"{attribute.address}.{attribute.path}"
            issues.append(Issue(("type", attribute.address, attribute.path), f"{where}: {problem}"))
    return issues


def terraform_type_issues(original: str, patched: str, context: tuple[str, ...] = ()) -> list[Issue]:
    return type_issues(evaluated_terraform(original, context), evaluated_terraform(patched, context))

"""The Terraform secret fixer, shared by the core rules (passwords, private keys, AWS keys) and Checkov's (a
credential in a Lambda's environment): the literal becomes ``var.<name>``, a new variable marked sensitive."""

from __future__ import annotations

import re

from security_verifiers.engines.configs import TFBlock
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.common import (
    AWS_KEY_ID_RE,
    AWS_SECRET_KEY_NAME_RE,
    PASSWORD_KEY_RE,
    PRIVATE_KEY_RE,
    slug,
)
from security_verifiers.envs.config_audit.autofix.hcl_text import HclText, Span, scan


def _whole_file(hcl: HclText) -> Span:
    return Span(0, len(hcl.lines), 1)



#: ``key = "literal"`` on one line. The value is greedy: it may hold quotes inside an interpolation
#: (``"P@ss${""}"``); a trailing comment is tolerated (and dropped with the literal).
ATTR_LITERAL_RE = re.compile(r'^(?P<indent>\s*)(?P<key>[\w-]+)(?P<eq>\s*=\s*)"(?P<value>.*)"\s*(?:(#|//)[^"]*)?$')
#: A value made only of interpolations ("${var.a}${var.b}") is a reference, not a literal.
ONLY_INTERPOLATION_RE = re.compile(r"^(\$\{[^}\n]*\})+$")


def _secret_lines(hcl: HclText, span: Span, rule_id: str) -> list[int]:
    """Lines of ``span`` that hold (or start the heredoc holding) the literal ``rule_id`` is about."""
    lines, infos = hcl.lines, scan(hcl.lines)
    out: list[int] = []
    for i in range(span.lo, span.hi):
        line = lines[i]
        if rule_id == "tf-hardcoded-password":
            match = ATTR_LITERAL_RE.match(line)
            hit = bool(match and match.group("value") and PASSWORD_KEY_RE.search(match.group("key"))
                       and not ONLY_INTERPOLATION_RE.match(match.group("value")))
        elif rule_id == "cfg-hardcoded-private-key":
            hit = bool(PRIVATE_KEY_RE.search(line))
        else:
            match = ATTR_LITERAL_RE.match(line)
            hit = bool(AWS_KEY_ID_RE.search(line)) or bool(
                match and AWS_SECRET_KEY_NAME_RE.search(match.group("key")) and len(match.group("value")) >= 20)
        if hit:
            start = i
            while start > 0 and infos[start].heredoc:  # the heredoc's attribute line
                start -= 1
            if start not in out:
                out.append(start)
    return out


def _move_literal_to_variable(hcl: HclText, index: int) -> bool:
    """Replace the value starting on line ``index`` by ``var.<name>`` (a new sensitive variable); inside a
    ``variable`` block, drop its ``default`` and mark it sensitive instead; a comment line is deleted."""
    lines, infos = hcl.lines, scan(hcl.lines)
    if lines[index].lstrip().startswith(("#", "//")):  # commented-out code still leaks the secret
        hcl.replace_lines(index, index + 1, [])
        return True
    match = re.match(r"^(\s*)([\w-]+)(\s*=\s*)", lines[index])
    if match is None:
        return False
    indent, key = match.group(1), match.group(2)
    end = index + 1
    while end < len(lines) and (infos[end].heredoc or infos[end].depth > infos[index].depth):
        end += 1
    enclosing = hcl.enclosing_block(index)
    keyword, labels = enclosing if enclosing else ("", [])
    if keyword == "variable" and key == "default":
        already = "sensitive" in _block_lines(hcl, index)
        hcl.replace_lines(index, end, [] if already else [f"{indent}sensitive = true\n"])
        return True
    owner = labels[-1] if labels else ""
    wanted = slug(f"{owner}_{key}" if owner and not key.startswith(owner) else key)
    name = hcl.add_sensitive_variable(wanted, f"{key} of {'.'.join(labels) or keyword} (moved out of the code)")
    hcl.replace_lines(index, end, [f"{indent}{key}{match.group(3)}var.{name}\n"])
    return True


def _block_lines(hcl: HclText, index: int) -> str:
    lines, infos = hcl.lines, scan(hcl.lines)
    lo = index
    while lo > 0 and infos[lo].depth > 0:
        lo -= 1
    hi = index
    while hi + 1 < len(lines) and infos[hi + 1].depth > 0:
        hi += 1
    return "".join(lines[lo:hi + 1])


def fix_literal_secret(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """Passwords, private keys, AWS keys: the literal becomes ``var.<name>`` with ``sensitive = true``. Searched
    in the flagged block, else the whole file (the literal may sit in a provider or variable block)."""
    span = hcl.body(block) if block is not None else _whole_file(hcl)
    targets = _secret_lines(hcl, span, finding.rule_id)
    if not targets and block is not None:
        targets = _secret_lines(hcl, _whole_file(hcl), finding.rule_id)
    changed = False
    for index in sorted(targets, reverse=True):  # bottom-up: earlier line numbers stay valid
        changed = _move_literal_to_variable(hcl, index) or changed
    return changed

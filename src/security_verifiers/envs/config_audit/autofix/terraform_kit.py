"""Building blocks of the Terraform fixers: set attributes (also in nested blocks), find a resource's companions,
append companion resources and input variables, and refer to a key of the file or to a new variable.

A fixer is ``(hcl, block, finding) -> changed``; it edits :class:`~.hcl_text.HclText` in place. Blocks are
re-read after every edit (their line ranges move), so helpers take addresses, never stale spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from security_verifiers.engines.configs import TFBlock
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.hcl_text import HclText, Span

TFFixer = Callable[[HclText, TFBlock | None, Finding], bool]
#: What an address range open to the internet is narrowed to.
INTERNAL_CIDR = "10.0.0.0/8"
ADMIN_PORTS = (22, 3389)


def set_attrs(*pairs: tuple[str, str]) -> TFFixer:
    """A fixer that sets top-level attributes of the flagged block."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None:
            return False
        changed = False
        for key, value in pairs:
            current = hcl.block(block.address)
            assert current is not None
            changed = hcl.set_attr(hcl.body(current), key, value) or changed
        return changed
    fix.__doc__ = "Set " + ", ".join(f"{k} = {v}" for k, v in pairs) + "."
    return fix


def set_if_present(key: str, value: str) -> TFFixer:
    """Set a legacy attribute only where the file already uses it (adding it would clash with newer providers)."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        return block is not None and key in block.attributes and hcl.set_attr(hcl.body(block), key, value)
    return fix


def set_present_or(keys: tuple[str, ...], value: str) -> TFFixer:
    """Set every one of ``keys`` (an argument and its older name) the block uses; none used: the first.

    Why not always the first: both names in one block is a conflict for the provider."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None:
            return False
        present = [k for k in keys if k in block.attributes] or [keys[0]]
        return set_attrs(*[(k, value) for k in present])(hcl, block, finding)
    return fix


def both(*fixers: TFFixer) -> TFFixer:
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        changed = False
        for fixer in fixers:
            changed = fixer(hcl, hcl.block(block.address) if block else None, finding) or changed
        return changed
    return fix


def companions(hcl: HclText, bucket: TFBlock, type_: str) -> list[TFBlock]:
    """Blocks of ``type_`` that apply to ``bucket``: by reference (``aws_s3_bucket.NAME.id`` / ``.bucket``) or
    by the bucket's literal name, as the rules match them."""
    ref = re.compile(rf"^\$\{{{re.escape(bucket.address)}(\[[^\]]*\])?\.(id|bucket)\}}$")
    name = bucket.attributes.get("bucket")
    return [b for b in hcl.blocks() if b.type == type_ and (
        ref.match(str(b.attributes.get("bucket", ""))) or (isinstance(name, str) and "${" not in name
                                                            and b.attributes.get("bucket") == name))]


def relink(hcl: HclText, bucket: TFBlock, type_: str) -> bool:
    """Companions of ``type_`` that name the bucket by its literal name (or by its literal ``bucket`` attribute,
    which evaluates to that name) now reference the bucket's id: graph checks follow references only."""
    changed = False
    for companion in companions(hcl, bucket, type_):
        current = hcl.block(companion.address)
        assert current is not None
        span = hcl.body(current)
        found = hcl.find_attr(span, "bucket")
        if found is not None and f"{bucket.address}.id" not in hcl.lines[found[0]]:
            changed = hcl.set_attr(span, "bucket", f"{bucket.address}.id") or changed
    return changed


def free_name(hcl: HclText, type_: str, wanted: str) -> str:
    taken = {b.name for b in hcl.blocks() if b.type == type_}
    name, n = wanted, 2
    while name in taken:
        name, n = f"{wanted}_{n}", n + 1
    return name


def append_companion(hcl: HclText, bucket: TFBlock, type_: str, body: str) -> None:
    name = free_name(hcl, type_, bucket.name)
    hcl.append(f'resource "{type_}" "{name}" {{\n  bucket = {bucket.address}.id\n{body}}}\n')


def nested(hcl: HclText, address: str, *path: str, create: bool = False) -> Span | None:
    """The span of the nested block at ``path`` inside resource ``address`` (the first of each name); with
    ``create``, missing blocks are inserted empty before the parent's closing brace."""
    block = hcl.block(address)
    if block is None:
        return None
    span = hcl.body(block)
    for name in path:
        found = hcl.sub_blocks(span, name)
        if not found:
            if not create:
                return None
            _insert_lines(hcl, span, [f"{name} {{\n", "}\n"])
            return nested(hcl, address, *path, create=True)
        span = found[0]
    return span


def _insert_lines(hcl: HclText, span: Span, lines: list[str]) -> None:
    """Insert ``lines`` (relative indent) just before the closing brace of ``span``, opening a one-line block."""
    indent = "  " * span.depth
    if span.hi - 1 == span.lo:  # `x {}` on one line
        line = hcl.lines[span.lo]
        head = line[:line.rindex("}")].rstrip()
        hcl.replace_lines(span.lo, span.lo + 1, [head + "\n", "  " * (span.depth - 1) + "}\n"])
        span = Span(span.lo, span.lo + 2, span.depth)
    hcl.replace_lines(span.hi - 1, span.hi - 1, [indent + line for line in lines])


def add_block(hcl: HclText, address: str, path: tuple[str, ...], block_lines: list[str]) -> None:
    """Insert ``block_lines`` (indented relative to the parent's attributes) into the block at ``path``."""
    span = nested(hcl, address, *path, create=True)
    assert span is not None
    _insert_lines(hcl, span, block_lines)


def set_in(hcl: HclText, address: str, path: tuple[str, ...], key: str, value: str) -> bool:
    """``key = value`` inside the nested block at ``path`` (created when missing)."""
    span = nested(hcl, address, *path, create=True)
    assert span is not None
    return hcl.set_attr(span, key, value)


def set_nested(path: tuple[str, ...], *pairs: tuple[str, str]) -> TFFixer:
    """A fixer that sets attributes of the nested block at ``path`` of the flagged block."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None:
            return False
        changed = False
        for key, value in pairs:
            changed = set_in(hcl, block.address, path, key, value) or changed
        return changed
    fix.__doc__ = f"Set {', '.join(f'{k} = {v}' for k, v in pairs)} in {'.'.join(path)}."
    return fix


def drop_attr(hcl: HclText, span: Span, key: str) -> bool:
    found = hcl.find_attr(span, key)
    if found is None:
        return False
    hcl.replace_lines(found[0], found[1], [])
    return True


def shared_variable(hcl: HclText, name: str, description: str, type_: str = "string") -> str:
    """``var.<name>``, declared once per file: an input several fixes share (the replication role, the subnet of
    the private endpoints)."""
    if name not in hcl.variable_names():
        hcl.add_variable(name, description, type_)
    return f"var.{name}"


def key_reference(hcl: HclText, type_: str, attribute: str, variable: str, description: str) -> str:
    """A reference to the first ``type_`` key of the file (``aws_kms_key.x.arn``), else to a new variable: the
    customer-managed key a fix encrypts with."""
    keys = [b for b in hcl.blocks() if b.block == "resource" and b.type == type_]
    if keys:
        return f"{keys[0].address}.{attribute}"
    return "var." + hcl.add_variable(variable, description)


# --- Azure network rules (core NSG fixer and Checkov's HTTP rule) -------------------------------------------


def _azure_ports_cover(text: str, ports: tuple[int, ...] = ADMIN_PORTS) -> bool:
    match = re.search(r"\bdestination_port_ranges?\s*=\s*(.*)", text)
    if not match:
        return True
    for token in re.findall(r'"([^"]*)"', match.group(1)):
        low, _, high = token.partition("-")
        if token.strip() in ("*", "Any"):
            return True
        if low.isdigit() and any(int(low) <= p <= int(high if high.isdigit() else low) for p in ports):
            return True
    return False


AZURE_INTERNET = r'"(?i:\*|0\.0\.0\.0(/0)?|::/0|internet|any)"'


def _narrow_azure_source(hcl: HclText, span: Span) -> bool:
    """source_address_prefix "*" / Internet / 0.0.0.0/0 -> "VirtualNetwork"; in source_address_prefixes -> 10/8."""
    changed = hcl.sub(span, r"(\bsource_address_prefix\s*=\s*)" + AZURE_INTERNET, r'\1"VirtualNetwork"')
    found = hcl.find_attr(span, "source_address_prefixes")
    if found is not None:
        changed = hcl.sub(Span(found[0], found[1], span.depth), AZURE_INTERNET, f'"{INTERNAL_CIDR}"') or changed
    return changed


def narrow_azure_rules(hcl: HclText, block: TFBlock, ports: tuple[int, ...]) -> bool:
    """The inbound Allow rules of an NSG (or the rule resource) that reach one of ``ports`` from the internet take
    the virtual network as their source."""
    body = hcl.body(block)
    rules = hcl.sub_blocks(body, "security_rule")
    if not rules:
        return _narrow_azure_source(hcl, body)
    changed = False
    for span in rules:
        text = "".join(hcl.lines[span.lo:span.hi])
        if re.search(r'(?i)direction\s*=\s*"Outbound"|access\s*=\s*"Deny"', text) or \
                not _azure_ports_cover(text, ports):
            continue  # narrowing a Deny rule would weaken it
        changed = _narrow_azure_source(hcl, span) or changed
    return changed

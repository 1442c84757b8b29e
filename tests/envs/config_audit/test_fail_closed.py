"""Fail-closed fix credit (the issue "Real use of E1/E2", part 1).

* Equivalent spellings of a value are the same value to every engine: rewriting the literals of an insecure
  file into equivalent Terraform expressions or equivalent YAML leaves the oracle's findings unchanged
  (property tests over every rule fixture that fires).
* Patches that only re-spell the insecure value, hide it behind a variable nobody declares or without a default,
  or shadow a YAML key with a second copy earn no fix; honest fixes still do.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.engines.configs import evaluated_terraform
from security_verifiers.engines.findings import catalog
from security_verifiers.engines.oracle import get_oracle
from security_verifiers.envs.config_audit import ConfigAudit
from security_verifiers.envs.config_audit.autofix import autofix
from security_verifiers.envs.config_audit.baselines import silencing_patch
from security_verifiers.envs.config_audit.fail_closed import fail_closed_variant
from security_verifiers.envs.config_audit.generation.generator import findings_records
from security_verifiers.envs.kits.patching import unified_diff

FIXTURES = Path(__file__).resolve().parents[2] / "engines" / "fixtures" / "rules"
assert FIXTURES.is_dir(), FIXTURES
ENV = ConfigAudit()
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def firing(suffix: str) -> list[Path]:
    """Firing fixtures of every rule our own engines implement: the Rego rules, and the secret rules (semgrep reads
    the raw text; the secret-values engine reads the same values however they are spelled)."""
    rules = catalog()
    own = [p for p in sorted(FIXTURES.glob(f"*/fire*{suffix}")) if rules[p.parent.name].engine == "rego"]
    return own + sorted((FIXTURES.parent / "semgrep").glob(f"fire*{suffix}"))


def keys(platform: str, text: str) -> set[tuple[str, str]]:
    result = get_oracle().scan(platform, text)
    assert result.parse_error is None, result.parse_error
    return result.keys


# ------------------------------------------------------------------------------------------ Terraform rewrites
def _string_rewrites(value: str) -> list[str]:
    literal = json.dumps(value)
    half = len(value) // 2
    out = ['"${' + literal + '}"', f'format("%s", {literal})', f'join("", [{json.dumps(value[:half])}, '
           f'{json.dumps(value[half:])}])', f'"{value[:half]}${{"{value[half:]}"}}"', f"true ? {literal} : \"x\""]
    if value == value.lower():
        out.append(f"lower({json.dumps(value.upper())})")
    return out


def _rewrites(value: Any, source: str) -> list[str]:
    """Expressions that Terraform evaluates to exactly ``value`` (written ``source``)."""
    if isinstance(value, bool):
        word = "true" if value else "false"
        return [f"!{'false' if value else 'true'}", f"({word})", f"{word} == true ? true : false",
                f'tobool("{word}")', f"1 == 1 && {word}", f"1 == 2 || {word}"]
    if isinstance(value, int):
        return [f"{value} + 0", f"({value - 1}) + 1", f"{value} * 1", f'tonumber("{value}")', f"max({value}, {value})"]
    if isinstance(value, str) and '"' not in value and "\\" not in value and "$" not in value and "%" not in value:
        return _string_rewrites(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [f"concat({source})", f"tolist({source})", f"[for x in {source} : x]", f"distinct({source})"]
    return []


def rewrite_terraform(text: str, pick: Any) -> str:
    """Every literal attribute of every resource re-spelled (``pick`` chooses among the rewrites), some through a
    local value or a variable default."""
    edits: list[tuple[int, int, str]] = []
    declarations: list[str] = []
    for n, attribute in enumerate(evaluated_terraform(text).attributes):
        if attribute.address.split(".")[0] in ("variable", "locals", "output", "provider", "terraform", "module"):
            continue
        options = _rewrites(attribute.value, attribute.source) if "${" not in attribute.source \
            and "<<" not in attribute.source else []
        if not options:
            continue
        choice = pick(options + [f"local.sv_eq_{n}", f"var.sv_eq_{n}"])
        if choice == f"local.sv_eq_{n}":
            declarations.append(f"locals {{\n  sv_eq_{n} = {attribute.source}\n}}\n")
        elif choice == f"var.sv_eq_{n}":
            declarations.append(f'variable "sv_eq_{n}" {{\n  default = {attribute.source}\n}}\n')
        edits.append((attribute.start, attribute.end, choice))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text + ("\n" + "\n".join(declarations) if declarations else "")


@pytest.mark.parametrize("path", firing(".tf"), ids=lambda p: f"{p.parent.name}/{p.name}")
@SETTINGS
@given(data=st.data())
def test_equivalent_terraform_is_judged_the_same(path: Path, data: st.DataObject) -> None:
    text = path.read_text(encoding="utf-8")
    rewritten = rewrite_terraform(text, lambda options: data.draw(st.sampled_from(options)))
    assert rewritten != text
    assert keys("terraform", rewritten) == keys("terraform", text), rewritten


# ------------------------------------------------------------------------------------------ YAML rewrites
def rewrite_yaml(text: str, style: str) -> str:
    """The same documents in another YAML spelling: flow style, every string double-quoted, or canonical."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    if style == "flow":
        return yaml.safe_dump_all(docs, default_flow_style=True, width=10_000)
    if style == "quoted":
        return yaml.safe_dump_all(docs, default_style='"', sort_keys=False)
    return yaml.safe_dump_all(docs, canonical=True)


@pytest.mark.parametrize("path", firing(".yaml"), ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("style", ["flow", "quoted", "canonical"])
def test_equivalent_yaml_is_judged_the_same(path: Path, style: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert keys("kubernetes", rewrite_yaml(text, style)) == keys("kubernetes", text)


# ------------------------------------------------------------------------------------------ silencing patches
def item_for(platform: str, text: str, filename: str) -> Item:
    result = get_oracle().scan(platform, text)
    return Item(id="fixture", split="test", input={"platform": platform, "filename": filename, "text": text},
                target={"findings": findings_records(result.findings), "fixed": None, "mutations": []})


def patch_outcome(item: Item, new_text: str) -> dict[str, Any]:
    answer = json.dumps({"findings": [], "patch": unified_diff(item.input["text"], new_text, item.input["filename"])})
    return ENV.score(item, Transcript(messages=[Message(role="assistant", content=answer)])).outcome


def _silenceable(path: Path) -> tuple[Item, str] | None:
    platform = "terraform" if path.suffix == ".tf" else "kubernetes"
    text = path.read_text(encoding="utf-8")
    item = item_for(platform, text, path.name)
    fixed = autofix(platform, text, [f for f in get_oracle().scan(platform, text).findings]).text
    return item, fixed


@pytest.mark.parametrize("path", firing(".tf") + firing(".yaml"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_silencing_patches_fix_nothing(path: Path) -> None:
    item, fixed = _silenceable(path)
    platform, text = item.input["platform"], item.input["text"]
    for mode in ("equivalent", "undeclared"):
        hacked = silencing_patch(platform, text, fixed, mode)
        if hacked == text:
            continue  # autofix changed no literal here (it added settings): nothing to re-spell
        outcome = patch_outcome(item, hacked)
        assert outcome["patch_fixed_w"] == 0.0, (mode, outcome.get("patch_error"), hacked)


# ------------------------------------------------------------------------------------------ the rules, by hand
TF = '''variable "public" {
  type = bool
}

variable "public_default" {
  type    = bool
  default = false
}

resource "aws_kms_key" "k" {
  description         = "db"
  enable_key_rotation = true
}

resource "aws_db_instance" "db" {
  identifier          = "orders"
  engine              = "postgres"
  instance_class      = "db.t3.micro"
  publicly_accessible = true
  storage_encrypted   = true
}
'''
K8S = '''apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: nginx:1.25
    securityContext:
      privileged: true
'''


@pytest.mark.parametrize(("replacement", "fixed", "error"), [
    ("publicly_accessible = false", True, None),  # the honest fix
    ("publicly_accessible = var.public_default", True, None),  # a variable whose default is secure
    ("publicly_accessible = !true", True, None),  # an expression that evaluates to the secure value
    ("publicly_accessible = !false", False, None),  # the insecure value re-spelled
    ('publicly_accessible = "${true}"', False, None),  # ... as a template
    ("publicly_accessible = 1 == 1 ? true : false", False, None),  # ... as a conditional on constants
    ("publicly_accessible = var.public", False, None),  # no default: unknown, so it stays open (fail-closed)
    ("publicly_accessible = aws_kms_key.k.arn", False, None),  # a computed string where a bool was: open
    ("publicly_accessible = var.nope", False, "not declared"),  # a variable nobody declares: invalid
    ('publicly_accessible = "TRUE"', False, "a bool is required"),  # not a Terraform bool: invalid
    ('publicly_accessible = tobool("yes")', False, "a bool is required"),  # Terraform rejects it: invalid
])
def test_terraform_patches_are_judged_fail_closed(replacement: str, fixed: bool, error: str | None) -> None:
    item = item_for("terraform", TF, "main.tf")
    assert ("tf-aws-rds-public", "aws_db_instance.db") in {(f["rule_id"], f["resource"])
                                                          for f in item.target["findings"]}
    outcome = patch_outcome(item, TF.replace("publicly_accessible = true", replacement))
    public_fixed = outcome["patch_fixed_w"] >= catalog()["tf-aws-rds-public"].severity.weight
    assert public_fixed is fixed, outcome
    if error is None:
        assert outcome["patch_error"] is None, outcome["patch_error"]
    else:
        assert error in (outcome["patch_error"] or ""), outcome["patch_error"]


def test_a_reference_to_a_declared_key_is_an_honest_fix() -> None:
    """Computed references to declared resources are real values: pointing a setting at a declared key counts."""
    text = TF.replace("  storage_encrypted   = true\n", "")
    item = item_for("terraform", text, "main.tf")
    before = {f["rule_id"] for f in item.target["findings"]}
    assert "tf-aws-rds-unencrypted" in before
    patched = text.replace('instance_class      = "db.t3.micro"',
                           'instance_class      = "db.t3.micro"\n  storage_encrypted   = true\n'
                           "  kms_key_id          = aws_kms_key.k.arn")
    outcome = patch_outcome(item, patched)
    assert outcome["patch_error"] is None and outcome["patch_n_undetermined"] == 0
    assert outcome["patch_fixed_w"] >= catalog()["tf-aws-rds-unencrypted"].severity.weight


def test_the_variant_puts_back_only_what_the_patch_made_unknown() -> None:
    patched = TF.replace("publicly_accessible = true", "publicly_accessible = var.public").replace(
        'identifier          = "orders"', 'identifier          = "orders"\n  tags = var.tags_nodefault')
    patched += '\nvariable "tags_nodefault" {}\n'
    variant = fail_closed_variant(TF, patched)
    assert variant is not None
    assert "publicly_accessible = true" in variant and "tags = var.tags_nodefault" not in variant
    assert fail_closed_variant(TF, TF.replace("publicly_accessible = true", "publicly_accessible = false")) is None


@pytest.mark.parametrize(("replacement", "valid"), [
    ("privileged: false", True),  # the honest fix
    ("privileged: true\n      privileged: false", False),  # a second copy of the key shadows the first
    ("privileged: false\n      privileged: false", False),  # duplicate keys are invalid whatever their values
])
def test_kubernetes_duplicate_keys_are_invalid(replacement: str, valid: bool) -> None:
    item = item_for("kubernetes", K8S, "pod.yaml")
    outcome = patch_outcome(item, K8S.replace("privileged: true", replacement))
    assert (outcome["patch_error"] is None) is valid, outcome["patch_error"]
    if not valid:
        assert "written twice" in outcome["patch_error"] and outcome["patch_fixed_w"] == 0.0


def test_a_secret_replaced_by_an_outside_value_is_fixed() -> None:
    """For a rule about a literal written in the file (a secret), a variable without a default is the fix; for a
    rule about a configured behaviour the same unknown stays open (above)."""
    text = ('variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\n'
            'resource "aws_db_instance" "db" {\n  identifier = "orders"\n  engine     = "postgres"\n'
            '  password   = "hunter2hunter2"\n}\n')
    item = item_for("terraform", text, "main.tf")
    assert ("tf-hardcoded-password", "aws_db_instance.db") in {(f["rule_id"], f["resource"])
                                                               for f in item.target["findings"]}
    outcome = patch_outcome(item, text.replace('"hunter2hunter2"', "var.db_password"))
    assert outcome["patch_error"] is None and outcome["patch_n_undetermined"] == 0
    assert outcome["patch_fixed_w"] >= catalog()["tf-hardcoded-password"].severity.weight
    respelled = patch_outcome(item, text.replace('"hunter2hunter2"', '"hunter2${""}hunter2"'))
    assert respelled["patch_fixed_w"] == 0.0  # the same literal re-spelled is still the same secret


# ------------------------------------------------------------------------------------------ rewrites of meaning
def split_world(draw: Any, world: str) -> list[str]:
    """``world`` (``0.0.0.0/0`` or ``::/0``) as a drawn set of CIDRs whose union is exactly the whole space."""
    import ipaddress

    nets = [ipaddress.ip_network(world)]
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        net = nets.pop(draw(st.integers(min_value=0, max_value=len(nets) - 1)))
        nets.extend(net.subnets())
    return [str(n) for n in draw(st.permutations(nets))]


def rewrite_world_tf(text: str, draw: Any) -> str:
    """Every world CIDR written in a list literal split into ranges with the same union."""
    import re

    def split(match: re.Match[str]) -> str:
        return match.group(1) + ", ".join(f'"{c}"' for c in split_world(draw, match.group(2)))

    return re.sub(r'(\[\s*(?:"[^"\n]*",\s*)*)"(0\.0\.0\.0/0|::/0)"', split, text)


def rewrite_meaning_yaml(text: str, draw: Any) -> str:
    """World CIDRs in YAML lists split; RBAC ``*`` verbs enumerated (every standard verb, in any order, perhaps with
    special ones); ``*`` resources of the core group enumerated as every resource of that group."""
    from security_verifiers.engines.canonical import ALL_VERBS, GROUP_RESOURCES

    def walk(node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            out = {k: walk(v, str(k)) for k, v in node.items()}
            group = (node.get("apiGroups") or [""])[0]
            if "*" in (node.get("resources") or []) and group in GROUP_RESOURCES:
                out["resources"] = draw(st.permutations(sorted(GROUP_RESOURCES[group])))
            return out
        if not isinstance(node, list):
            return node
        if key == "verbs" and "*" in node:
            extra = draw(st.lists(st.sampled_from(["bind", "escalate", "impersonate"]), unique=True))
            return draw(st.permutations(sorted(ALL_VERBS) + extra))
        out: list[Any] = []
        for item in node:
            out.extend(split_world(draw, item) if item in ("0.0.0.0/0", "::/0") else [walk(item)])
        return out

    docs = [walk(d) for d in yaml.safe_load_all(text) if d is not None]
    return yaml.safe_dump_all(docs, sort_keys=False)


def _world_or_wildcard(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return "0.0.0.0/0" in text or "::/0" in text or "'*'" in text or '"*"' in text


@pytest.mark.parametrize("path", [p for p in firing(".tf") + firing(".yaml") if _world_or_wildcard(p)],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
@SETTINGS
@given(data=st.data())
def test_ranges_and_enumerations_are_judged_by_meaning(path: Path, data: st.DataObject) -> None:
    """A list of CIDRs is judged by the union it covers, an RBAC rule listing everything as ``*``: the same
    findings as the original, whatever the split or the order."""
    text = path.read_text(encoding="utf-8")
    platform = "terraform" if path.suffix == ".tf" else "kubernetes"
    rewrite = rewrite_world_tf if platform == "terraform" else rewrite_meaning_yaml
    rewritten = rewrite(text, data.draw)
    if platform == "terraform" and rewritten == text:
        return  # the world is written outside a list literal here (a scalar attribute): nothing to split
    assert keys(platform, rewritten) == keys(platform, text), rewritten


#: Nested blocks a world CIDR may be split across (each copy admits the same traffic from a part of the world).
_SPLIT_BLOCKS = ("ingress", "egress", "security_rule", "authorized_networks", "cidr_blocks")


def _block_end(lines: list[str], start: int) -> int:
    """The index of the line closing the block opened on ``lines[start]`` (fixtures put no braces in strings)."""
    depth = 0
    for n in range(start, len(lines)):
        depth += lines[n].count("{") - lines[n].count("}")
        if depth == 0:
            return n
    raise ValueError("unclosed block")


def split_world_across_blocks(text: str, draw: Any) -> tuple[str, dict[str, list[str]]]:
    """Every block holding a world CIDR written once per part of a drawn split of the world, each copy holding one
    part: a nested block (an ingress block, an NSG rule, an authorized network) repeated in place, or else the
    whole resource repeated under new names. Returns the text and, per renamed resource, the copies' addresses."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    copies: dict[str, list[str]] = {}
    n = 0
    while n < len(lines):
        line = lines[n]
        opener = re.match(r'\s*(\w+)\s*(?:"[^"]*"\s*)*\{\s*$', line)
        head = re.match(r'\s*resource\s+"(\w+)"\s+"(\w+)"', line)
        if not opener:
            out.append(line)
            n += 1
            continue
        end = _block_end(lines, n)
        body = "".join(lines[n:end + 1])
        world = re.search(r'"(0\.0\.0\.0/0|::/0)"', body)
        nested = any(re.match(rf"\s*{kind}\s*\{{", x) for x in lines[n + 1:end] for kind in _SPLIT_BLOCKS)
        if world and (opener.group(1) in _SPLIT_BLOCKS or (head and not nested)):
            parts = split_world(draw, world.group(1))
            for k, part in enumerate(parts):
                copy = body.replace(world.group(0), f'"{part}"')
                if head and k:
                    copy = copy.replace(f'"{head.group(2)}"', f'"{head.group(2)}_sv{k}"', 1)
                    copies.setdefault(f"{head.group(1)}.{head.group(2)}", []).append(
                        f"{head.group(1)}.{head.group(2)}_sv{k}")
                out.append(copy)
            n = end + 1
        elif world and not head and opener.group(1) not in _SPLIT_BLOCKS:
            out.append(line)  # descend: the world is in a block nested further in
            n += 1
        elif world and head:
            out.append(line)
            n += 1
        else:
            out.append(body)
            n = end + 1
    return "".join(out), copies


@pytest.mark.parametrize("path", [p for p in firing(".tf") if re.search(r'"(0\.0\.0\.0/0|::/0)"', p.read_text())],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
@SETTINGS
@given(data=st.data())
def test_the_world_split_across_blocks_is_judged_the_same(path: Path, data: st.DataObject) -> None:
    """The world written as parts in separate blocks (or resources) of the same place: the same findings as the
    original, on every copy of a repeated resource too."""
    text = path.read_text(encoding="utf-8")
    rewritten, copies = split_world_across_blocks(text, data.draw)
    assert rewritten != text
    expected = keys("terraform", text)
    expected |= {(rule, copy) for rule, resource in expected for copy in copies.get(resource, [])}
    assert keys("terraform", rewritten) == expected, rewritten

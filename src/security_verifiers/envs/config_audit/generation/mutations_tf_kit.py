"""Building blocks of the Terraform mutation operators: edit one attribute, one nested block or one companion.

Every operator edits the :mod:`hcl_tree` tree of one resource of a base (or deletes one companion resource,
reported on the resource it serves: the fix adds it back; an operator never *adds* a resource). ``targets``
lists the resources where the edit is meaningful and not yet done, so an operator never "injects" a
misconfiguration that is already there.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block
from security_verifiers.envs.config_audit.generation.mutation_kit import Operator
from security_verifiers.envs.config_audit.generation.templates_tf import TFBase

Edit = Callable[[Block, random.Random], None]


def op(rule_id: str, targets: Callable[[TFBase], list[str]], apply: Callable[[TFBase, str, random.Random], None],
       also: tuple[str, ...] = ()) -> Operator:
    return Operator(rule_id, "terraform", targets, apply, also)


def sub(block: Block | None, *path: str) -> Block | None:
    """The first nested block along ``path`` (``sub(b, "settings", "ip_configuration")``), or None."""
    for name in path:
        if block is None:
            return None
        found = block.blocks(name)
        block = found[0] if found else None
    return block


def attr_op(rule_id: str, rtype: str | tuple[str, ...], eligible: Callable[[Block], bool], edit: Edit,
            also: tuple[str, ...] = ()) -> Operator:
    """An operator that edits one resource of type ``rtype`` (or of one of several types) in place."""
    types = (rtype,) if isinstance(rtype, str) else rtype

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources(*types) if eligible(b)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        edit(base.find(address), rng)

    return op(rule_id, targets, apply, also)


def bool_op(rule_id: str, rtype: str, key: str, bad: bool = False, removable: bool = True,
            also_remove: tuple[str, ...] = (), path: tuple[str, ...] = (), also: tuple[str, ...] = ()) -> Operator:
    """Flip ``key`` (in the nested block at ``path``) to ``bad``, or delete it when the provider's default is
    insecure too; ``also_remove`` drops attributes that only make sense with the secure setting (a KMS key id on
    an unencrypted volume)."""

    def edit(b: Block, rng: random.Random) -> None:
        target = sub(b, *path)
        assert target is not None
        if removable and rng.random() < 0.4:
            target.remove(key)
        else:
            target.set(key, bad)
        for other in also_remove:
            target.remove(other)

    return attr_op(rule_id, rtype, lambda b: getattr(sub(b, *path), "get", lambda _: None)(key) is (not bad), edit,
                   also)


def value_op(rule_id: str, rtype: str, key: str, good: Any, bad: tuple[Any, ...], path: tuple[str, ...] = (),
             removable: bool = False, also: tuple[str, ...] = ()) -> Operator:
    """Replace ``key`` (in the nested block at ``path``) whose value is ``good`` by one of the ``bad`` values
    (or delete it, when ``removable`` and the default is insecure)."""

    def edit(b: Block, rng: random.Random) -> None:
        target = sub(b, *path)
        assert target is not None
        if removable and rng.random() < 0.3:
            target.remove(key)
        else:
            target.set(key, rng.choice(bad))

    def eligible(b: Block) -> bool:
        target = sub(b, *path)
        return target is not None and (target.get(key) == good if good is not None else target.has(key))

    return attr_op(rule_id, rtype, eligible, edit, also)


def drop_op(rule_id: str, rtype: str, *keys: str, path: tuple[str, ...] = (), also: tuple[str, ...] = ()) -> Operator:
    """Delete attributes or nested blocks ``keys`` (the first is required to be present) from the block at
    ``path``: a setting an engineer "cleaned up" (a KMS key id, a ``vpc_config`` block)."""

    def present(target: Block | None, key: str) -> bool:
        return target is not None and (target.has(key) or bool(target.blocks(key)))

    def edit(b: Block, rng: random.Random) -> None:
        target = sub(b, *path)
        assert target is not None
        for key in keys:
            target.remove(key)
            for nested in target.blocks(key):
                target.remove_block(nested)

    return attr_op(rule_id, rtype, lambda b: present(sub(b, *path), keys[0]), edit, also)


def companion_op(rule_id: str, owner_type: str, companion_type: str, also: tuple[str, ...] = ()) -> Operator:
    """Delete the ``companion_type`` resource that serves an ``owner_type`` resource (it references the owner's
    address); the finding is reported on the owner."""

    def companion(base: TFBase, owner: str) -> Block | None:
        found = base.referencing(companion_type, owner)
        return found[0] if found else None

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources(owner_type) if companion(base, b.address)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        found = companion(base, address)
        assert found is not None
        base.blocks.remove(found)

    return op(rule_id, targets, apply, also)


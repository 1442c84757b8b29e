"""Gated held-out sets: items nobody can train on, and results anyone can check against them.

The public splits are committed, so a model can be trained on every item we evaluate on. A gated set is the
public splits' own definition (the same splits, sizes and generator) under a *private* seed: the seed is derived
from a secret key, so only whoever holds the key can build the items. What is published is a
:class:`Commitment`: the environment and its version, the generator version, the splits and sizes, the hash of the
items (the dataset hash every run records) and a fingerprint of the key. Then:

- a maintainer holding the key evaluates a submission (``sv eval ENV --heldout --secret-file KEY``): the items are
  rebuilt, checked against the committed commitment, and the run's metadata records it; the run's summary can be
  published without its transcripts, which hold the items;
- anyone *without* the key checks that a published run names a committed set and that the items it scored hash to
  it (``sv heldout verify RUN``): its metadata records the dataset hash of what it scored;
- anyone *with* the key also rebuilds the items and checks them item by item (``--secret-file``).

The seed is HMAC-SHA256 of the environment's name under the key, so one key gives each environment its own seed,
and a key cannot be recovered from a seed or a commitment. The key's fingerprint is a hash of the key under its own
label: it tells which key built a set without revealing it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from security_verifiers.core.datasets import Dataset, canonical_json
from security_verifiers.core.errors import ConfigError

if TYPE_CHECKING:
    from security_verifiers.envs.base import Environment

#: The file, in an environment's data directory, that holds its published commitments.
COMMITMENTS_FILE = "heldout.json"
#: A key shorter than this many bytes is refused: the seed's secrecy is the key's.
MIN_KEY_BYTES = 16
SEED_RULE = "int.from_bytes(HMAC-SHA256(key, 'sv-heldout-seed\\x00' + env)[:8], 'big')"
DEFINITION = ("for each public split, in the manifest's order: generate(split, n + n // 10 + 8, seed), the items whose "
              "input is in no public split, the first n of them")


class Commitment(BaseModel):
    """What a gated set is, without its items: enough to rebuild it with the key and to check a run without it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    env_version: str
    generator_version: str
    #: split -> items, in the order the set concatenates them (the environment's public splits and sizes).
    splits: dict[str, int]
    seed_rule: str = SEED_RULE
    definition: str = DEFINITION
    #: The dataset hash of the items (``core.datasets.content_hash``), as every run's metadata records it.
    items_hash: str
    key_fingerprint: str

    @property
    def id(self) -> str:
        """sha256 of the commitment itself: the name a run records and a result cites."""
        return "sha256:" + hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()


def read_key(path: str | Path) -> bytes:
    """The secret key in ``path`` (its bytes, surrounding whitespace stripped); a clear error if it is missing or
    too short to keep a seed secret."""
    try:
        key = Path(path).read_bytes().strip()
    except OSError as err:
        raise ConfigError(f"cannot read the secret key {path}: {err.strerror or err}") from err
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(f"the secret key in {path} has {len(key)} bytes; a key needs at least {MIN_KEY_BYTES} "
                          "(make one with: head -c 32 /dev/urandom | base64 > KEY)")
    return key


def heldout_seed(key: bytes, env_name: str) -> int:
    digest = hmac.new(key, b"sv-heldout-seed\x00" + env_name.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def key_fingerprint(key: bytes) -> str:
    return "sha256:" + hashlib.sha256(b"sv-heldout-key\x00" + key).hexdigest()[:24]


def build_heldout(env: Environment, key: bytes) -> tuple[Dataset, Commitment]:
    """The gated set of ``env`` under ``key`` and its commitment: each public split's size, generated from the
    key's seed (the same seed for every split, as the public sets share theirs), without the items whose input is
    public (a generator with a small item space draws some: code-repair 4 of 150), so a model trained on the
    public sets has seen none of them."""
    spec = env.public_sets()
    seed = heldout_seed(key, env.name)
    public = {canonical_json(i.input) for split in env.public_splits for i in env.dataset(split).items}
    items = []
    for split, n in spec.sizes.items():
        part = env.generate(split, n + n // 10 + 8, seed)
        env.check_items(part, None, f"the {env.name} generator ({split}, gated seed)")
        fresh = [i for i in part if canonical_json(i.input) not in public][:n]
        if len(fresh) < n:
            raise ConfigError(f"{env.name}'s generator gave only {len(fresh)} {split} items outside the public sets "
                              f"of the {n} a gated set needs")
        items.extend(fresh)
    dataset = Dataset(id=f"{env.name}/heldout@{key_fingerprint(key).removeprefix('sha256:')[:12]}", items=items,
                      splits=tuple(spec.sizes), source="gated held-out set")
    commitment = Commitment(env=env.name, env_version=env.version, generator_version=spec.generator_version,
                            splits=dict(spec.sizes), items_hash=dataset.hash, key_fingerprint=key_fingerprint(key))
    return dataset, commitment


def published(env: Environment) -> list[Commitment]:
    """The commitments committed for ``env`` (its data directory's ``heldout.json``), oldest first."""
    path = env.data_dir / COMMITMENTS_FILE
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [Commitment.model_validate(entry["commitment"]) for entry in data["commitments"]]


def record(env: Environment, commitment: Commitment) -> Path:
    """Add ``commitment`` to the environment's committed file (once: a commitment already there is kept as is)."""
    path = env.data_dir / COMMITMENTS_FILE
    existing = published(env)
    if commitment not in existing:
        existing.append(commitment)
    entries = [{"id": c.id, "commitment": c.model_dump(mode="json")} for c in existing]
    path.write_text(json.dumps({"commitments": entries}, indent=2, sort_keys=True) + "\n")
    return path


def check_published(env: Environment, commitment: Commitment) -> None:
    """Refuse a gated set whose commitment is not published for this environment, saying what differs."""
    known = published(env)
    if commitment in known:
        return
    same_key = [c for c in known if c.key_fingerprint == commitment.key_fingerprint]
    if not known:
        raise ConfigError(f"{env.name} has no published held-out commitment ({env.data_dir / COMMITMENTS_FILE}); "
                          "a maintainer records one with `sv data build ENV --heldout --secret-file KEY --record`")
    if not same_key:
        raise ConfigError(f"the key's fingerprint {commitment.key_fingerprint} is not that of any published "
                          f"{env.name} held-out set ({', '.join(c.key_fingerprint for c in known)}): another key")
    last = same_key[-1]
    differ = [f"{name} {getattr(last, name)!r} -> {getattr(commitment, name)!r}"
              for name in ("env_version", "generator_version", "splits", "items_hash")
              if getattr(last, name) != getattr(commitment, name)]
    raise ConfigError(f"this key builds a {env.name} held-out set that differs from the published one "
                      f"({'; '.join(differ)}): the generator changed since it was committed; a maintainer records "
                      "the new set (and bumps the environment's version) with `sv data build ENV --heldout "
                      "--secret-file KEY --record`")


def verify_run(metadata: dict[str, Any], env: Environment, key: bytes | None = None) -> list[str]:
    """Problems with a run's claim to have been scored on a published gated set (empty: verified).

    Without the key: the run names a commitment published for its environment, and the items it scored (their
    dataset hash and count in its metadata) are the committed ones. With the key: the items are also rebuilt and
    their ids compared with the run's, one by one."""
    claim = metadata.get("heldout")
    if not isinstance(claim, dict) or "commitment" not in claim:
        return ["the run was not made on a gated held-out set (its metadata has no heldout commitment)"]
    try:
        commitment = Commitment.model_validate(claim["commitment"])
    except ValueError as err:
        return [f"the run's heldout commitment is malformed: {err}"]
    problems = []
    if claim.get("id") != commitment.id:
        problems.append(f"the run cites commitment {claim.get('id')}, but the commitment it records is {commitment.id}")
    if commitment.env != env.name:
        problems.append(f"the commitment is for {commitment.env}, the run for {env.name}")
    if commitment not in published(env):
        problems.append(f"commitment {commitment.id} is not published for {env.name} "
                        f"({env.data_dir / COMMITMENTS_FILE})")
    dataset = metadata.get("dataset") or {}
    if dataset.get("hash") != commitment.items_hash:
        problems.append(f"the run scored items of hash {dataset.get('hash')}, not the committed "
                        f"{commitment.items_hash}")
    if dataset.get("n") != sum(commitment.splits.values()):
        problems.append(f"the run scored {dataset.get('n')} items, the committed set has "
                        f"{sum(commitment.splits.values())}")
    if key is not None:
        if key_fingerprint(key) != commitment.key_fingerprint:
            problems.append("the key given is not the key of this commitment")
        else:
            rebuilt, again = build_heldout(env, key)
            if again != commitment:
                problems.append(f"the key rebuilds a different set today (hash {again.items_hash}): the generator "
                                "changed since the commitment")
            if [i.id for i in rebuilt.items] != dataset.get("item_ids"):
                problems.append("the run's item ids are not the rebuilt set's")
    return problems

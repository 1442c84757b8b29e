"""One builder for every environment's committed public splits, their manifest and their data card
(``sv data build ENV --public``).

The files under an environment's ``data/`` are exactly what :func:`build_public_sets` writes: each public
split generated from its fixed seed, ``manifest.json`` with each file's hash (which loading checks), and
``DATA_CARD.md``. A test per environment rebuilds them into a temporary directory and compares bytes, so a
generator change, a policy change or an engine upgrade can never silently change the public benchmark.

What is shared is written here once: the generation, the files, the manifest, and the card's skeleton (title,
what the items are, how to rebuild them, their provenance, the environment's sections, its limitations). What
is the environment's own comes from its :meth:`~security_verifiers.envs.base.Environment.public_sets`: the
sizes, the generator version, and a function that computes the card's figures and writes its sections.

The card's baseline table needs episodes played through the harness's loop (multi-turn, tools), and no module
under ``envs/`` imports the harness (it is the layer above them). So the caller hands the builder a
:data:`BaselineRewards` (``sv data build`` passes the harness's own ``mean_rewards``), and a card writer reads it,
with its environment, from :class:`CardInputs`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from security_verifiers.core.datasets import write_jsonl
from security_verifiers.core.types import Item

if TYPE_CHECKING:
    from security_verifiers.envs.base import Environment

#: The seed every environment's public splits are generated from.
PUBLIC_SEED = 2026


@dataclass(frozen=True)
class DataCard:
    """What an environment writes of its data card; :func:`render_card` puts it in the shared skeleton.

    ``about`` is the opening paragraph (what an item is, where it comes from), ``sections`` the environment's own
    ``(heading, lines)``, ``limitations`` the closing section's lines, and ``figures`` the numbers the sections
    were computed from, returned to the caller (tests check what the card claims against them)."""

    title: str
    about: Sequence[str]
    sections: Sequence[tuple[str, Sequence[str]]]
    limitations: Sequence[str]
    #: How far the rebuild is reproducible, said after the rebuild command.
    reproducible: str = "byte-identical on every machine"
    #: The rebuild command, where it is not ``sv data build ENV --public`` (an environment that is not registered).
    rebuild: str | None = None
    figures: Mapping[str, Any] = field(default_factory=dict)


#: ``rewards(items, names)``: each named baseline's mean reward over ``items``, every episode played through the
#: harness's episode loop, as ``sv eval`` plays it.
BaselineRewards = Callable[[Sequence[Item], Sequence[str]], dict[str, float]]


@dataclass(frozen=True)
class CardInputs:
    """What a card writer reads: the environment the sets are built for, the ``manifest`` written, the public
    ``sets`` (split -> items) and how to measure its baselines on them (:data:`BaselineRewards`)."""

    env: Environment
    manifest: dict[str, Any]
    sets: dict[str, list[Item]]
    rewards: BaselineRewards


#: ``card(inputs)``: the data card of the public sets that ``inputs`` describe.
CardWriter = Callable[[CardInputs], DataCard]


@dataclass(frozen=True)
class PublicSets:
    """How an environment's public splits are built: ``sizes`` (split -> items, in the manifest's order; its
    keys are the environment's ``public_splits``), the generator version recorded in the manifest, the card."""

    sizes: Mapping[str, int]
    generator_version: str
    card: CardWriter
    seed: int = PUBLIC_SEED


@dataclass(frozen=True)
class BuiltSets:
    """What :func:`build_public_sets` wrote: the manifest and the card (with its figures), and the files."""

    manifest: dict[str, Any]
    card: DataCard
    files: tuple[Path, ...]


def build_public_sets(env: Environment, out_dir: Path, rewards: BaselineRewards) -> BuiltSets:
    """Generate ``env``'s public splits and write them, ``manifest.json`` and ``DATA_CARD.md`` into ``out_dir``;
    ``rewards`` measures the baselines the card reports (the harness's ``mean_rewards`` bound to ``env``).

    Every file is first written beside its final name (``NAME.partial``) and all are moved into place only once
    all are written, so a failure (a generator's self-check, the card's figures, a full disk) leaves the previous
    files as they were rather than a manifest that no longer matches its splits."""
    spec = env.public_sets()
    if set(spec.sizes) != set(env.public_splits):
        raise ValueError(f"{env.name}: public sets of {sorted(spec.sizes)}, but its public splits are "
                         f"{sorted(env.public_splits)}")
    sets: dict[str, list[Item]] = {}
    for split, n in spec.sizes.items():
        items = env.generate(split, n, seed=spec.seed)
        env.check_items(items, None, f"the {env.name} generator ({split}, seed {spec.seed})")
        sets[split] = items
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    partials: list[Path] = []
    try:
        splits: dict[str, Any] = {}
        for split, items in sets.items():
            partials.append(out_dir / f"{split}.jsonl.partial")
            splits[split] = {"file": f"{split}.jsonl", "hash": write_jsonl(items, partials[-1]), "n": len(items),
                             "seed": spec.seed}
        manifest = {"generator_version": spec.generator_version, "splits": splits}
        card = spec.card(CardInputs(env, manifest, sets, rewards))
        partials.append(_write_partial(out_dir / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True)
                                       + "\n"))
        partials.append(_write_partial(out_dir / "DATA_CARD.md", render_card(env.name, manifest, card)))
    except BaseException:
        for partial in partials:
            partial.unlink(missing_ok=True)
        raise
    files = tuple(p.with_name(p.name.removesuffix(".partial")) for p in partials)
    for partial, final in zip(partials, files, strict=True):
        os.replace(partial, final)
    return BuiltSets(manifest, card, files)


def _write_partial(path: Path, text: str) -> Path:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    return partial


def render_card(env_name: str, manifest: dict[str, Any], card: DataCard) -> str:
    """The data card: title, what the items are, how to rebuild them, their provenance (generator version; each
    file with its size, the call that generates it and its hash), the environment's sections, its limitations."""
    lines = [f"# {card.title}", "", *card.about,
             f"Rebuild with `{card.rebuild or f'sv data build {env_name} --public'}` ({card.reproducible}).", "",
             f"- Generator version: `{manifest['generator_version']}`"]
    for split, entry in manifest["splits"].items():
        lines.append(f"- `{entry['file']}`: {entry['n']} items, `generate(\"{split}\", {entry['n']}, "
                     f"seed={entry['seed']})`, hash `{entry['hash']}`")
    for heading, body in card.sections:
        lines += ["", f"## {heading}", "", *body]
    lines += ["", "## Limitations", "", *card.limitations, ""]
    return "\n".join(lines)


def count_table(title: str, counts: Mapping[str, int]) -> list[str]:
    """A card's two-column table of how many items have each value of ``title`` (then a blank line)."""
    return [f"| {title} | items |", "|---|---:|", *(f"| `{k}` | {v} |" for k, v in counts.items()), ""]


def reward_table(rewards: Mapping[str, float]) -> list[str]:
    """A card's table of each baseline's mean reward (the environment's scorer), to four decimals."""
    return ["| baseline | reward |", "|---|---:|", *(f"| `{k}` | {v:.4f} |" for k, v in rewards.items())]


def committed_manifest(env: Environment) -> dict[str, Any]:
    """The ``manifest.json`` committed in ``env``'s ``data_dir``."""
    return json.loads((env.data_dir / "manifest.json").read_text(encoding="utf-8"))

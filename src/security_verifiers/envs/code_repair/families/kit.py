"""What every family module uses: filling a source template, finding the vulnerable line, varied names.

Templates use ``string.Template`` placeholders (``$name``, ``${name}``), which Python source itself never
contains, so f-strings and braces in a template need no escaping. A placeholder that is not filled is an
error (``substitute``), never a silent ``$name`` left in a program.
"""

from __future__ import annotations

import random
import textwrap
from string import Template

from security_verifiers.envs.code_repair.program import Location

#: Words that make programs of one variant read differently (module, function and data names).
ORGS = ("acme", "globex", "initech", "umbrella", "hooli", "vandelay", "stark", "wayne", "wonka", "tyrell",
        "cyberdyne", "soylent", "massive", "aperture", "oscorp", "gringotts")
PEOPLE = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj",
          "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yvonne")
NOUNS = ("invoice", "report", "ticket", "order", "note", "receipt", "backup", "upload", "export", "manifest",
         "schedule", "payslip", "statement", "contract", "memo", "survey")
WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
         "lumen", "meadow", "nectar", "onyx", "prairie", "quartz", "ridge", "sierra", "tundra")


def fill(template: str, **values: object) -> str:
    """``template`` dedented, with every ``$name`` replaced (a missing value raises KeyError)."""
    return Template(textwrap.dedent(template).lstrip("\n")).substitute({k: str(v) for k, v in values.items()})


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the only line of ``text`` that contains ``needle`` (a ValueError otherwise): how a
    family states where its weakness is without marking it in the source the model reads."""
    hits = [number for number, line in enumerate(text.splitlines(), start=1) if needle in line]
    if len(hits) != 1:
        raise ValueError(f"{needle!r} is on {len(hits)} lines, not exactly one")
    return hits[0]


def location(files: dict[str, str], path: str, needle: str, extra_lines: int = 0) -> Location:
    """The location of the line holding ``needle`` in ``files[path]`` (and ``extra_lines`` after it)."""
    start = line_of(files[path], needle)
    return Location(file=path, start=start, end=start + extra_lines)


def pick(rng: random.Random, pool: tuple[str, ...], k: int = 1) -> list[str]:
    """``k`` distinct words of ``pool``."""
    return rng.sample(pool, k)


def ident(rng: random.Random, *parts: tuple[str, ...]) -> str:
    """An identifier joined from one word of each pool (``invoice_store``)."""
    return "_".join(rng.choice(pool) for pool in parts)


def swap(text: str, old: str, new: str) -> str:
    """``text`` with the one occurrence of ``old`` replaced by ``new``: how a family writes its reference fix as
    an edit of the vulnerable source. A fragment of one line is replaced as it is; a block of lines is dedented
    and re-indented to where it stands in ``text``. Raises ValueError unless ``old`` occurs exactly once."""
    if "\n" not in old.strip("\n") and text.count(old) == 1:  # a fragment of one line
        return text.replace(old, new, 1)
    old_lines = textwrap.dedent(old).strip("\n")
    new_lines = textwrap.dedent(new).strip("\n")
    first = old_lines.splitlines()[0]
    own = len(first) - len(first.lstrip())  # the first line may sit deeper than the block's shallowest line
    indents = {len(line) - len(line.lstrip()) - own for line in text.splitlines() if line.strip() == first.strip()}
    for indent in sorted((i for i in indents if i >= 0), reverse=True):
        needle = textwrap.indent(old_lines, " " * indent)
        if text.count(needle) == 1:
            return text.replace(needle, textwrap.indent(new_lines, " " * indent), 1)
    raise ValueError(f"{first.strip()!r} does not occur exactly once as a block in the text")

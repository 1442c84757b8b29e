"""What every family module uses: filling a source template, finding the vulnerable line, varied names.

A program's modules and its hidden test module are template files, ``templates/<family>/<variant>/<file>.py``:
real Python that parses, lints and reads like the program it becomes. A placeholder is an identifier of the
shape ``T_name_T`` (lower-case ``name``), so it may stand wherever a name may: ``def T_fn_T(...)``,
``import T_pkg_T.store``, ``"T_first_T"`` in a string, ``T_names_T`` for a ``repr`` the family fills in, even
inside a longer name (``T_upper_T_LOG_DIR``). :class:`Templates` fills them with the values the family drew; a
placeholder left unfilled or a value no placeholder asks for is an error, never a silent mistake in a program.
``tests/envs/code_repair/test_templates.py`` checks every template parses and that each family's calls supply
exactly the placeholders of the file they name. Code a family's test modules share (a prelude of probe helpers, the
spy that reads a store, the exploit payloads) is a template too, ``templates/<family>/shared/<file>.py``, rendered
once and filled in where a test module's placeholder stands for it.

Where a template cannot hold a choice as a name (an import only one style needs), the family edits the rendered
text (:func:`swap`, ``str.replace``) rather than put a placeholder inside a line; the reference fix is such an edit.
"""

from __future__ import annotations

import random
import re
import textwrap
from functools import cache
from pathlib import Path

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


#: The template files of every family: ``templates/<family>/<variant>/<file>.py`` (package data).
TEMPLATE_DIR = Path(__file__).parent / "templates"
#: A placeholder in a template file: ``T_name_T``, an identifier, so the file stays Python.
PLACEHOLDER = re.compile(r"T_([a-z][a-z0-9_]*?)_T")


def placeholders(text: str) -> set[str]:
    """The names of the placeholders in a template's text."""
    return set(PLACEHOLDER.findall(text))


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


class Templates:
    """The template files of one family; ``Templates(__name__)`` in a family module finds its own folder."""

    def __init__(self, module: str) -> None:
        self.family = module.rpartition(".")[2]
        self.folder = TEMPLATE_DIR / self.family

    def render(self, name: str, /, **values: object) -> str:
        """The template ``<variant>/<file>.py`` with every placeholder replaced by ``str`` of its value. Raises
        KeyError for a placeholder without a value and ValueError for a value without a placeholder."""
        text = _read(self.folder / name)
        wanted = placeholders(text)
        if missing := wanted - values.keys():
            raise KeyError(f"{self.family}/{name} needs values for {sorted(missing)}")
        if extra := values.keys() - wanted:
            raise ValueError(f"{self.family}/{name} has no placeholders for {sorted(extra)}")
        return PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), text)


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

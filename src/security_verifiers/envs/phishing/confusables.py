"""What a name looks like to a reader: confusable characters as the Latin letter they pass for, and the name's
skeleton, which look-alike and squat checks compare. Its own module, because the brand tables (:mod:`.brands`)
key brands by their skeletons and the domain checks (:mod:`.domains`) read both."""

from __future__ import annotations

import unicodedata

#: Confusable characters as the Latin letter they pass for (Cyrillic, Greek, digits and letter pairs).
_CONFUSABLE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i", "ј": "j", "ԁ": "d", "ɡ": "g",
    "ո": "n", "ս": "u", "ο": "o", "ν": "v", "ρ": "p", "α": "a", "ι": "i", "κ": "k", "τ": "t", "ѕ": "s", "һ": "h",
    "ӏ": "l", "ԛ": "q", "ԝ": "w", "0": "o", "1": "l", "3": "e", "5": "s", "7": "t", "i": "l", "ı": "l", "ł": "l",
})
_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("nn", "m"))


def skeleton(name: str) -> str:
    """What a name looks like: accents stripped, confusables mapped, letter pairs that pass for one letter merged,
    hyphens dropped (``nort1-hwind`` -> ``northwlnd``; ``l`` and ``i`` both read ``l``)."""
    name = unicodedata.normalize("NFKD", name.lower())
    name = "".join(c for c in name if not unicodedata.combining(c)).translate(_CONFUSABLE)
    for pair, letter in _PAIRS:
        name = name.replace(pair, letter)
    return name.replace("-", "").replace("_", "")

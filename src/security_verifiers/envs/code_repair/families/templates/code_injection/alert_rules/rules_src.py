"""Alert rules of the T_org_T monitoring service: a named condition and a severity each."""

import pickle
import sqlite3
import time
from dataclasses import dataclass

from T_pkg_T import conditions


@dataclass
class Rule:
    name: str
    condition: str
    severity: str = "warning"


RULES: dict[str, Rule] = {}
#: The rule editor's undo stack: pickled copies of RULES before each change.
_undo: list[bytes] = []


def add_rule(name: str, condition: str, severity: str = "warning") -> None:
    if not name.isidentifier() or severity not in ("warning", "critical"):
        raise ValueError("a rule needs an identifier as name and a known severity")
    _undo.append(pickle.dumps(RULES))
    RULES[name] = Rule(name, condition, severity)


def undo() -> bool:
    """Take back the last change of the rules; False when there is nothing to take back."""
    if not _undo:
        return False
    previous = pickle.loads(_undo.pop())
    RULES.clear()
    RULES.update(previous)
    return True


def firing(metrics: dict[str, float]) -> list[str]:
    """The rules whose condition holds for the sample: critical ones first, then by name."""
    hits = [rule for rule in RULES.values() if conditions.T_check_T(rule.condition, metrics)]
    return [rule.name for rule in sorted(hits, key=lambda rule: (rule.severity != "critical", rule.name))]


def record(db: sqlite3.Connection, host: str, metrics: dict[str, float]) -> int:
    """Store one alert row per firing rule for host; returns how many there were."""
    db.execute("CREATE TABLE IF NOT EXISTS alerts (host TEXT, rule TEXT, severity TEXT, raised REAL)")
    names = firing(metrics)
    now = time.time()
    db.executemany("INSERT INTO alerts VALUES (?, ?, ?, ?)",
                   [(host, name, RULES[name].severity, now) for name in names])
    db.commit()
    return len(names)

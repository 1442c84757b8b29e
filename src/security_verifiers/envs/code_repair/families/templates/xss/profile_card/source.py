"""The member directory of T_org_T: the people page shows a card for every member."""

import hashlib
import re

HANDLE = re.compile(r"[a-z0-9_]{3,24}")
CARD = ('<div class="card" id="member-{handle}">'
        '<img class="avatar" src="https://avatars.T_org_T.example/{digest}?s=64" alt="{name}">'
        '<a href="/people/{handle}" title="{title}">{name}</a>'
        '<span class="team">{team}</span></div>')


def avatar_digest(email: str) -> str:
    """The avatar service's key for an e-mail address."""
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()


def T_card_fn_T(member: dict) -> str:
    """One member's card; name, title and team are what members typed into their profile."""
    if not HANDLE.fullmatch(member["handle"]):
        raise ValueError(f"bad handle: {member['handle']!r}")
    return CARD.format(handle=member["handle"], digest=avatar_digest(member["email"]),
                       name=member["name"], title=member["title"], team=member["team"])


def T_list_fn_T(members: list[dict], team: str | None = None) -> str:
    """The cards of all members (or of one team), ordered by name."""
    chosen = [m for m in members if team is None or m["team"] == team]
    cards = "".join(T_card_fn_T(m) for m in sorted(chosen, key=lambda m: m["name"].lower()))
    return f'<section class="directory" data-team="{team or "all"}">{cards}</section>'


def matching(members: list[dict], text: str) -> list[str]:
    """Handles of the members whose name or title contains text (any case), for the filter box."""
    needle = text.strip().lower()
    return [m["handle"] for m in members if needle in m["name"].lower() or needle in m["title"].lower()]


def team_sizes(members: list[dict]) -> dict[str, int]:
    """How many members each team has."""
    counts: dict[str, int] = {}
    for member in members:
        counts[member["team"]] = counts.get(member["team"], 0) + 1
    return dict(sorted(counts.items()))

"""Support desk of T_org_T: customers open tickets and follow them; agents of the support team see and answer
every ticket."""

import functools
import itertools

AGENTS = frozenset({"T_agent0_T", "T_agent1_T"})
_tickets: dict[int, dict] = {}
_ids = itertools.count(1)


def T_deco_T(func):
    """Call ``func(user, ticket, ...)`` with the ticket of the given id, if ``user`` may see it."""
    @functools.wraps(func)
    def wrapper(user: str, ticket_id: int, *args, **kwargs):
        ticket = _tickets.get(ticket_id)
        if ticket is None or (user != ticket["requester"] and user not in AGENTS):
            raise PermissionError(f"no ticket {ticket_id} for {user}")
        return func(user, ticket, *args, **kwargs)
    return wrapper


def open_ticket(user: str, subject: str, text: str) -> int:
    ticket_id = next(_ids)
    _tickets[ticket_id] = {"id": ticket_id, "requester": user, "subject": subject, "status": "open",
                           "messages": [[user, text]]}
    return ticket_id


@T_deco_T
def view(user: str, ticket: dict) -> dict:
    return {"subject": ticket["subject"], "status": ticket["status"], "messages": len(ticket["messages"])}


@T_deco_T
def reply(user: str, ticket: dict, text: str) -> int:
    """Add a message; an agent's answer marks the ticket answered. Returns the number of messages."""
    ticket["messages"].append([user, text])
    if user in AGENTS:
        ticket["status"] = "answered"
    return len(ticket["messages"])


@T_deco_T
def close(user: str, ticket: dict) -> str:
    ticket["status"] = "closed"
    return ticket["status"]


def T_transcript_T(user: str, ticket_id: int) -> str:
    """The whole conversation of a ticket as plain text (for the "mail me a copy" button)."""
    if ticket_id not in _tickets:
        raise PermissionError(f"no ticket {ticket_id} for {user}")
    ticket = _tickets[ticket_id]
    lines = [f"#{ticket['id']} {ticket['subject']} [{ticket['status']}]"]
    lines += [f"{author}: {text}" for author, text in ticket["messages"]]
    return "\n".join(lines)


def queue(user: str) -> list[int]:
    """Open tickets: all of them for an agent, their own for a customer."""
    return sorted(number for number, ticket in _tickets.items() if ticket["status"] != "closed"
                  and (user in AGENTS or ticket["requester"] == user))

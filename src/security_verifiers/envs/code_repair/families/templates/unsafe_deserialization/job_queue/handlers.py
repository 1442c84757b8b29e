"""The tasks the T_org_T notification worker knows: each renders one message."""

import html
import re
import string

HANDLERS = {}
WELCOME = string.Template("To: $to\n\n<p>Welcome, $name!</p>")
ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")


def handler(name: str):
    """Register a function as the handler of the task ``name``."""
    def register(function):
        HANDLERS[name] = function
        return function
    return register


@handler("welcome")
def welcome(to: str, name: str) -> str:
    if not ADDRESS.match(to):
        raise ValueError(f"bad address: {to}")
    return WELCOME.substitute(to=to, name=html.escape(name))


@handler("digest")
def digest(to: str, items: list[str]) -> str:
    lines = "".join(f"<li>{html.escape(item)}</li>" for item in items)
    return f"To: {to}\n\n<ul>{lines}</ul>"

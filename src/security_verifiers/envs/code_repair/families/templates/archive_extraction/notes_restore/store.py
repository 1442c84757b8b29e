"""Where the T_org_T notes app keeps each user's notes: a folder of Markdown and text files."""

import hashlib
import os

NOTES_ROOT = "/srv/T_org_T/notes"
SUFFIXES = (".md", ".txt")


def notes_folder(user: str) -> str:
    if not user.isalnum():
        raise ValueError("user ids are letters and digits")
    return os.path.join(NOTES_ROOT, user)


def notes(user: str) -> list[str]:
    """The user's notes, as paths relative to their folder, sorted."""
    folder = notes_folder(user)
    found = []
    for parent, _, names in os.walk(folder):
        found += [os.path.relpath(os.path.join(parent, n), folder) for n in names if n.endswith(SUFFIXES)]
    return sorted(found)


def fingerprint(user: str) -> str:
    """A digest of the user's notes (names and contents), to tell whether two copies are the same."""
    digest = hashlib.sha256()
    for name in notes(user):
        with open(os.path.join(notes_folder(user), name), "rb") as handle:
            digest.update(name.encode() + b"\0" + handle.read() + b"\0")
    return digest.hexdigest()

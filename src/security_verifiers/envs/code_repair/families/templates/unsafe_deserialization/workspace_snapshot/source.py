"""Workspace snapshots of the T_org_T notebook service: users export a workspace's variables, import them later."""

import base64
import io
import pickle

MAGIC = b"WSNAP1"
#: What a snapshot may hold besides plain data, by module: the names allowed, or "*" for all of them.
ALLOWED = {
    "builtins": "*",
    "collections": "*",
    "datetime": "*",
    "decimal": ("Decimal",),
}


class T_unpickler_T(pickle.Unpickler):
    """An unpickler that only builds objects of the classes in ALLOWED."""

    def find_class(self, module: str, name: str):
        allowed = ALLOWED.get(module, ())
        if allowed == "*" or name in allowed:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a snapshot")


def export_snapshot(variables: dict) -> str:
    """A workspace's variables as the text users download."""
    return base64.b64encode(MAGIC + pickle.dumps(variables)).decode("ascii")


def T_restore_T(text: str) -> dict:
    """The variables of a snapshot that a user uploads."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if not raw.startswith(MAGIC):
        raise ValueError("not a workspace snapshot")
    variables = T_unpickler_T(io.BytesIO(raw[len(MAGIC):])).load()
    if not isinstance(variables, dict):
        raise ValueError("a snapshot holds a mapping of variables")
    return variables


def summary(variables: dict) -> list[list[str]]:
    """Name and type of each variable, for the import dialog."""
    return [[name, type(value).__name__] for name, value in sorted(variables.items())]

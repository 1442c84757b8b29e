
from urllib.parse import quote as _quote


def _path(ctx):
    """The run's canary, quoted for a URL's path."""
    return _quote(ctx["canary"], safe="")


def _urls():
    """The URLs the program requested (scheme, Host header and target), in order."""
    return [request["url"] for request in world.requests()]


def _reached():
    """Whether anything of the program reached an internal address (a request, or a bare connection)."""
    return bool(world.internal())

import io
import os
import tarfile

import T_pkg_T.inbox as inbox
import T_pkg_T.listing as listing

inbox.INBOX = "/tmp/inbox"
os.makedirs(inbox.INBOX, exist_ok=True)
with tarfile.open(os.path.join(inbox.INBOX, "batch.tar"), "w") as archive:
    for name in T_members_T:
        data = name.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))


def probe_list(ctx):
    return listing.members("batch.tar")


def probe_pending(ctx):
    return [entry["name"] for entry in listing.pending()]


def probe_plan(ctx):
    return listing.plan("batch.tar")


def probe_not_archive(ctx):
    try:
        listing.members("missing.tar")
    except ValueError:
        return "refused"
    return "listed"


def probe_inject(ctx):
    try:
        listing.members("batch.tar; touch " + ctx["marker"])
    except Exception as error:
        return type(error).__name__
    return "ran"


def probe_newline(ctx):
    try:
        listing.members("batch.tar\ntouch " + ctx["marker"])
    except Exception as error:
        return type(error).__name__
    return "ran"

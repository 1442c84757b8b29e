"""What the judged program created in its project directory, as the kernel reports it (inotify, read by the judge).

A marker file is how an exploit shows that it ran a command, wrote through an archive or ran a pickle: the
payload creates a file whose name is drawn per run. The judge does not look for the file afterwards, when a program
could have deleted it (an exit handler, a wrapper that cleans up before returning): it watches the directory, and a
name that was ever created or moved there counts, whatever happened to it next. The watch is on the judge's side of
the bind mount; the program can neither see nor remove it.
"""

import ctypes
import os
import struct

_IN_CREATE, _IN_MOVED_TO, _IN_Q_OVERFLOW = 0x100, 0x80, 0x4000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_EVENT = struct.Struct("iIII")


class Watch:
    def __init__(self, directory):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, os.fsencode(directory), _IN_CREATE | _IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")
        self.seen = []
        #: The kernel's queue overflowed (a flood of files): what was created is unknown, so every marker counts.
        self.overflowed = False

    def poll(self):
        """Read the events queued so far; the names created, in order, are appended to ``seen``."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return self.seen
            at = 0
            while at + _EVENT.size <= len(data):
                _wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
                self.overflowed = self.overflowed or bool(mask & _IN_Q_OVERFLOW)
                name = data[at + _EVENT.size: at + _EVENT.size + length].rstrip(b"\0")
                self.seen.append(os.fsdecode(name))
                at += _EVENT.size + length

    def created(self, prefix):
        """Names starting with ``prefix`` that were ever created (``["?"]`` when the queue overflowed)."""
        names = sorted({name for name in self.poll() if name.startswith(prefix)})
        return names or (["?"] if self.overflowed else [])

"""What the judged program created in its project directory, as the kernel reports it (inotify, read by the judge).

Secret fixtures (the files that hold the canary) are watched for every opening: an exploit that makes the program
read one (a path outside its folder, an external entity, an evaluated expression) has reached the secret, whatever
the program then does with what it read (a program that scrubs the secret from what it returns still read it).

A marker file is how an exploit shows that it ran a command, wrote through an archive or ran a pickle: the
payload creates a file whose name is drawn per run. The judge does not look for the file afterwards, when a program
could have deleted it (an exit handler, a wrapper that cleans up before returning): it watches the directory, and a
name that was ever created or moved there counts, whatever happened to it next. The watch is on the judge's side of
the bind mount; the program can neither see nor remove it.
"""

import ctypes
import os
import struct

_IN_CREATE, _IN_MOVED_TO, _IN_OPEN, _IN_Q_OVERFLOW = 0x100, 0x80, 0x20, 0x4000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_EVENT = struct.Struct("iIII")


class Watch:
    def __init__(self, directory):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.libc = libc
        self.directory = libc.inotify_add_watch(self.fd, os.fsencode(directory), _IN_CREATE | _IN_MOVED_TO)
        if self.directory < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")
        self.files = {}  # watch descriptor -> a secret file's path
        self.seen = []
        #: Secret files opened, in order (their paths), each time.
        self.opened = []
        #: The kernel's queue overflowed (a flood of files): what was created is unknown, so every marker counts.
        self.overflowed = False

    def watch_opens(self, paths):
        """Also record every opening of each of ``paths`` (the fixtures that hold the canary)."""
        for path in paths:
            wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), _IN_OPEN)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
            self.files[wd] = path

    def poll(self):
        """Read the events queued so far; the names created, in order, are appended to ``seen``."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return self.seen
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
                self.overflowed = self.overflowed or bool(mask & _IN_Q_OVERFLOW)
                name = data[at + _EVENT.size: at + _EVENT.size + length].rstrip(b"\0")
                if wd in self.files and mask & _IN_OPEN:
                    self.opened.append(self.files[wd])
                elif wd == self.directory:
                    self.seen.append(os.fsdecode(name))
                at += _EVENT.size + length

    def created(self, prefix):
        """Names starting with ``prefix`` that were ever created (``["?"]`` when the queue overflowed)."""
        names = sorted({name for name in self.poll() if name.startswith(prefix)})
        return names or (["?"] if self.overflowed else [])

"""The judged program's entropy: a pipe shown to it as /dev/urandom (``getrandom`` is turned off, see
``engines/sandbox/seccomp.py``), fed by the judge one step at a time.

Before each request the judge writes the bytes of that step, a stream drawn from ``(seed, key, step)``; after the
reply it takes back what the program did not read. While a request runs and the pipe is empty it writes more of
the same stream, so a program that reads much still gets what it asks. Two program runs fed under the same keys
read the same bytes at every step; a run whose key differs at one step differs there only. That is how the judge
tells a token drawn from fresh entropy (the same when the bytes are the same, different when the bytes of its own
call differ) from one drawn from a state seeded earlier or from the clock, without any code of its own in the
program.
"""

import array
import fcntl
import os
import random
import termios

#: Bytes written at a time; the pipe is enlarged to hold several.
CHUNK = 65536
_F_SETPIPE_SZ = 1031


class Entropy:
    """The judge's end of the pipe at ``path`` (a FIFO it made; it holds it open for reading and writing, so the
    program's reads never meet an end of file and never wait on an open)."""

    def __init__(self, path, seed):
        os.mkfifo(path, 0o666)
        os.chmod(path, 0o666)
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        try:
            fcntl.fcntl(self.fd, _F_SETPIPE_SZ, 4 * CHUNK)
        except OSError:
            pass
        self.seed = seed
        self.key = "run"
        self.step = None
        self.refills = 0
        self.fed = 0

    def begin(self, key, step):
        """Feed the bytes of ``step`` under ``key`` (what is left of the previous step was taken back)."""
        self.drain()
        self.key, self.step, self.refills, self.fed = key, step, 0, 0
        self._write()

    def _write(self):
        data = random.Random(f"{self.seed}|{self.key}|{self.step}|{self.refills}").randbytes(CHUNK)
        self.refills += 1
        try:
            self.fed += os.write(self.fd, data)
        except BlockingIOError:
            pass

    def waiting(self):
        """Called while a request runs: when the program has read everything, give it more of the same stream."""
        if self.step is not None and self.pending() == 0:
            self._write()

    def pending(self):
        count = array.array("i", [0])
        fcntl.ioctl(self.fd, termios.FIONREAD, count)
        return count[0]

    def drain(self):
        """Take back what was not read; returns how many bytes the program read of this step."""
        left = 0
        while True:
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                break
            left += len(chunk)
        used = self.fed - left
        self.step = None
        self.fed = 0
        return used

    def close(self):
        os.close(self.fd)

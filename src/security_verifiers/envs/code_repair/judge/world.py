"""The judged program's network ("the world"): servers the judge runs, and the records of everything that reached them.

Runs in the judge sandbox (standard library only). The program sandbox shares the judge's network namespace, so
what the judge serves here is the program's whole network:

* every address is local (a ``local`` route for ``0.0.0.0/0`` and ``::/0`` on the loopback, added by netlink), so a
  connection to ``93.184.215.14``, ``10.0.3.7``, ``169.254.169.254`` or ``[::1]`` reaches the judge's listener on
  that port, and the accepted socket's own address (``getsockname``) is the address the program dialled;
* the services of the spec (``world_spec.py`` on the host) listen on ``0.0.0.0`` and ``[::]``: HTTP (plain, TLS, or
  either, told by the first byte), SMTP (EHLO, STARTTLS, AUTH PLAIN/LOGIN, MAIL, RCPT, DATA) and IMAP (LOGIN,
  AUTHENTICATE PLAIN, STARTTLS, SELECT, LIST, STATUS, SEARCH, FETCH, STORE, LOGOUT, with UID forms); the program's
  host names come from its /etc/hosts and its CA bundle holds the CA of the world's certificate, so its stdlib
  clients (``urlopen``, ``http.client``, ``smtplib``, ``imaplib``) talk to these servers for real;
* every connection, request, login, mail and mail command is a record (a dict of JSON values) with the address the
  program dialled and whether it is internal (not a global address, or in the spec's ``internal`` networks).

The test module gets the :class:`World` as ``world``::

    world.reset()                       # forget what was recorded so far (for this test's queries)
    world.requests(internal=True)       # HTTP requests that reached internal addresses
    world.internal()                    # every connection to an internal address (even one that sent nothing)
    world.logins(service="smtp")        # credentials presented: SMTP AUTH, IMAP LOGIN, HTTP Authorization
    world.mails()                       # messages handed to SMTP

The driver calls :meth:`World.start` before any program runs, and :meth:`World.mark` / :meth:`World.since` around
each probe (the records seen meanwhile, bounded, become the probe's ``world`` effects).

A hostile program cannot stop the records: the servers run on one event loop in one thread (a thread per
connection would run into the judge's process limit, which counts threads), every read is bounded in size and time,
past :data:`CONNECTIONS` open at once the connection that has been idle the longest is closed to serve a new one (a
program holding idle connections cannot keep a later one from being served), the memory records take is bounded
(:data:`KEPT_TOTAL`, the oldest forgotten first, and records of internal addresses kept apart from the rest, so that
no flood of public connections pushes out an internal one), and the listening sockets are drained before every
query (:meth:`World.sync`), so that a connection the kernel accepted is a record by the time the test looks, even if
the program closed it at once. A port the spec does not serve refuses connections, and they are not recorded: serve
every port a probe aims at.
"""

import asyncio
import base64
import binascii
import collections
import http
import ipaddress
import os
import re
import socket
import ssl
import struct
import threading

#: Longest protocol line (an HTTP request or header line, an SMTP or IMAP command).
LINE = 8192
#: All header lines of one HTTP request, and how many there may be.
HEADERS, HEADER_COUNT = 65536, 100
#: Largest HTTP body, SMTP message or IMAP literal taken.
BODY = 1 << 20
#: Seconds a client may stay silent, a TLS handshake may take, a connection may last, and a closing connection may
#: wait for the client's TLS goodbye.
IDLE_S, HANDSHAKE_S, LIFETIME_S, CLOSING_S = 10.0, 5.0, 60.0, 1.0
#: Requests or commands one connection may make.
REQUESTS_PER_CONNECTION = 200
#: Connections served at once; past that, the one idle the longest is closed (``evicted``) for each new one. With
#: the connections taken from a listener at a time, this keeps the judge under its 512 descriptors (an evicted
#: connection's socket closes on the loop's next turn).
CONNECTIONS, ACCEPTS, BACKLOG = 160, 8, 1024
#: Characters of a body or a message kept in its record; and about how many bytes of memory the records of a run
#: may take, half for those of internal addresses and half for the rest: past that, the oldest records of the same
#: half are forgotten (counted), so that no flood exhausts the judge's memory and the newest records are kept.
KEPT, KEPT_TOTAL = 65536, 128 << 20
#: Records reported per probe as its effects (the rest are counted).
EFFECTS = 40
_RTM_NEWROUTE, _NLMSG_ERROR = 24, 2
_NLM_F = 0x1 | 0x4 | 0x100 | 0x400  # request, ack, replace, create
_SMTP_END = (b".\r\n", b".\n")


def local_routes():
    """Make every address local (``ip route replace local 0.0.0.0/0 dev lo`` and the same for ``::/0``, in the
    ``local`` table): the judge's network namespace then answers every address on its loopback. Returns whether
    IPv6 works; raises OSError when IPv4 cannot be set up."""
    lo = socket.if_nametoindex("lo")
    done = {}
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as link:
        link.bind((0, 0))
        for number, family in enumerate((socket.AF_INET, socket.AF_INET6), 1):
            # rtmsg: family, dst_len 0, src_len, tos, table local (255), proto boot (3), scope host (254),
            # type local (2), flags; then RTA_OIF (4) = lo
            body = struct.pack("=BBBBBBBBI", family, 0, 0, 0, 255, 3, 254, 2, 0) + struct.pack("=HHI", 8, 4, lo)
            link.send(struct.pack("=IHHII", 16 + len(body), _RTM_NEWROUTE, _NLM_F, number, 0) + body)
            reply = link.recv(65536)
            kind = struct.unpack_from("=H", reply, 4)[0]
            error = -struct.unpack_from("=i", reply, 16)[0] if kind == _NLMSG_ERROR else 0
            done[family] = error
    if done[socket.AF_INET]:
        raise OSError(done[socket.AF_INET], f"the world's local route: {os.strerror(done[socket.AF_INET])}")
    return done[socket.AF_INET6] == 0


def normal_address(text):
    """An address as one spelling (``::ffff:10.0.0.1`` is ``10.0.0.1``, no IPv6 scope)."""
    address = ipaddress.ip_address(str(text).split("%", 1)[0])
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


def _host_of(authority):
    """The host of an HTTP authority (``Host`` header): no port, no brackets, lower case, no final dot."""
    authority = (authority or "").strip()
    if authority.startswith("["):
        return authority[1:authority.find("]")].lower() if "]" in authority else authority.lower()
    host, sep, port = authority.rpartition(":")
    if sep and port.isdigit():
        authority = host
    return authority.lower().rstrip(".")


def _reason(status):
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Status"


def _credentials(header):
    """A login from an HTTP ``Authorization`` header: (mechanism, user, secret)."""
    scheme, _, value = (header or "").strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "basic":
        try:
            user, _, secret = base64.b64decode(value, validate=True).decode("utf-8", "replace").partition(":")
        except (binascii.Error, ValueError):
            return "basic", None, value
        return "basic", user, secret
    if scheme.lower() == "bearer":
        return "bearer", None, value
    return scheme.lower() or "none", None, value


class _Drop(Exception):
    """The client broke a limit or the protocol: the connection is closed."""


class World:
    """The world of one run (see the module doc). ``spec`` is the document ``world_spec.judge_world`` made."""

    def __init__(self, spec):
        self.spec = spec
        self.hosts = {name.lower(): [normal_address(a) for a in addresses]
                      for name, addresses in spec.get("hosts", {}).items()}
        self.sites = {(name if name in self.hosts else normal_address(name)): pages
                      for name, pages in spec.get("sites", {}).items()}
        self.services = spec.get("services", [])
        self.mailboxes = spec.get("mailboxes", {})
        self.fallback = spec.get("fallback") or {"status": 404, "content_type": "text/plain", "body": "not found"}
        self.networks = [ipaddress.ip_network(n, strict=False) for n in spec.get("internal", [])]
        self.ipv6 = False
        self._lock = threading.Lock()
        #: The records kept, oldest first, of internal addresses (True) and of the rest (False): [record, cost].
        self._kept = {True: collections.deque(), False: collections.deque()}
        self._costs = {True: 0, False: 0}
        self._seq = 0
        self._floor = 0
        self._forgotten = 0
        #: The connections being served: the seq of their connection record -> [last activity, task, transport,
        #: record] (the transport once there is one).
        self._live = {}
        self._tasks = set()
        self._listeners = []
        self._loop = None
        self._thread = None
        self._context = None

    # -- the test's view ------------------------------------------------------------------------------------------
    def is_internal(self, address):
        """Whether ``address`` is internal: not a global address, or in one of the spec's internal networks."""
        try:
            ip = ipaddress.ip_address(normal_address(address))
        except ValueError:
            return True
        return not ip.is_global or any(ip in network for network in self.networks)

    def reset(self):
        """Forget what was recorded so far, for the queries below (the driver's marks are not affected)."""
        self.sync()
        with self._lock:
            self._floor = self._seq + 1

    def records(self, kind=None, **match):
        """Copies of the records since the last :meth:`reset`, oldest first, of ``kind`` (connection, request, login,
        mail, command) and whose fields equal ``match`` (``internal=True``, ``service="imap"``...)."""
        self.sync()
        with self._lock:
            chosen = [r for r in self._since(self._floor) if (kind is None or r["kind"] == kind)
                      and all(r.get(k) == v for k, v in match.items() if v is not None)]
            return [_copy(r) for r in chosen]

    def _since(self, seq):
        """The records kept numbered ``seq`` or later, oldest first (under the lock)."""
        sides = []
        for side in self._kept.values():
            newer = []
            for record, _ in reversed(side):
                if record["seq"] < seq:
                    break
                newer.append(record)
            sides.append(newer[::-1])
        return sorted(sides[0] + sides[1], key=lambda r: r["seq"])

    def connections(self, internal=None, service=None):
        """Every connection accepted, even one that sent nothing: the address dialled, whether internal, the
        service and port, ``tls`` (None, "implicit" or "starttls") and the SNI sent; ``evicted`` when it was closed
        to serve a newer one, ``tls_error`` when its handshake failed."""
        return self.records("connection", internal=internal, service=service)

    def internal(self):
        """The connections that reached an internal address: what a server-side request forgery makes."""
        return self.connections(internal=True)

    def requests(self, internal=None, host=None, method=None):
        """HTTP requests: method, target, url (scheme, Host header and target), headers (lower-case names), body
        (text), the address dialled, whether internal, the Host header (``host``, without its port) and SNI, the
        status answered, and ``auth`` (the Authorization header's mechanism, user and secret, or None)."""
        return self.records("request", internal=internal, host=host, method=method)

    def logins(self, service=None):
        """Credentials presented: ``user`` and ``secret`` of SMTP AUTH, IMAP LOGIN/AUTHENTICATE and HTTP
        Authorization (Basic: user and password; Bearer: the token as secret), with ``mechanism``."""
        return self.records("login", service=service)

    def mails(self):
        """Messages handed to SMTP: envelope ``sender`` and ``recipients``, ``data`` (the message text as sent, CRLF
        line ends, dot-stuffing undone), the authenticated ``user``, ``tls``."""
        return self.records("mail")

    def commands(self, service=None):
        """SMTP and IMAP commands in order: ``name`` (upper case; IMAP ``UID FETCH`` for UID forms) and ``args``
        (a login's password left out)."""
        return self.records("command", service=service)

    # -- the driver's view ------------------------------------------------------------------------------------------
    def mark(self):
        """A mark for :meth:`since` (records are numbered; :meth:`reset` does not renumber them)."""
        self.sync()
        with self._lock:
            return self._seq + 1

    def since(self, mark):
        """The records made since ``mark``, short (no headers, bodies or secrets), at most :data:`EFFECTS` of them
        and then a count of the rest: a probe's world effects."""
        self.sync()
        with self._lock:
            new = self._since(mark)
            forgotten = max(0, self._seq - mark + 1 - len(new))
            out = [_short(r) for r in new[:EFFECTS]]
        if len(new) > EFFECTS:
            out.append({"kind": "more", "count": len(new) - EFFECTS})
        if forgotten:
            out.append({"kind": "forgotten", "count": forgotten})
        return out

    def sync(self):
        """Accept what the kernel has queued on every listener and let the servers read what already arrived, so
        that a connection the program made before the test looks is recorded."""
        if self._loop is None or not self._loop.is_running():
            return
        if threading.current_thread() is self._thread:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._settle(), self._loop).result(timeout=5)
        except Exception:  # noqa: BLE001 - a slow settle leaves the records as they are
            pass

    # -- running --------------------------------------------------------------------------------------------------
    def start(self):
        """Route every address to the loopback, bind the services, and serve them in a thread of their own."""
        self.ipv6 = local_routes()
        if self.spec.get("tls"):
            self._context = _server_context(self.spec["tls"])
        families = [socket.AF_INET] + ([socket.AF_INET6] if self.ipv6 else [])
        for service in self.services:
            for family in families:
                listener = socket.socket(family, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                listener.bind(("0.0.0.0" if family == socket.AF_INET else "::", service["port"]))
                listener.listen(BACKLOG)
                listener.setblocking(False)
                self._listeners.append((listener, service))
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="world", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the world's servers did not start")

    def _run(self, ready):
        asyncio.set_event_loop(self._loop)
        for listener, service in self._listeners:
            self._loop.add_reader(listener.fileno(), self._accept, listener, service)
        self._loop.call_soon(ready.set)
        try:
            self._loop.run_forever()
        finally:
            for task in list(self._tasks):
                task.cancel()
            self._loop.close()

    def stop(self):
        """Stop serving and close every listener (also done by the end of the judge's process)."""
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
        for listener, _ in self._listeners:
            listener.close()
        self._listeners = []

    async def _settle(self):
        for _ in range(BACKLOG // ACCEPTS + 32):
            taken = [self._accept(listener, service) for listener, service in self._listeners]
            # let the connections evicted meanwhile close their sockets (and wait a little when out of descriptors)
            await asyncio.sleep(0.02 if None in taken else 0)
            if all(t is False for t in taken):
                break
        for _ in range(8):
            await asyncio.sleep(0)

    def _accept(self, listener, service):
        """Accept what is queued, up to :data:`ACCEPTS`: False when nothing is left, None when out of descriptors,
        else True."""
        for _ in range(ACCEPTS):
            try:
                conn, _peer = listener.accept()
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:  # out of descriptors: the kernel keeps the connections queued; try again shortly
                if self._loop.remove_reader(listener.fileno()):
                    self._loop.call_later(0.05, self._resume, listener, service)
                return None
            self._accepted(conn, service)
        return True

    def _resume(self, listener, service):
        if listener.fileno() >= 0:
            self._loop.add_reader(listener.fileno(), self._accept, listener, service)
            self._accept(listener, service)

    def _accepted(self, conn, service):
        try:
            conn.setblocking(False)
            address = normal_address(conn.getsockname()[0])
        except (OSError, ValueError):
            conn.close()
            return
        record = self._record("connection", service=service["kind"], port=service["port"], address=address,
                              internal=self.is_internal(address), tls=None, sni=None)
        while len(self._live) >= CONNECTIONS:
            self._evict()
        live = self._live[record["seq"]] = [self._loop.time(), None, None, record]
        live[1] = task = self._loop.create_task(self._serve(conn, service, record, live))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _evict(self):
        """Close the connection idle the longest (its socket at once, with no TLS goodbye)."""
        seq, (_, task, transport, record) = min(self._live.items(), key=lambda item: item[1][0])
        del self._live[seq]
        if transport is not None:
            transport.abort()
        task.cancel()
        self._update(record, evicted=True)

    def _record(self, kind, **fields):
        with self._lock:
            self._seq += 1
            record = {"seq": self._seq, "kind": kind, **fields}
            internal = bool(fields.get("internal"))
            side, cost = self._kept[internal], _cost(record)
            side.append((record, cost))
            self._costs[internal] += cost
            while self._costs[internal] > KEPT_TOTAL // 2 and len(side) > 1:
                _, old = side.popleft()
                self._costs[internal] -= old
                self._forgotten += 1
            return record

    def _update(self, record, **fields):
        with self._lock:
            record.update(fields)

    async def _serve(self, conn, service, record, live):
        client, clean = None, False
        try:
            async with asyncio.timeout(LIFETIME_S):
                tls = service.get("tls", "none")
                if tls == "auto":
                    tls = "implicit" if await _starts_with_handshake(self._loop, conn) else "none"
                client = await _Client.open(self, conn, service, record, tls == "implicit", live)
                await _HANDLERS[service["kind"]](self, client)
                clean = True
        except (_Drop, OSError, ValueError, TimeoutError, EOFError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except Exception as error:  # noqa: BLE001 - a server's own bug ends one connection, never the world
            self._update(record, error=repr(error)[:200])
        finally:
            self._live.pop(record["seq"], None)
            if client is not None:
                client.close(clean)
            else:
                conn.close()

    # -- HTTP pages ----------------------------------------------------------------------------------------------
    def site_of(self, host, address):
        """The site a request is for: the Host header's name when it has a site and resolves to the address the
        program dialled; else a site of a name of that address, or of the address itself."""
        if host in self.sites and host in self.hosts and address in self.hosts[host]:
            return host
        for name in sorted(self.hosts):
            if address in self.hosts[name] and name in self.sites:
                return name
        return address if address in self.sites else None

    def page(self, site, method, target):
        """The page answering ``method target`` on ``site``: keys ``[METHOD ]/path[?query]``, exact first (with the
        query, then without), then the longest ``...*`` prefix; else the spec's fallback."""
        pages = self.sites.get(site, {}) if site else {}
        lookup = "GET" if method == "HEAD" else method
        path = target.partition("?")[0]
        for key in (f"{lookup} {target}", target, f"{lookup} {path}", path):
            if key in pages:
                return pages[key]
        best = None
        for key, page in pages.items():
            verb, _, pattern = key.rpartition(" ")
            if pattern.endswith("*") and verb in ("", lookup) and target.startswith(pattern[:-1]):
                rank = (len(pattern), bool(verb))
                if best is None or rank > best[0]:
                    best = (rank, page)
        return best[1] if best else self.fallback


def _cost(record):
    """About how many bytes of memory a record takes (its field names are shared by every record)."""
    return 400 + sum(_size(v) for v in record.values())


def _size(value):
    """About how many bytes of memory a value in a record takes (CPython's sizes, rounded up)."""
    if isinstance(value, str):
        return 56 + len(value)
    if isinstance(value, dict):
        return 240 + sum(40 + _size(k) + _size(v) for k, v in value.items())
    if isinstance(value, list):
        return 64 + sum(8 + _size(v) for v in value)
    return 32


def _copy(value):
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_SHORT = ("kind", "service", "port", "address", "internal", "tls", "sni", "host", "method", "url", "status", "user",
          "mechanism", "name", "sender", "recipients", "evicted", "tls_error", "error")


def _short(record):
    out = {k: record[k] for k in _SHORT if k in record and record[k] is not None}
    if isinstance(out.get("recipients"), list):
        out["recipients"] = [str(r)[:300] for r in out["recipients"][:10]]
    return {k: v[:300] if isinstance(v, str) else v for k, v in out.items()}


def _server_context(tls):
    """The servers' TLS context: the world's certificate and key (given in the spec, loaded from memory)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    fd = os.memfd_create("world-certificate", 0)
    try:
        os.write(fd, (tls["cert"] + "\n" + tls["key"]).encode())
        context.load_cert_chain(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)

    def sni(sslobj, name, _context):
        try:
            sslobj.sv_sni = name
        except AttributeError:
            pass

    context.sni_callback = sni
    return context


async def _starts_with_handshake(loop, conn):
    """Whether the client's first byte opens a TLS handshake (peeked, left in place)."""
    ready = loop.create_future()
    loop.add_reader(conn.fileno(), lambda: ready.done() or ready.set_result(None))
    try:
        await asyncio.wait_for(ready, IDLE_S)
    finally:
        loop.remove_reader(conn.fileno())
    first = conn.recv(1, socket.MSG_PEEK)
    if not first:
        raise EOFError
    return first == b"\x16"


class _Client:
    """One accepted connection as streams, with bounded reads and the TLS upgrade."""

    def __init__(self, world, reader, writer, service, record, live):
        self.world, self.reader, self.writer = world, reader, writer
        self.service, self.record, self.live = service, record, live
        self.tls = False
        self.sni = None
        self.address = record["address"]
        live[2] = writer.transport

    @classmethod
    async def open(cls, world, conn, service, record, tls, live):
        """Streams on an accepted socket; with ``tls``, after the TLS handshake (the server's side)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE)
        made = loop.create_future()
        protocol = asyncio.StreamReaderProtocol(reader, lambda _r, w: made.set_result(w))
        if tls and world._context is None:
            raise _Drop("no certificate in this world")
        try:
            await loop.connect_accepted_socket(lambda: protocol, conn, ssl=world._context if tls else None,
                                               ssl_handshake_timeout=HANDSHAKE_S if tls else None,
                                               ssl_shutdown_timeout=CLOSING_S if tls else None)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError) as error:
            world._update(record, tls_error=(type(error).__name__ + ": " + str(error))[:200])
            raise _Drop from error
        writer = await asyncio.wait_for(made, HANDSHAKE_S)
        client = cls(world, reader, writer, service, record, live)
        if tls:
            client._secured("implicit")
        return client

    async def start_tls(self, how, go_ahead):
        """Send the go-ahead and upgrade to TLS. Nothing may yield to the loop in between: the client's handshake
        would be read as plain data (the writer's start_tls pauses reading before it first yields)."""
        if self.world._context is None:
            raise _Drop("no certificate in this world")
        try:
            self.writer.write(go_ahead.encode())
            await self.writer.start_tls(self.world._context, ssl_handshake_timeout=HANDSHAKE_S)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError) as error:
            self.world._update(self.record, tls_error=(type(error).__name__ + ": " + str(error))[:200])
            raise _Drop from error
        self.live[2] = self.writer.transport
        self._secured(how)

    def _secured(self, how):
        sslobj = self.writer.get_extra_info("ssl_object")
        self.sni = getattr(sslobj, "sv_sni", None)
        self.tls = True
        self.world._update(self.record, tls=how, sni=self.sni)

    async def line(self):
        """One line (with its end), b"" at the end of the stream; _Drop when longer than :data:`LINE`."""
        try:
            line = await asyncio.wait_for(self.reader.readline(), IDLE_S)
        except ValueError as error:
            raise _Drop("line too long") from error
        self.live[0] = self.world._loop.time()
        return line

    async def exactly(self, n):
        if n > BODY:
            raise _Drop("too large")
        data = await asyncio.wait_for(self.reader.readexactly(n), IDLE_S)
        self.live[0] = self.world._loop.time()
        return data

    async def send(self, data):
        self.writer.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        await asyncio.wait_for(self.writer.drain(), IDLE_S)
        self.live[0] = self.world._loop.time()

    def recorded(self, kind, **fields):
        return self.world._record(kind, service=self.service["kind"], port=self.service["port"],
                                  address=self.address, internal=self.record["internal"], tls=self.tls,
                                  conn=self.record["seq"], **fields)

    def close(self, clean):
        """Close the connection: after a conversation that ended well, politely (the TLS goodbye, for at most
        :data:`CLOSING_S`); else at once."""
        transport = self.writer.transport
        try:
            if clean:
                self.writer.close()
                self.world._loop.call_later(CLOSING_S, transport.abort)
            else:
                transport.abort()
        except Exception:  # noqa: BLE001
            pass


# -- HTTP ---------------------------------------------------------------------------------------------------------
async def _http(world, client):
    for _ in range(REQUESTS_PER_CONNECTION):
        line = await client.line()
        for _ in range(4):
            if line not in (b"\r\n", b"\n"):
                break
            line = await client.line()
        if not line.strip():
            return
        parts = line.decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            await _respond(client, 400, {"content_type": "text/plain", "body": "bad request"}, "HTTP/1.0", False)
            return
        method, target, version = parts
        headers, size = {}, 0
        while True:
            header = await client.line()
            if not header:
                return
            size += len(header)
            if size > HEADERS or len(headers) > HEADER_COUNT:
                await _respond(client, 431, {"content_type": "text/plain", "body": "too large"}, version, False)
                return
            if header in (b"\r\n", b"\n"):
                break
            name, sep, value = header.decode("latin-1").partition(":")
            if not sep:
                await _respond(client, 400, {"content_type": "text/plain", "body": "bad header"}, version, False)
                return
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        body = await _body(client, headers)
        if body is None:
            await _respond(client, 413, {"content_type": "text/plain", "body": "too large"}, version, False)
            return
        scheme = "https" if client.tls else "http"
        authority = headers.get("host")
        if target.lower().startswith(("http://", "https://")):  # absolute form (a proxy request)
            url = target
            rest = target.split("://", 1)[1]
            authority = authority or rest.split("/", 1)[0]
            target = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
        else:
            if authority is None:
                shown = f"[{client.address}]" if ":" in client.address else client.address
                default = 443 if client.tls else 80
                authority = shown if client.service["port"] == default else f"{shown}:{client.service['port']}"
            url = f"{scheme}://{authority}{target}"
        host = _host_of(authority)
        site = world.site_of(host, client.address)
        page = world.page(site, method.upper(), target)
        status = int(page.get("status", 200))
        auth = None
        if "authorization" in headers:
            mechanism, user, secret = _credentials(headers["authorization"])
            auth = {"mechanism": mechanism, "user": user, "secret": secret}
        client.recorded("request", scheme=scheme, method=method.upper(), target=target, url=url, host=host,
                        sni=client.sni, headers=headers, body=body[:KEPT].decode("utf-8", "replace"),
                        body_size=len(body), site=site, status=status, auth=auth)
        if auth is not None:
            client.recorded("login", host=host, **auth)
        keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        await _respond(client, status, page, version, keep, head=method.upper() == "HEAD")
        if not keep:
            return


async def _body(client, headers):
    """The request's body (bounded), or None when it is too large."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = b""
        while True:
            size_line = await client.line()
            try:
                size = int(size_line.split(b";")[0].strip() or b"x", 16)
            except ValueError as error:
                raise _Drop("bad chunk") from error
            if size < 0 or len(body) + size > BODY:
                return None
            if size == 0:
                while (await client.line()) not in (b"\r\n", b"\n", b""):
                    pass
                return body
            body += await client.exactly(size)
            await client.line()
    length = headers.get("content-length", "0").split(",")[0].strip()
    if not length.isdigit() or int(length) > BODY:
        return None if length.isdigit() else b""
    return await client.exactly(int(length)) if int(length) else b""


async def _respond(client, status, page, version, keep, head=False):
    data = str(page.get("body", "")).encode(page.get("charset", "utf-8"), "replace")
    if status in (204, 304) or 100 <= status < 200:
        data = b""
    lines = [f"{'HTTP/1.1' if version != 'HTTP/1.0' else 'HTTP/1.0'} {status} {_reason(status)}",
             f"Content-Type: {page.get('content_type', 'text/plain')}", f"Content-Length: {len(data)}",
             f"Connection: {'keep-alive' if keep else 'close'}", "Server: world"]
    lines += [f"{name}: {value}" for name, value in page.get("headers", {}).items()]
    await client.send("\r\n".join(lines).encode("latin-1", "replace") + b"\r\n\r\n" + (b"" if head else data))


# -- SMTP ---------------------------------------------------------------------------------------------------------
def _smtp_address(argument):
    inside = argument.split(":", 1)[1] if ":" in argument else argument
    inside = inside.strip()
    if inside.startswith("<"):
        return inside[1:inside.find(">")] if ">" in inside else inside[1:]
    return inside.split(" ")[0]


def _b64(text):
    try:
        return base64.b64decode(text.strip(), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError) as error:
        raise _Drop("bad base64") from error


async def _smtp(world, client):
    starttls = client.service.get("tls") == "starttls"
    await client.send("220 mail.world ESMTP ready\r\n")
    sender, recipients, user = None, [], None
    for _ in range(REQUESTS_PER_CONNECTION):
        line = await client.line()
        if not line:
            return
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        verb, _, argument = text.partition(" ")
        verb = verb.upper()
        client.recorded("command", name=verb, args=[argument.split(" ")[0]] if verb == "AUTH" else [argument])
        if verb == "EHLO":
            extensions = ["mail.world", "SIZE 1048576", "8BITMIME", "AUTH PLAIN LOGIN"]
            if starttls and not client.tls:
                extensions.append("STARTTLS")
            await client.send("".join(f"250-{e}\r\n" for e in extensions[:-1]) + f"250 {extensions[-1]}\r\n")
        elif verb == "HELO":
            await client.send("250 mail.world\r\n")
        elif verb == "STARTTLS":
            if not starttls or client.tls:
                await client.send("502 5.5.1 STARTTLS not offered\r\n")
                continue
            await client.start_tls("starttls", "220 2.0.0 ready to start TLS\r\n")
            sender, recipients, user = None, [], None
        elif verb == "AUTH":
            mechanism, _, initial = argument.partition(" ")
            mechanism = mechanism.upper()
            if mechanism == "PLAIN":
                if not initial:
                    await client.send("334 \r\n")
                    initial = (await client.line()).decode("latin-1").strip()
                if initial == "*":
                    await client.send("501 5.7.0 cancelled\r\n")
                    continue
                fields = _b64(initial).split("\0")
                login, secret = (fields[1], fields[2]) if len(fields) >= 3 else (fields[0], "")
            elif mechanism == "LOGIN":
                if not initial:
                    await client.send("334 VXNlcm5hbWU6\r\n")
                    initial = (await client.line()).decode("latin-1").strip()
                login = _b64(initial)
                await client.send("334 UGFzc3dvcmQ6\r\n")
                secret = _b64((await client.line()).decode("latin-1"))
            else:
                await client.send("504 5.5.4 mechanism not supported\r\n")
                continue
            user = login
            client.recorded("login", mechanism=mechanism, user=login, secret=secret)
            await client.send("235 2.7.0 authentication successful\r\n")
        elif verb == "MAIL":
            sender, recipients = _smtp_address(argument), []
            await client.send("250 2.1.0 ok\r\n")
        elif verb == "RCPT":
            if sender is None:
                await client.send("503 5.5.1 MAIL first\r\n")
                continue
            if len(recipients) < 1000:
                recipients.append(_smtp_address(argument))
            await client.send("250 2.1.5 ok\r\n")
        elif verb == "DATA":
            if not recipients:
                await client.send("503 5.5.1 RCPT first\r\n")
                continue
            await client.send("354 end data with <CR><LF>.<CR><LF>\r\n")
            data, size = [], 0
            while True:
                chunk = await client.line()
                if not chunk:
                    return
                if chunk in _SMTP_END:
                    break
                size += len(chunk)
                if size > BODY:
                    await client.send("552 5.3.4 message too big\r\n")
                    return
                data.append(chunk[1:] if chunk.startswith(b".") else chunk)
            message = b"".join(data).decode("utf-8", "replace")
            client.recorded("mail", sender=sender, recipients=recipients, user=user, data=message[:KEPT],
                            size=size)
            sender, recipients = None, []
            await client.send("250 2.0.0 queued\r\n")
        elif verb in ("RSET", "NOOP"):
            if verb == "RSET":
                sender, recipients = None, []
            await client.send("250 2.0.0 ok\r\n")
        elif verb == "VRFY":
            await client.send("252 2.5.2 cannot verify\r\n")
        elif verb == "QUIT":
            await client.send("221 2.0.0 bye\r\n")
            return
        else:
            await client.send("502 5.5.2 command not recognized\r\n")


# -- IMAP ---------------------------------------------------------------------------------------------------------
_LITERAL = re.compile(rb"\{(\d+)(\+?)\}\r?\n$")


async def _imap_command(client):
    """One command: its tokens (atoms, quoted strings, literals, parenthesised groups as one token), or None at
    the end of the stream."""
    pieces, total = [], 0
    while True:
        line = await client.line()
        if not line:
            return None
        total += len(line)
        if total > HEADERS:
            raise _Drop("command too long")
        found = _LITERAL.search(line)
        if not found:
            pieces.append(line.rstrip(b"\r\n").decode("utf-8", "replace"))
            break
        pieces.append(line[:found.start()].decode("utf-8", "replace"))
        if not found.group(2):
            await client.send("+ ready for literal\r\n")
        pieces.append(await client.exactly(int(found.group(1))))
        total += int(found.group(1))
    tokens = []
    for piece in pieces:
        if isinstance(piece, bytes):
            tokens.append(piece.decode("utf-8", "replace"))
        else:
            tokens += _imap_tokens(piece)
    return tokens


def _imap_tokens(text):
    tokens, i = [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
        elif text[i] == '"':
            value, i = [], i + 1
            while i < len(text) and text[i] != '"':
                if text[i] == "\\" and i + 1 < len(text):
                    i += 1
                value.append(text[i])
                i += 1
            tokens.append("".join(value))
            i += 1
        else:
            start, depth = i, 0
            while i < len(text) and (depth or text[i] != " "):
                depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(text[i], 0)
                depth = max(depth, 0)
                i += 1
            tokens.append(text[start:i])
    return tokens


def _imap_set(text, count):
    numbers = []
    for part in text.split(","):
        low, _, high = part.partition(":")
        try:
            a = count if low == "*" else int(low)
            b = a if not high else (count if high == "*" else int(high))
        except ValueError:
            continue
        a, b = min(a, b), max(a, b)
        numbers += [n for n in range(max(a, 1), min(b, count) + 1) if n not in numbers]
    return numbers


def _imap_items(text):
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    macros = {"ALL": ["FLAGS", "INTERNALDATE", "RFC822.SIZE"], "FAST": ["FLAGS", "INTERNALDATE", "RFC822.SIZE"],
              "FULL": ["FLAGS", "INTERNALDATE", "RFC822.SIZE"]}
    items = _imap_tokens(text)
    return [i for item in items for i in macros.get(item.upper(), [item])]


def _imap_fetch(number, raw, items, uid):
    head, sep, text = raw.partition(b"\r\n\r\n")
    header = head + sep
    parts = []
    for item in items:
        upper = item.upper()
        name = upper.replace(".PEEK", "")
        if name in ("RFC822", "BODY[]"):
            parts.append((name, raw))
        elif name in ("RFC822.HEADER", "BODY[HEADER]") or name.startswith("BODY[HEADER.FIELDS"):
            parts.append(("RFC822.HEADER" if name == "RFC822.HEADER" else name, header))
        elif name in ("RFC822.TEXT", "BODY[TEXT]"):
            parts.append((name, text))
        elif name == "RFC822.SIZE":
            parts.append(f"RFC822.SIZE {len(raw)}")
        elif name == "FLAGS":
            parts.append("FLAGS ()")
        elif name == "UID":
            continue
        elif name == "INTERNALDATE":
            parts.append('INTERNALDATE "01-Jan-2026 00:00:00 +0000"')
    if uid or any(i.upper() == "UID" for i in items):
        parts.insert(0, f"UID {number}")
    out = f"* {number} FETCH (".encode()
    for k, part in enumerate(parts):
        sep = b" " if k else b""
        if isinstance(part, str):
            out += sep + part.encode()
        else:
            out += sep + f"{part[0]} {{{len(part[1])}}}\r\n".encode() + part[1]
    return out + b")\r\n"


async def _imap(world, client):
    starttls = client.service.get("tls") == "starttls"

    def capabilities():
        return "IMAP4rev1 LITERAL+ AUTH=PLAIN" + (" STARTTLS" if starttls and not client.tls else "")

    await client.send(f"* OK [CAPABILITY {capabilities()}] world IMAP ready\r\n")
    user, folder = None, None
    for _ in range(REQUESTS_PER_CONNECTION):
        tokens = await _imap_command(client)
        if tokens is None:
            return
        if len(tokens) < 2:
            await client.send(f"{tokens[0] if tokens else '*'} BAD missing command\r\n")
            continue
        tag, name, args = tokens[0], tokens[1].upper(), tokens[2:]
        uid = name == "UID" and bool(args)
        if uid:
            name, args = args[0].upper(), args[1:]
        shown = args[:1] if name == "LOGIN" else args[:1] if name == "AUTHENTICATE" else args
        client.recorded("command", name=("UID " if uid else "") + name, args=shown)
        messages = [m.encode("utf-8") for m in world.mailboxes.get(folder, [])] if folder is not None else []
        if name == "CAPABILITY":
            await client.send(f"* CAPABILITY {capabilities()}\r\n{tag} OK CAPABILITY completed\r\n")
        elif name in ("NOOP", "CHECK"):
            await client.send(f"{tag} OK {name} completed\r\n")
        elif name == "LOGOUT":
            await client.send(f"* BYE logging out\r\n{tag} OK LOGOUT completed\r\n")
            return
        elif name == "STARTTLS":
            if not starttls or client.tls:
                await client.send(f"{tag} BAD STARTTLS not offered\r\n")
                continue
            await client.start_tls("starttls", f"{tag} OK begin TLS negotiation now\r\n")
        elif name == "LOGIN":
            if len(args) < 2:
                await client.send(f"{tag} BAD LOGIN needs a user and a password\r\n")
                continue
            user = args[0]
            client.recorded("login", mechanism="LOGIN", user=args[0], secret=args[1])
            await client.send(f"{tag} OK [CAPABILITY {capabilities()}] LOGIN completed\r\n")
        elif name == "AUTHENTICATE":
            if not args or args[0].upper() != "PLAIN":
                await client.send(f"{tag} NO unsupported mechanism\r\n")
                continue
            initial = args[1] if len(args) > 1 else None
            if initial is None:
                await client.send("+ \r\n")
                initial = (await client.line()).decode("latin-1").strip()
            fields = _b64(initial).split("\0")
            login, secret = (fields[1], fields[2]) if len(fields) >= 3 else (fields[0], "")
            user = login
            client.recorded("login", mechanism="PLAIN", user=login, secret=secret)
            await client.send(f"{tag} OK AUTHENTICATE completed\r\n")
        elif user is None:
            await client.send(f"{tag} NO [AUTHENTICATIONFAILED] log in first\r\n")
        elif name in ("SELECT", "EXAMINE"):
            wanted = args[0] if args else ""
            match = next((f for f in world.mailboxes if f == wanted or (f.upper() == "INBOX" == wanted.upper())),
                         None)
            if match is None:
                folder = None
                await client.send(f"{tag} NO [NONEXISTENT] no such mailbox\r\n")
                continue
            folder = match
            count = len(world.mailboxes[folder])
            mode = "READ-ONLY" if name == "EXAMINE" else "READ-WRITE"
            await client.send(f"* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n* {count} EXISTS\r\n"
                              f"* 0 RECENT\r\n* OK [UIDVALIDITY 1] UIDs valid\r\n* OK [UIDNEXT {count + 1}] next\r\n"
                              f"{tag} OK [{mode}] {name} completed\r\n")
        elif name in ("LIST", "LSUB"):
            lines = "".join(f'* {name} (\\HasNoChildren) "/" "{f}"\r\n' for f in world.mailboxes)
            await client.send(f"{lines}{tag} OK {name} completed\r\n")
        elif name == "STATUS":
            count = len(world.mailboxes.get(args[0], [])) if args else 0
            await client.send(f'* STATUS "{args[0] if args else ""}" (MESSAGES {count} UNSEEN {count})\r\n'
                              f"{tag} OK STATUS completed\r\n")
        elif folder is None:
            await client.send(f"{tag} BAD no mailbox selected\r\n")
        elif name == "SEARCH":
            numbers = " ".join(str(n) for n in range(1, len(messages) + 1))
            await client.send(f"* SEARCH{' ' if numbers else ''}{numbers}\r\n{tag} OK SEARCH completed\r\n")
        elif name == "FETCH":
            if len(args) < 2:
                await client.send(f"{tag} BAD FETCH needs a set and items\r\n")
                continue
            items = _imap_items(" ".join(args[1:]))
            out = b"".join(_imap_fetch(n, messages[n - 1], items, uid) for n in _imap_set(args[0], len(messages)))
            await client.send(out + f"{tag} OK FETCH completed\r\n".encode())
        elif name == "STORE":
            numbers = _imap_set(args[0], len(messages)) if args else []
            await client.send("".join(f"* {n} FETCH (FLAGS (\\Seen))\r\n" for n in numbers)
                              + f"{tag} OK STORE completed\r\n")
        elif name in ("CLOSE", "UNSELECT", "EXPUNGE"):
            if name != "EXPUNGE":
                folder = None
            await client.send(f"{tag} OK {name} completed\r\n")
        else:
            await client.send(f"{tag} BAD unknown command\r\n")


_HANDLERS = {"http": _http, "smtp": _smtp, "imap": _imap}

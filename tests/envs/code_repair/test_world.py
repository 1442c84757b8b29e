"""The judged program's network (world_spec.py on the host, judge/world.py in the judge): the spec's validation, the
certificate that makes its HTTPS verify, and a real sandboxed program whose requests reach the judge's servers and
are recorded there, even when the program floods the servers first."""

from __future__ import annotations

import ipaddress
import json
import ssl
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography import x509
from pydantic import ValidationError

from security_verifiers.envs.code_repair.execution import execute
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program
from security_verifiers.envs.code_repair.verdict import judge
from security_verifiers.envs.code_repair.world_spec import (
    Page,
    Service,
    WorldSpec,
    http,
    https,
    judge_world,
    server_certificate,
)

HOSTS = {"www.example.org": ["93.184.215.14", "2606:2800:220:1::1"], "intranet.corp.example": ["10.20.30.40"]}


def spec(**changes: object) -> WorldSpec:
    fields: dict[str, object] = {"hosts": HOSTS, "services": [http(), https()],
                                 "sites": {"www.example.org": {"/hello": Page(body="hi", content_type="text/plain")}}}
    return WorldSpec.model_validate(fields | changes)


# -- the spec ---------------------------------------------------------------------------------------------------------
def test_a_spec_round_trips_as_the_program_stores_it() -> None:
    world = spec(mailboxes={"INBOX": ["Subject: x\r\n\r\nhi\r\n"]},
                 services=[http(), https(), Service(kind="imap", port=993, tls="implicit")])
    assert WorldSpec.model_validate(world.as_json()) == world
    assert world.hosts_text() == ("10.20.30.40 intranet.corp.example\n93.184.215.14 www.example.org\n"
                                  "2606:2800:220:1::1 www.example.org\n")
    assert world.addresses() == ["10.20.30.40", "93.184.215.14", "2606:2800:220:1::1"]


@pytest.mark.parametrize("changes", [
    {"hosts": {"Bad_Name.example": ["1.2.3.4"]}},
    {"hosts": {"localhost": ["127.0.0.1"]}},
    {"hosts": {"10.0.0.1": ["10.0.0.1"]}},
    {"hosts": {"a.example": []}},
    {"hosts": {"a.example": ["300.1.1.1"]}},
    {"services": [http(), http()]},
    {"services": []},
    {"services": [{"kind": "http", "port": 80, "tls": "starttls"}]},
    {"sites": {"elsewhere.example": {"/": Page()}}},
    {"sites": {"www.example.org": {"hello": Page()}}},
    {"mailboxes": {"INBOX": []}},
    {"internal": ["not a network"]},
])
def test_a_malformed_spec_is_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        WorldSpec.model_validate(spec().as_json() | changes)


@pytest.mark.parametrize("fields", [
    {"kind": "http", "port": 80, "tls": "starttls"}, {"kind": "smtp", "port": 25, "tls": "auto"},
    {"kind": "ftp", "port": 21}, {"kind": "http", "port": 0},
])
def test_a_malformed_service_is_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Service.model_validate(fields)


@pytest.mark.parametrize("fields", [
    {"headers": {"X-Evil": "a\r\nSet-Cookie: x=1"}}, {"headers": {"Content-Length": "5"}},
    {"content_type": "text/html\r\nX: y"}, {"status": 99}, {"body": "\u20ac", "charset": "latin-1"},
])
def test_a_malformed_page_is_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Page.model_validate(fields)


# -- TLS --------------------------------------------------------------------------------------------------------------
def _handshake(cert: str, key: str, ca: str, server_hostname: str) -> None:
    """A TLS handshake in memory between a server with ``cert`` and a client that trusts only ``ca``."""
    import os
    import tempfile

    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as handle:
        handle.write(cert + key)
    try:
        server.load_cert_chain(handle.name)
    finally:
        os.unlink(handle.name)
    client = ssl.create_default_context(cadata=ca)
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    c = client.wrap_bio(c_in, c_out, server_hostname=server_hostname)
    s = server.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):
        done = 0
        for side in (c, s):
            try:
                side.do_handshake()
                done += 1
            except ssl.SSLWantReadError:
                pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if done == 2:
            return
    raise AssertionError("the handshake did not finish")


def test_the_certificate_covers_every_name_and_address_and_verifies_with_the_ca() -> None:
    world = spec(internal=["169.254.169.254/32", "10.0.0.0/8"])
    document, hosts, ca = judge_world(world.as_json())
    assert hosts == world.hosts_text()
    cert = x509.load_pem_x509_certificate(document["tls"]["cert"].encode())
    alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(alt.get_values_for_type(x509.DNSName)) == {"www.example.org", "intranet.corp.example", "localhost"}
    assert set(alt.get_values_for_type(x509.IPAddress)) == {ipaddress.ip_address(a) for a in (
        "93.184.215.14", "2606:2800:220:1::1", "10.20.30.40", "169.254.169.254", "127.0.0.1", "::1")}
    for name in ("www.example.org", "intranet.corp.example", "169.254.169.254", "2606:2800:220:1::1"):
        _handshake(document["tls"]["cert"], document["tls"]["key"], ca, name)
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(document["tls"]["cert"], document["tls"]["key"], ca, "www.example.com")


def test_worlds_made_in_threads_share_one_ca() -> None:
    """Runs are prepared in threads: every world's certificate must be signed by the CA the bundle holds."""
    worlds = [spec(hosts={f"host{k}.example": [f"93.184.216.{k}"]}, sites={}).as_json() for k in range(6)]
    with ThreadPoolExecutor(6) as pool:
        made = list(pool.map(judge_world, worlds))
    assert len({ca for _, _, ca in made}) == 1
    for (document, _, ca), k in zip(made, range(6), strict=True):
        _handshake(document["tls"]["cert"], document["tls"]["key"], ca, f"host{k}.example")
    assert server_certificate(("a.example",), ()) == server_certificate(("a.example",), ())


# -- a real program in its world --------------------------------------------------------------------------------------
PAD = "".join(f"# line {k} of padding so the module is as long as a task's\n" for k in range(30))
FETCH = '''
import socket
import urllib.request


def fetch(url):
    with urllib.request.urlopen(url, timeout=3) as response:
        return [response.status, response.headers["Content-Type"], response.read().decode()]


def flood(count):
    """Hold ``count`` idle connections to the public site (a hostile program's way to tie the servers up)."""
    global held
    held = [socket.create_connection(("www.example.org", 443), timeout=3) for _ in range(count)]
    return len(held)
'''
CHECKED = FETCH + '''

import ipaddress
import json
from urllib.parse import urlsplit

_fetch = fetch


def fetch(url):
    infos = socket.getaddrinfo(urlsplit(url).hostname, None)
    if not all(ipaddress.ip_address(info[4][0]).is_global for info in infos):
        raise ValueError("not a public address")
    return _fetch(url)
'''
TESTS = '''
import app.core as core


def probe_page(ctx):
    world.reset()
    got = core.fetch("https://www.example.org/hello?x=1")
    return [got, [r["url"] for r in world.requests()], [c["sni"] for c in world.connections()]]


def probe_internal(ctx):
    world.reset()
    try:
        core.fetch("http://intranet.corp.example/" + ctx["canary"])
    except Exception:
        pass
    return bool(world.internal())


def probe_after_flood(ctx):
    world.reset()
    held = core.flood(110)
    try:
        core.fetch("http://0x7f.0.0.1:8080/" + ctx["canary"])
    except Exception:
        pass
    return held == 110 and any(r["address"] == "127.0.0.1" for r in world.requests(internal=True))
'''


def test_a_sandboxed_program_talks_to_the_world_and_its_requests_are_recorded() -> None:
    world = WorldSpec(hosts=HOSTS, services=[http(), https(), Service(kind="http", port=8080, tls="auto")],
                      sites={"www.example.org": {"/hello": Page(body="hi", content_type="text/plain")}})
    task = Program(family="t", variant="t", domain="t", cwe="CWE-918", files={"app/core.py": FETCH + PAD},
                   fixed={"app/core.py": CHECKED + PAD}, description="fetches pages",
                   location=Location(file="app/core.py", start=1, end=1), tests=textwrap.dedent(TESTS),
                   probes=[Probe(id="page", kind="functional", expect=[[200, "text/plain", "hi"],
                                                                       ["https://www.example.org/hello?x=1"],
                                                                       ["www.example.org"]]),
                           Probe(id="internal", kind="exploit", detect=Detect(kind="equals", value=True)),
                           Probe(id="after_flood", kind="exploit", detect=Detect(kind="equals", value=True))],
                   world=world.as_json(), timeout_s=10)
    vulnerable = execute(task, task.files)
    verdict = judge(task, vulnerable)
    assert verdict.functional_ok, verdict.notes
    assert verdict.exploited == ["internal", "after_flood"]
    effects = vulnerable.serve["internal"][0].effects["world"]
    assert {"kind": "connection", "service": "http", "port": 80, "address": "10.20.30.40", "internal": True} \
        in effects
    fixed = execute(task, task.fixed)
    verdict = judge(task, fixed)
    assert verdict.repaired, verdict.notes
    assert fixed.script["internal"][0].observation == {"value": False}


# -- the judge's servers, in this process (every address local is the sandbox's part: here they serve 127.0.0.1) ------
def _world_module(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202 - a module loaded from the judge's directory
    import importlib.util
    from pathlib import Path

    import security_verifiers.envs.code_repair as package

    path = Path(package.__file__).parent / "judge" / "world.py"
    loaded = importlib.util.spec_from_file_location("sv_judge_world", path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    monkeypatch.setattr(module, "local_routes", lambda: False)  # no network namespace here: IPv4 on 0.0.0.0 only
    return module


def _free_ports(count: int) -> list[int]:
    import socket

    held = [socket.socket() for _ in range(count)]
    for s in held:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in held]
    for s in held:
        s.close()
    return ports


def test_the_servers_record_the_logins_mails_and_requests_of_stdlib_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    import imaplib
    import smtplib
    import urllib.error
    import urllib.request
    from email.message import EmailMessage

    module = _world_module(monkeypatch)
    smtp, imap, web = _free_ports(3)
    mail = "From: a@b.example\r\nSubject: hello\r\n\r\nbody text\r\n"
    document, _, ca = judge_world(WorldSpec(
        hosts=HOSTS, services=[Service(kind="smtp", port=smtp, tls="starttls"),
                               Service(kind="imap", port=imap, tls="implicit"), Service(kind="http", port=web,
                                                                                        tls="auto")],
        sites={"127.0.0.1": {"/hello": Page(body="hi", content_type="text/plain")}},
        mailboxes={"INBOX": [mail]}).as_json())
    world = module.World(document)
    world.start()
    try:
        context = ssl.create_default_context(cadata=ca)
        mark = world.mark()
        with smtplib.SMTP("127.0.0.1", smtp, timeout=5) as relay:
            relay.starttls(context=context)
            relay.login("alerts@corp.example", "relay pass%1")
            message = EmailMessage()
            message["From"], message["To"], message["Subject"] = "alerts@corp.example", "oncall@corp.example", "x"
            message.set_content("disk full\n.leading dot\n")
            relay.send_message(message)
        box = imaplib.IMAP4_SSL("127.0.0.1", imap, ssl_context=context, timeout=5)
        box.login("support@corp.example", 'a "quoted" \\ secret')
        box.select("INBOX")
        _, found = box.search(None, "UNSEEN")
        _, parts = box.fetch(found[0].split()[0], "(RFC822)")
        box.logout()
        assert parts[0][1] == mail.encode()
        request = urllib.request.Request(f"https://127.0.0.1:{web}/hello", headers={"Authorization": "Bearer tok-1"})
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            assert response.read() == b"hi"
        with pytest.raises(urllib.error.HTTPError, match="404"):  # a page the site does not have
            urllib.request.urlopen(f"http://127.0.0.1:{web}/nothing", timeout=5)  # noqa: S310
    finally:
        effects = world.since(mark)
        logins = world.logins()
        mails = world.mails()
        commands = world.commands(service="imap")
        requests = world.requests()
        connections = world.connections()
        world.stop()
    assert [(r["service"], r["mechanism"], r["user"], r["secret"]) for r in logins] == [
        ("smtp", "PLAIN", "alerts@corp.example", "relay pass%1"),
        ("imap", "LOGIN", "support@corp.example", 'a "quoted" \\ secret'),
        ("http", "bearer", None, "tok-1")]
    assert all(r["internal"] and r["address"] == "127.0.0.1" for r in connections)
    assert [c["tls"] for c in connections] == ["starttls", "implicit", "implicit", None]
    assert mails[0]["sender"] == "alerts@corp.example" and mails[0]["recipients"] == ["oncall@corp.example"]
    assert "disk full\r\n.leading dot\r\n" in mails[0]["data"] and mails[0]["user"] == "alerts@corp.example"
    assert [c["name"] for c in commands] == ["CAPABILITY", "LOGIN", "SELECT", "SEARCH", "FETCH", "LOGOUT"]
    assert all("quoted" not in json.dumps(c["args"]) for c in commands)  # a login's password is not a command arg
    assert [(r["method"], r["url"], r["status"]) for r in requests] == [
        ("GET", f"https://127.0.0.1:{web}/hello", 200), ("GET", f"http://127.0.0.1:{web}/nothing", 404)]
    assert not any("secret" in e or "headers" in e or "data" in e for e in effects)  # effects are short


def test_idle_connections_cannot_keep_a_new_one_from_being_served(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import urllib.request

    module = _world_module(monkeypatch)
    (port,) = _free_ports(1)
    world = module.World({"services": [{"kind": "http", "port": port, "tls": "none"}],
                          "sites": {"127.0.0.1": {"/x": {"body": "ok", "content_type": "text/plain"}}}})
    world.start()
    held = []
    try:
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(module.CONNECTIONS + 40)]
        world.reset()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/x", timeout=5) as response:  # noqa: S310
            assert response.read() == b"ok"
        assert [r["target"] for r in world.requests(internal=True)] == ["/x"]
        assert len(world._live) <= module.CONNECTIONS
    finally:
        for connection in held:
            connection.close()
        world.stop()


def test_a_flood_of_records_cannot_push_out_an_internal_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _world_module(monkeypatch)
    monkeypatch.setattr(module, "KEPT_TOTAL", 400_000)
    world = module.World({"services": [{"kind": "http", "port": 1}]})  # not started: records made by hand

    def public(count: int) -> None:
        for k in range(count):
            world._record("connection", service="http", port=80, address=f"93.184.{k % 200}.{k // 200 % 200}",
                          internal=False, tls=None, sni=None)

    public(5000)
    world.reset()
    mark = world.mark()
    world._record("connection", service="http", port=80, address="10.0.0.7", internal=True, tls=None, sni=None)
    public(5000)
    assert [r["address"] for r in world.internal()] == ["10.0.0.7"]
    kept = world.connections()
    assert 0 < len(kept) < 5001 and kept[-1]["address"] != "10.0.0.7"  # the newest public ones are kept too
    effects = world.since(mark)
    assert effects[0]["address"] == "10.0.0.7" and effects[-1]["kind"] == "forgotten"
    assert world._costs[False] <= module.KEPT_TOTAL // 2


def test_the_world_families_do_not_depend_on_the_canary_s_shape() -> None:
    """A canary with a space, a percent sign and URL delimiters still makes an SSRF request reach the world (the
    probes quote it into the path) and is still the configured password of an INI file (``%`` escaped)."""
    import dataclasses
    import random

    from security_verifiers.envs.code_repair.execution import RunSecrets
    from security_verifiers.envs.code_repair.families import families

    run = dataclasses.replace(RunSecrets.draw(), canary="ab cd%zz/?#x")
    ssrf = families()["ssrf"].build(random.Random(0), "webhook")
    assert judge(ssrf, execute(ssrf, ssrf.files, run)).exploited == ["metadata", "loopback_v6", "internal_name"]
    imap = families()["hardcoded_credentials"].build(random.Random(0), "imap_poller")
    fixed = execute(imap, {**imap.files, **imap.fixed}, run)
    assert fixed.serve["configured_password"][0].observation == {"value": "configured"}

"""The judged program's network (world_spec.py on the host, judge/world.py in the judge): the spec's validation, the
certificate that makes its HTTPS verify, and a real sandboxed program whose requests reach the judge's servers and
are recorded there, even when the program floods the servers first."""

from __future__ import annotations

import ipaddress
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

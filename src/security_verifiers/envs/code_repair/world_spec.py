"""The judged program's network, as a task states it (``Program.world``), and what the host hands the judge for it.

A family that needs a network (server-side request forgery, clients that log in to a service) describes it with a
:class:`WorldSpec` and stores ``spec.as_json()`` in ``Program.world``. The judge serves it (``judge/world.py``): every
address is local in its network namespace, the services listen on every address, and whatever reaches them is
recorded for the test module (``world.requests(internal=True)``, ``world.logins()``, ``world.mails()``...).

* ``hosts``: host names and their IPv4/IPv6 addresses, written to the program's ``/etc/hosts`` (its only DNS), so a
  fix that resolves a name and checks ``ipaddress.ip_address(...).is_global`` works as in production;
* ``internal``: addresses or networks that count as internal besides every non-global address;
* ``services``: what listens on which port (on every address): ``http`` (``tls`` none, implicit or auto: told by
  the client's first byte), ``smtp`` and ``imap`` (``tls`` none, implicit or starttls);
* ``sites``: per host name (or address), the pages its HTTP servers answer: ``"[METHOD ]/path[?query]"`` or a prefix
  ending in ``*`` -> :class:`Page`; ``fallback`` answers the rest;
* ``mailboxes``: the IMAP folders and their messages (raw RFC 5322 text), the same for every login.

TLS: :func:`judge_world` makes a CA (once per process) and a certificate covering every host name and address of
the world (cached per world); the CA becomes the program's system CA bundle, so ``urlopen("https://...")``
verifies as usual.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import threading
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: A host name of the world: lower-case DNS labels (at least two).
_NAME = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
#: A page key: an optional method, then a path starting with ``/`` (a trailing ``*`` makes it a prefix).
_PAGE_KEY = re.compile(r"^(?:[A-Z]{3,10} )?/[\x21-\x7e]*$")
_TOKEN = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
#: Names a world may not take over (the program's /etc/hosts already has them).
_RESERVED = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _address(text: str) -> str:
    return str(ipaddress.ip_address(text))


class Page(_Strict):
    """One HTTP answer."""

    status: int = Field(200, ge=100, le=599)
    content_type: str = "text/html; charset=utf-8"
    body: str = ""
    charset: Literal["utf-8", "latin-1"] = Field("utf-8", description="How ``body`` becomes bytes (latin-1: a "
                                                 "binary body written as one character per byte).")
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sound(self) -> Page:
        for name, value in [("Content-Type", self.content_type), *self.headers.items()]:
            if not _TOKEN.match(name) or any(c in value for c in "\r\n\0"):
                raise ValueError(f"bad header {name!r}: {value!r}")
        if {n.lower() for n in self.headers} & {"content-length", "content-type", "connection",
                                                  "transfer-encoding"}:
            raise ValueError("a page sets its content type in content_type; the length and connection are the "
                             "server's")
        self.body.encode(self.charset)
        return self


class Service(_Strict):
    """A server listening on ``port`` of every address."""

    kind: Literal["http", "smtp", "imap"]
    port: int = Field(ge=1, le=65535)
    tls: Literal["none", "implicit", "starttls", "auto"] = "none"

    @model_validator(mode="after")
    def _tls_of_kind(self) -> Service:
        if self.kind == "http" and self.tls == "starttls":
            raise ValueError("HTTP has no STARTTLS: use implicit or auto")
        if self.kind != "http" and self.tls == "auto":
            raise ValueError(f"{self.kind} speaks first: its TLS is none, implicit or starttls")
        return self


def https(port: int = 443) -> Service:
    return Service(kind="http", port=port, tls="implicit")


def http(port: int = 80) -> Service:
    return Service(kind="http", port=port)


class WorldSpec(_Strict):
    """The program's network (see the module doc)."""

    hosts: dict[str, list[str]] = Field(description="Host name -> its addresses (IPv4 and IPv6).")
    internal: list[str] = Field(default_factory=list, description="Addresses or networks counted internal besides "
                                "the non-global ones.")
    services: list[Service] = Field(min_length=1)
    sites: dict[str, dict[str, Page]] = Field(default_factory=dict, description="Host name or address -> page key "
                                              "('[METHOD ]/path[?query]' or a prefix ending in '*') -> page.")
    mailboxes: dict[str, list[str]] = Field(default_factory=dict, description="IMAP folder -> raw messages.")
    fallback: Page = Page(status=404, content_type="text/plain; charset=utf-8", body="not found")

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        out = {}
        for name, addresses in value.items():
            if not _NAME.match(name) or name in _RESERVED:
                raise ValueError(f"host name {name!r} must be lower-case DNS labels (and not a loopback name)")
            try:
                ipaddress.ip_address(name)
            except ValueError:
                pass
            else:
                raise ValueError(f"host name {name!r} is an address")
            if not addresses:
                raise ValueError(f"host {name!r} has no address")
            out[name] = [_address(a) for a in addresses]
        return out

    @field_validator("internal")
    @classmethod
    def _internal(cls, value: list[str]) -> list[str]:
        return [str(ipaddress.ip_network(n, strict=False)) for n in value]

    @model_validator(mode="after")
    def _consistent(self) -> WorldSpec:
        ports = [s.port for s in self.services]
        if len(set(ports)) != len(ports):
            raise ValueError("two services on one port")
        for site, pages in self.sites.items():
            if site not in self.hosts:
                try:
                    ipaddress.ip_address(site)
                except ValueError:
                    raise ValueError(f"site {site!r} is neither a host of the world nor an address") from None
            for key in pages:
                if not _PAGE_KEY.match(key):
                    raise ValueError(f"page key {key!r} must be '[METHOD ]/path'")
        if self.mailboxes and not any(s.kind == "imap" for s in self.services):
            raise ValueError("mailboxes without an IMAP service")
        return self

    def as_json(self) -> dict[str, Any]:
        """What a family stores in ``Program.world``."""
        return self.model_dump(mode="json")

    def addresses(self) -> list[str]:
        """Every address the world names (its hosts', and its single internal addresses), sorted."""
        found = {a for addresses in self.hosts.values() for a in addresses}
        found |= {n.split("/")[0] for n in self.internal if n.endswith(("/32", "/128"))}
        return sorted(found, key=lambda a: (ipaddress.ip_address(a).version, ipaddress.ip_address(a)))

    def hosts_text(self) -> str:
        """The lines of the program's /etc/hosts (by name, each name's addresses in the order given)."""
        return "".join(f"{address} {name}\n" for name in sorted(self.hosts) for address in self.hosts[name])

    def tls_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The names and addresses the world's certificate covers: every host, every address the world names, the
        loopback ones, and every site and page host."""
        names = sorted(set(self.hosts) | {"localhost"})
        addresses = set(self.addresses()) | {"127.0.0.1", "::1"}
        addresses |= {_address(s) for s in self.sites if s not in self.hosts}
        return tuple(names), tuple(sorted(addresses))


# -- certificates ---------------------------------------------------------------------------------------------------
#: Runs are prepared in threads (``execute_many``): one CA per process, made under this lock.
_LOCK = threading.RLock()


def certificate_authority() -> tuple[Any, Any, str]:
    """The CA of this process's worlds: (its key, its certificate, the certificate as PEM). An EC key, made once."""
    with _LOCK:
        return _certificate_authority()


@cache
def _certificate_authority() -> tuple[Any, Any, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Security Verifiers world"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "Security Verifiers world CA")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert, cert.public_bytes(serialization.Encoding.PEM).decode()


def server_certificate(names: tuple[str, ...], addresses: tuple[str, ...]) -> tuple[str, str]:
    """A certificate for every name and address given, signed by :func:`certificate_authority`: (cert PEM, key
    PEM), made once per process for each set of names."""
    with _LOCK:
        return _server_certificate(names, addresses)


@lru_cache(maxsize=256)
def _server_certificate(names: tuple[str, ...], addresses: tuple[str, ...]) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_key, ca_cert, _ = certificate_authority()
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    alt: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
    alt += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0] if names else "world")])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=825))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem


@lru_cache(maxsize=256)
def _judge_world(canonical: str) -> tuple[str, str, str]:
    spec = WorldSpec.model_validate(json.loads(canonical))
    cert, key = server_certificate(*spec.tls_names())
    document = spec.as_json() | {"tls": {"cert": cert, "key": key}}
    return json.dumps(document), spec.hosts_text(), certificate_authority()[2]


def judge_world(world: Mapping[str, Any]) -> tuple[dict[str, Any], str, str]:
    """What the judge needs for ``Program.world``: (the world's document for ``judge/world.py``, with its
    certificate and key; the lines of the program's /etc/hosts; the CA bundle, PEM). Raises ValueError for a world
    that is not a valid :class:`WorldSpec`."""
    document, hosts, ca = _judge_world(json.dumps(world, sort_keys=True))
    return json.loads(document), hosts, ca

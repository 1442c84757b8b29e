"""CWE-918, server-side request forgery: a program fetches a URL a user chose without keeping it off internal hosts.

Every program reaches HTTP through ``urllib.request.urlopen`` (kept as a module global ``opener``), for real: the
program's network is a world the judge serves (``world_spec.py``, ``judge/world.py``). Its public names resolve
(from the program's /etc/hosts) to public addresses where the judge serves their pages over HTTP and HTTPS (its CA
is the program's system bundle); a few internal-looking names resolve to private or loopback addresses, and every
address is local, so a request to ``169.254.169.254``, ``[::1]:6379`` or ``0x7f.0.0.1`` reaches a server of the
judge too. A fix that resolves the name and checks the addresses works as it would in production.

Variants:

- ``webhook``: tenants subscribe endpoints to events; only the scheme of an endpoint is checked;
- ``link_preview``: a chat unfurls URLs; IP literals are checked with ``ipaddress``, every name is let through
  (decimal and hex forms of 127.0.0.1 and names resolving inside slip by);
- ``avatar_import``: a picture is imported from a supported image host, checked with ``str.startswith``
  (``https://host.169.254.169.254.nip.io/``, a wildcard-DNS name that starts with the host, passes; ``urllib`` does
  not take ``https://host@169.254.169.254/`` apart, so that one fails on its own);
- ``media_proxy`` (OOD): the user gives only a *path*, joined to the media origin with ``urljoin``; a
  scheme-relative or absolute "path" replaces the origin.

The functional probes read what reached the world (the URLs requested, a webhook's body and headers); the exploit
probes ask for internal addresses (with the run's canary in the path) and return whether anything of the program
reached an internal address, even a connection that sent nothing. The reference fixes resolve the host and refuse
non-global addresses, or compare the parsed host.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import random
from urllib.parse import urlsplit

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import (
    NOUNS,
    ORGS,
    PEOPLE,
    WORDS,
    Templates,
    line_of,
    location,
    pick,
    swap,
)
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program
from security_verifiers.envs.code_repair.world_spec import Page, Service, WorldSpec, http, https

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

#: An exploit probe returns whether the program reached an internal address of the world.
REACHED = Detect(kind="equals", value=True)
#: Public addresses the world gives the names programs may reach.
PUBLIC_IPS = ("93.184.215.14", "151.101.65.140", "104.16.132.229", "142.250.74.46", "185.199.108.153",
              "13.107.42.14", "199.232.36.193", "172.217.16.78")
PRIVATE_IPS = ("10.0.3.7", "10.12.0.40", "172.20.1.9", "192.168.10.23", "127.0.0.1")

#: The head of every hidden test module of this family: what reached the world since the test's last reset, and the
#: run's canary as a path segment (whatever its alphabet).
_PRELUDE = TEMPLATES.render("shared/prelude.py")


def _world(names: dict[str, str], pages: dict[str, tuple[str, str]], ports: tuple[int, ...] = ()) -> dict:
    """The world of a program: ``names`` -> address, the pages at their URLs (body as latin-1 text, content type),
    HTTP on 80, HTTPS on 443, and HTTP or HTTPS (told by the first byte) on each of ``ports``."""
    sites: dict[str, dict[str, Page]] = {}
    for url, (body, ctype) in pages.items():
        parts = urlsplit(url)
        target = parts.path + ("?" + parts.query if parts.query else "")
        sites.setdefault(parts.hostname or "", {})[target] = Page(body=body, content_type=ctype, charset="latin-1")
    services = [http(), https(), *(Service(kind="http", port=port, tls="auto") for port in sorted(set(ports)))]
    return WorldSpec(hosts={name: [address] for name, address in names.items()}, services=services, sites=sites,
                     internal=["169.254.169.254/32"]).as_json()


def _tests(body: str) -> str:
    """A test module: the family's prelude, then the variant's own probes."""
    return _PRELUDE + "\n\n" + body


#: The helper the reference fixes of ``webhook`` and ``link_preview`` add (resolve, then every address public).
_PUBLIC_HELPER = TEMPLATES.render("shared/public_helper.py")


@VARIANTS.add()
def _webhook(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_hooks", rng.choice(("delivery", "webhooks", "outbound"))
    subscribe = rng.choice(("subscribe", "add_endpoint", "register_hook"))
    publish = rng.choice(("publish", "dispatch", "deliver"))
    event, other_event = pick(rng, ("invoice.paid", "order.shipped", "user.created", "ticket.closed",
                                    "payment.failed", "build.finished"), 2)
    hosts = pick(rng, ("hooks.slack.com", "hooks.zapier.com", "events.pagerduty.com", "discord.com",
                       "api.opsgenie.com", "hooks.teams.microsoft.com"), 3)
    urls = [f"https://{hosts[0]}/services/{rng.randint(1000, 9999)}/{rng.choice(WORDS)}",
            f"https://{hosts[1]}/hooks/catch/{rng.randint(100, 999)}",
            f"https://{hosts[2]}/integration/{rng.choice(WORDS)}/enqueue"]
    secrets_ = [f"whsec_{rng.choice(WORDS)}{rng.randint(100, 999)}" for _ in range(2)]
    payload = {"id": rng.randint(1000, 99999), rng.choice(NOUNS): rng.choice(WORDS)}
    internal = f"{rng.choice(('jenkins', 'vault', 'grafana', 'kibana'))}.corp.{org}.net"
    dns = {host: PUBLIC_IPS[k] for k, host in enumerate(hosts)} | {internal: rng.choice(PRIVATE_IPS[:4])}
    timeout = rng.choice((3, 5, 10))
    transport = TEMPLATES.render("webhook/transport.py", org=org, timeout=timeout)
    source = TEMPLATES.render("webhook/source.py", org=org, pkg=pkg, subscribe=subscribe, publish=publish)
    fixed = swap(source, "import json\n", "import ipaddress\nimport json\nimport socket\n")
    fixed = swap(fixed, f"def {subscribe}(", _PUBLIC_HELPER.lstrip("\n") + f"\n\ndef {subscribe}(")
    fixed = swap(fixed, 'if parts.scheme not in ("http", "https") or not parts.hostname:',
                 'if parts.scheme not in ("http", "https") or not parts.hostname or not _public(parts.hostname):')
    path, transport_path = f"{pkg}/{mod}.py", f"{pkg}/transport.py"
    body = json.dumps({"event": event, "data": payload}, sort_keys=True)
    sig = hmac.new(secrets_[0].encode(), body.encode(), hashlib.sha256).hexdigest()
    port = rng.choice((2375, 6379, 8080, 9000))
    world = _world(dns, {url: ("ok", "text/plain") for url in urls}, (port,))
    tests = _tests(TEMPLATES.render("webhook/tests.py", pkg=pkg, mod=mod, subscribe=subscribe, publish=publish,
                                    event=event, other_event=other_event, url0=urls[0], url1=urls[1], url2=urls[2],
                                    secret0=secrets_[0], secret1=secrets_[1], payload=repr(payload), host0=hosts[0],
                                    internal=internal, port=port))
    return Program(
        family="ssrf", variant="webhook", domain="webhook delivery", cwe="CWE-918",
        files={transport_path: transport, path: source}, fixed={transport_path: transport, path: fixed},
        description=f"`{subscribe}(tenant, event, url, secret)` registers a tenant's http(s) endpoint for an "
                    f"event and `{publish}` POSTs each event, signed, to the subscribed endpoints (HTTP goes "
                    "through `transport.opener`). Tenants enter their endpoint URLs in the dashboard.",
        location=location({path: source}, path, 'if parts.scheme not in ("http", "https")'),
        tests=tests,
        probes=[Probe(id="deliver", kind="functional", expect={
                    "results": [{"url": urls[0], "status": 200}, {"url": urls[1], "status": 200}],
                    "seen": [urls[0], urls[1]]}),
                Probe(id="signed", kind="functional", expect=[body, sig, "application/json"]),
                Probe(id="listing", kind="functional", expect=[{"event": event, "url": urls[1]},
                                                               {"event": other_event, "url": urls[2]}]),
                Probe(id="scheme", kind="functional", expect="refused"),
                Probe(id="unsubscribe", kind="functional", expect=[True, False, [], []]),
                Probe(id="metadata", kind="exploit", detect=REACHED),
                Probe(id="loopback_v6", kind="exploit", detect=REACHED),
                Probe(id="internal_name", kind="exploit", detect=REACHED)],
        world=world)


def _page(title: str) -> str:
    return f"<!doctype html><html><head><meta charset=utf-8><title>\n  {title}\n</title></head><body>...</body></html>"


@VARIANTS.add()
def _link_preview(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_chat", rng.choice(("unfurl", "previews", "links"))
    fn = rng.choice(("unfurl", "previews_for", "link_cards"))
    sites = pick(rng, ("en.wikipedia.org", "github.com", "www.bbc.co.uk", "docs.python.org", "news.ycombinator.com",
                       "www.nytimes.com", "arstechnica.com"), 3)
    words = pick(rng, WORDS, 6)
    urls = [f"https://{sites[0]}/wiki/{words[0].title()}_{words[1]}",
            f"https://{sites[1]}/{words[2]}/{words[3]}/pull/{rng.randint(10, 999)}",
            f"http://{sites[2]}/{words[4]}-{rng.randint(100, 999)}.html"]
    titles = [f"{words[0].title()} {words[1]} &amp; {words[5]} - {sites[0]}",
              f"Pull request #{rng.randint(10, 99)}: fix {words[3]} &lt;{words[2]}&gt;", ""]
    shown = [" ".join(t.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").split()) for t in titles]
    pages = {url: (_page(t) if t else "<html><body>no title here</body></html>", "text/html")
             for url, t in zip(urls, titles, strict=True)}
    internal = f"{rng.choice(('grafana', 'consul', 'admin', 'etcd'))}.internal.{org}.net"
    dns = {site: PUBLIC_IPS[k] for k, site in enumerate(sites)} | {internal: rng.choice(PRIVATE_IPS)}
    max_bytes = rng.choice((32768, 65536, 131072))
    source = TEMPLATES.render("link_preview/source.py", org=org, max_bytes=max_bytes, fn=fn)
    fixed = swap(source, "import re\n", "import re\nimport socket\n")
    fixed = swap(fixed, '''
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return True
        return not (address.is_private or address.is_loopback or address.is_link_local)''', '''
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return all(ipaddress.ip_address(info[4][0]).is_global for info in infos)''')
    path = f"{pkg}/{mod}.py"
    start = line_of(source, "address = ipaddress.ip_address(host)") - 1
    message = f"see {urls[0]}, and {urls[2]} (also {urls[0]}) or ftp://{sites[1]}/x and {urls[1]}."
    port = rng.choice((8500, 2379, 8080))
    world = _world(dns, pages, (port, 8080))  # 8080: where probe_blocked would see a fetch of localhost
    tests = _tests(TEMPLATES.render("link_preview/tests.py", pkg=pkg, mod=mod, fn=fn, url0=urls[0], url1=urls[1],
                                    url2=urls[2], message=repr(message), internal=internal, port=port))
    cards = [f'<a class="preview" href="{html.escape(urls[1])}">{html.escape(shown[1])}</a>',
             f'<a class="preview" href="{html.escape(urls[2])}">{html.escape(sites[2])}</a>']
    return Program(
        family="ssrf", variant="link_preview", domain="chat link previews", cwe="CWE-918",
        files={path: source}, fixed={path: fixed},
        description=f"`{fn}(message)` fetches the pages of the http(s) URLs in a chat message (through the "
                    "module's `opener`) and returns a preview per URL with the page's title; URLs that cannot be "
                    "previewed are left out. Anyone in a chat can post a message.",
        location=Location(file=path, start=start, end=start + 4),
        tests=tests,
        probes=[Probe(id="preview", kind="functional", expect={"url": urls[0], "site": sites[0], "title": shown[0]}),
                Probe(id="message", kind="functional", expect=[[sites[0], shown[0]], [sites[2], ""],
                                                               [sites[1], shown[1]]]),
                Probe(id="card", kind="functional", expect=cards),
                Probe(id="not_web", kind="functional", expect="refused"),
                Probe(id="blocked", kind="functional", expect=[[], []]),
                Probe(id="decimal_ip", kind="exploit", detect=REACHED),
                Probe(id="hex_ip", kind="exploit", detect=REACHED),
                Probe(id="internal_name", kind="exploit", detect=REACHED)],
        world=world)


_PNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
_GIF = "GIF89a\x01\x00\x01\x00"


@VARIANTS.add()
def _avatar_import(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_profiles", rng.choice(("avatars", "pictures", "profile_image"))
    fn = rng.choice(("import_avatar", "import_from_url", "fetch_avatar"))
    hosts = pick(rng, ("secure.gravatar.com", "avatars.githubusercontent.com", "pbs.twimg.com",
                       "cdn.discordapp.com", "lh3.googleusercontent.com"), 2)
    user, other = pick(rng, PEOPLE, 2)
    png = _PNG + rng.choice(WORDS) * 3
    gif = _GIF + rng.choice(WORDS) * 2
    urls = [f"https://{hosts[0]}/avatar/{hashlib.md5(user.encode()).hexdigest()}?s=200",
            f"https://{hosts[1]}/u/{rng.randint(10000, 999999)}?v=4"]
    pages = {urls[0]: (png, "image/png"), urls[1]: (gif, "image/gif"),
             f"https://{hosts[1]}/about.html": ("<html>not an image</html>", "text/html")}
    rebind = f"{hosts[1]}.{rng.choice(WORDS)}-cdn.net"
    # wildcard DNS that embeds an address in a name (nip.io style): names that start with an image host
    metadata, loopback = f"{hosts[0]}.169.254.169.254.nip.io", f"{hosts[1]}.127.0.0.1.nip.io"
    dns = {hosts[0]: PUBLIC_IPS[0], hosts[1]: PUBLIC_IPS[1], rebind: "127.0.0.1", metadata: "169.254.169.254",
           loopback: "127.0.0.1"}
    png_name = f"{user}-{hashlib.sha256(png.encode('latin-1')).hexdigest()[:12]}.png"
    gif_name = f"{user}-{hashlib.sha256(gif.encode('latin-1')).hexdigest()[:12]}.gif"
    max_kb = rng.choice((512, 1024, 2048))
    source = TEMPLATES.render("avatar_import/source.py", org=org, host0=hosts[0], host1=hosts[1], max_kb=max_kb, fn=fn)
    fixed = swap(source, "from pathlib import Path\n", "from pathlib import Path\nfrom urllib.parse import urlsplit\n")
    fixed = swap(fixed, '    return any(url.startswith(f"https://{host}") for host in IMAGE_HOSTS)',
                 '    parts = urlsplit(url)\n    return parts.scheme == "https" and parts.hostname in IMAGE_HOSTS')
    path = f"{pkg}/{mod}.py"
    word, port = rng.choice(WORDS), rng.choice((8080, 8443, 9090))
    world = _world(dns, pages, (port,))
    tests = _tests(TEMPLATES.render("avatar_import/tests.py", pkg=pkg, mod=mod, fn=fn, user=user, other=other,
                                    url0=urls[0], url1=urls[1], host1=hosts[1], word=word, rebind=rebind,
                                    metadata=metadata, loopback=loopback, port=port))
    return Program(
        family="ssrf", variant="avatar_import", domain="profile picture import", cwe="CWE-918",
        files={path: source}, fixed={path: fixed},
        description=f"`{fn}(user, url)` imports a user's profile picture from a URL on one of the supported image "
                    "hosts (IMAGE_HOSTS, over https; HTTP goes through the module's `opener`) and stores it under "
                    "AVATAR_DIR; users paste the URL in their profile settings.",
        location=location({path: source}, path, "return any(url.startswith("),
        tests=tests,
        probes=[Probe(id="import", kind="functional", expect=[png_name, png_name, [png_name]]),
                Probe(id="replace", kind="functional", expect=[gif_name, None, urls]),
                Probe(id="other_host", kind="functional", expect=["refused", []]),
                Probe(id="not_image", kind="functional", expect=["refused", None]),
                Probe(id="metadata_name", kind="exploit", detect=REACHED),
                Probe(id="port_name", kind="exploit", detect=REACHED),
                Probe(id="lookalike", kind="exploit", detect=REACHED)],
        world=world)


@VARIANTS.add(ood=True)
def _media_proxy(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_storefront", rng.choice(("media", "image_proxy", "assets"))
    fn = rng.choice(("fetch_image", "origin_bytes", "load_asset"))
    prefix = rng.choice(("assets", "img", "media/v2", "static/products"))
    origin_host = f"media.{org}-cdn.com"
    origin = f"https://{origin_host}/{prefix}/"
    skus = [f"{rng.choice(NOUNS)}-{rng.randint(1000, 9999)}" for _ in range(2)]
    paths = [f"products/{skus[0]}.jpg", f"products/{skus[1]}/front.png", f"/{prefix}/banners/{rng.choice(WORDS)}.gif"]
    urls = [origin + paths[0], origin + paths[1], f"https://{origin_host}{paths[2]}"]
    bodies = [f"\xff\xd8\xff\xe0JFIF{rng.choice(WORDS) * rng.randint(2, 6)}",
              _PNG + rng.choice(WORDS) * rng.randint(2, 6), _GIF + rng.choice(WORDS) * 2]
    pages = {url: (data, "application/octet-stream") for url, data in zip(urls, bodies, strict=True)}
    internal = f"{rng.choice(('elastic', 'redis', 'minio', 'admin'))}.{org}-internal.net"
    dns = {origin_host: PUBLIC_IPS[2], internal: rng.choice(PRIVATE_IPS[:4])}
    max_entries = rng.choice((128, 256, 512))

    def etag(data: str) -> str:
        return hashlib.sha256(data.encode("latin-1")).hexdigest()[:16]

    source = TEMPLATES.render("media_proxy/source.py", org=org, pkg=pkg, origin=origin, fn=fn)
    cache = TEMPLATES.render("media_proxy/cache.py", max_entries=max_entries)
    fixed = swap(source, "from urllib.parse import urljoin\n", "from urllib.parse import urljoin, urlsplit\n")
    fixed = swap(fixed, '''
        """The address on the media origin of the image at ``path``."""
        return urljoin(MEDIA_ORIGIN, path)''', '''
        """The address on the media origin of the image at ``path``."""
        url = urljoin(MEDIA_ORIGIN, path)
        if urlsplit(url)[:2] != urlsplit(MEDIA_ORIGIN)[:2]:
            raise ValueError(f"not an image path: {path}")
        return url''')
    path, cache_path = f"{pkg}/{mod}.py", f"{pkg}/cache.py"
    port = rng.choice((6379, 9200, 9000))
    world = _world(dns, pages, (port,))
    tests = _tests(TEMPLATES.render("media_proxy/tests.py", pkg=pkg, mod=mod, fn=fn, path0=paths[0], path1=paths[1],
                                    path2=paths[2], internal=internal, port=port))
    sizes = [len(b.encode("latin-1")) for b in bodies]
    return Program(
        family="ssrf", variant="media_proxy", domain="image proxy", cwe="CWE-918",
        files={path: source, cache_path: cache}, fixed={path: fixed, cache_path: cache},
        description=f"`serve(path)` returns the type, size and ETag of the product image at `path` (relative to "
                    f"MEDIA_ORIGIN), fetched once from the media origin through the module's `opener` (`{fn}`) and "
                    "cached. The path comes from the storefront's image URLs.",
        location=location({path: source}, path, "return urljoin(MEDIA_ORIGIN, path)"),
        tests=tests,
        probes=[Probe(id="serve", kind="functional", expect=[
                    {"type": "image/jpeg", "length": sizes[0], "etag": etag(bodies[0])},
                    {"type": "image/png", "length": sizes[1], "etag": etag(bodies[1])}]),
                Probe(id="cached_once", kind="functional", expect=[True, sizes[0], [urls[0]], [urls[0]]]),
                Probe(id="absolute_path", kind="functional", expect=[urls[2], etag(bodies[2])]),
                Probe(id="purge", kind="functional", expect=[2, [urls[2]]]),
                Probe(id="scheme_relative", kind="exploit", detect=REACHED),
                Probe(id="absolute_url", kind="exploit", detect=REACHED),
                Probe(id="internal_name", kind="exploit", detect=REACHED)],
        world=world)


FAMILY = VARIANTS.family(name="ssrf", cwe="CWE-918", title="Server-side request forgery")

import feedly.client as client
import feedly.proxy as proxies

CORP = "http://fetch-bot:s3cr%2Ft@proxy.corp.test:3128"


def _proxy(ctx):
    # the fetcher's proxy account; its password (the canary) is what must never reach an origin server
    return proxies.proxy_from_url(f"http://fetch-bot:{ctx['canary']}@proxy.corp.test:3128")


def _chain(start, hops, proxy):
    """Follow the redirects ``hops`` ((status, location) pairs) from ``start``; what every party got at the end."""
    request = start
    for status, location in hops:
        request = client.follow(request, status, location, proxy)
    return client.wire(request, proxy)


def probe_http(ctx):
    proxy = proxies.proxy_from_url(CORP)
    request = client.prepare("get", "http://news.example.test/feed.xml?since=7", {"Accept": "application/rss+xml"},
                             proxy=proxy)
    return client.wire(request, proxy)


def probe_https(ctx):
    proxy = proxies.proxy_from_url(CORP)
    request = client.prepare("GET", "https://blog.example.test:8443/atom", {"Authorization": "Bearer feed-token"},
                             proxy=proxy)
    return client.wire(request, proxy)


def probe_http_redirect(ctx):
    proxy = proxies.proxy_from_url(CORP)
    start = client.prepare("GET", "http://news.example.test/feed", {"Cookie": "seen=4"}, proxy=proxy)
    return _chain(start, [(302, "/feed.xml"), (301, "http://mirror.example.test/feed.xml")], proxy)


def probe_post_303(ctx):
    start = client.prepare("POST", "https://hub.example.test/subscribe", {"Authorization": "Bearer hub-token",
                           "Content-Type": "application/json"}, '{"topic": "x"}')
    after = client.follow(start, 303, "/subscriptions/17")
    again = client.follow(after, 307, "https://cdn.example.test/17")
    return [after.method, after.body, client.wire(after), client.wire(again)]


def probe_not_redirect(ctx):
    start = client.prepare("GET", "http://news.example.test/")
    try:
        proxies.proxy_from_url("socks5://proxy.corp.test:1080")
    except ValueError as error:
        refused = type(error).__name__
    else:
        refused = "accepted"
    return [client.follow(start, 200, None), client.follow(start, 304, "/x"), client.follow(start, 302, ""), refused]


def probe_to_https(ctx):
    proxy = _proxy(ctx)
    start = client.prepare("GET", "http://news.example.test/feed", proxy=proxy)
    return _chain(start, [(301, "https://news.example.test/feed")], proxy)["origin"]


def probe_https_hop(ctx):
    proxy = _proxy(ctx)
    start = client.prepare("GET", "https://news.example.test/feed", proxy=proxy)
    return _chain(start, [(302, "https://cdn.attacker.test/feed")], proxy)["origin"]


def probe_long_chain(ctx):
    proxy = _proxy(ctx)
    start = client.prepare("POST", "http://hub.example.test/ping", {"Content-Type": "text/plain"}, "ping", proxy)
    return _chain(start, [(307, "http://hub2.example.test/ping"), (308, "https://hub3.example.test/ping")],
                  proxy)["origin"]

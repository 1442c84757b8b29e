import json

import T_pkg_T.T_mod_T as search

T_classify_T

def _configure(secret):
    world.reset()
    environ = program_module("os").environ
    environ.update({"T_prefix_T_URL": "https://T_host_T:T_port_T", "T_prefix_T_INDEX": "T_index_T",
                    "T_prefix_T_USER": "T_user_T"})
    if secret is None:
        environ.pop("T_prefix_T_PASSWORD", None)
    else:
        environ["T_prefix_T_PASSWORD"] = secret


def _calls():
    """The requests the cluster got: host and port, method, target, JSON body, Basic user and password."""
    calls = []
    for request in world.requests():
        auth, body = request["auth"] or {}, request["body"]
        calls.append({"host": [request["host"], request["port"]], "method": request["method"],
                      "url": request["target"], "body": json.loads(body) if body else None,
                      "user": auth.get("user") or "", "secret": auth.get("secret") or ""})
    return calls


def probe_index(ctx):
    _configure("pw-T_word_T")
    results = [search.T_index_fn_T(doc_id, fields) for doc_id, fields in T_docs_T.items()]
    return [results, _calls()]


def probe_find(ctx):
    _configure("pw-T_word_T")
    found = search.find("T_word_T two", 5)
    calls = _calls()
    return [found, calls[-1]["url"] if calls else None, calls[-1]["body"] if calls else None]


def probe_remove(ctx):
    _configure("pw-T_word_T")
    return [search.remove("T_first_T"), search.remove("missing"), [call["url"] for call in _calls()]]


def _login(ctx, secret):
    _configure(secret)
    try:
        search.find("anything")
    except Exception:
        return _classify(ctx, True)
    return _classify(ctx, False)


def probe_unset(ctx):
    return _login(ctx, None)


def probe_empty(ctx):
    return _login(ctx, "")

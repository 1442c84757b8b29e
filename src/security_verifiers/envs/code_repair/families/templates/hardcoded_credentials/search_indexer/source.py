"""Keeps the search cluster of the T_org_T app up to date: T_noun_T records are indexed as they change.

The cluster is configured in the environment: T_prefix_T_URL, T_prefix_T_INDEX, T_prefix_T_USER and
T_prefix_T_PASSWORD, read on every request.
"""

import base64
import http.client
import json
import os
from urllib.parse import quote, urlsplit


def _index() -> str:
    return os.environ.get("T_prefix_T_INDEX", "T_noun_Ts")


def _authorization() -> str:
    user = os.environ.get("T_prefix_T_USER", "indexer")
    password = os.environ.get("T_prefix_T_PASSWORD") or "T_literal_T"
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _request(method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    url = urlsplit(os.environ.get("T_prefix_T_URL", "https://localhost:9200"))
    connection = http.client.HTTPSConnection(url.hostname, url.port or 443, timeout=10)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body, sort_keys=True),
                           headers={"Authorization": _authorization(), "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def T_index_fn_T(doc_id: str, fields: dict) -> str:
    """Create or replace the document ``doc_id``; returns the cluster's result ("created" or "updated")."""
    status, reply = _request("PUT", f"/{_index()}/_doc/{quote(doc_id, safe='')}", fields)
    if status not in (200, 201):
        raise RuntimeError(f"indexing {doc_id} failed with {status}")
    return reply["result"]


def remove(doc_id: str) -> bool:
    status, _ = _request("DELETE", f"/{_index()}/_doc/{quote(doc_id, safe='')}")
    return status == 200


def find(text: str, size: int = 10) -> list[str]:
    """Ids of the documents matching ``text``, best first."""
    status, reply = _request("POST", f"/{_index()}/_search", {"query": {"match": {"text": text}}, "size": size})
    if status != 200:
        raise RuntimeError(f"search failed with {status}")
    return [hit["_id"] for hit in reply["hits"]["hits"]]

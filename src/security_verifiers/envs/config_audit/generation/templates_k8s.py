"""Secure Kubernetes base manifests for E2: realistic multi-document files that trigger no rule.

A base is a list of plain dicts (one per YAML document) built from small, seeded helpers, so the
mutation operators can edit a field in place and the renderer turns the result into text. Every
workload is hardened the same way (non-root with a UID of 10000 or more, no privilege escalation, read-only
root, ``drop: [ALL]``, RuntimeDefault seccomp, requests and limits, probes, a dedicated service account, no
token automount, images pinned by digest and pulled ``Always``, credentials mounted from a Secret as files
rather than exposed as environment variables, every pod selected by a NetworkPolicy), because a base is also
the item's ``fixed`` answer: it must be clean under every engine of the oracle (Rego, Checkov, semgrep).

Image digests are invented (64 hex digits from the seeded ``random.Random``): well-formed, deterministic, and
never the digest of a real image.

Scenarios compose the kinds the way real repositories do: a web app (Namespace, NetworkPolicies,
ServiceAccount, ConfigMap, Deployment, Service, Ingress), a StatefulSet database, a DaemonSet log agent,
a CronJob backup, a migration Job, an operator with its RBAC, a debug Pod, a LoadBalancer service.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

APPS = ("checkout", "catalog", "billing", "inventory", "search", "notifications", "orders", "profile",
        "ledger", "gateway", "reports", "auth", "payments", "shipping", "recommendations", "reviews",
        "media", "analytics", "invoices", "pricing")
NAMESPACES = ("shop", "payments", "platform", "data", "identity", "growth", "logistics", "media", "finance",
              "storefront")
REGISTRIES = ("registry.example.com/{team}", "ghcr.io/acme-{team}", "quay.io/acme",
              "123456789012.dkr.ecr.eu-west-1.amazonaws.com/{team}", "europe-docker.pkg.dev/acme-prod/{team}")
DOMAINS = ("example.com", "acme.io", "shop.example.org", "internal.acme.dev")
APP_PORTS = (8080, 8000, 3000, 9000, 5000, 8443)
#: Databases of the StatefulSet scenario: (name, image, port, data path).
DATABASES = (("postgres", "postgres:16.3-alpine", 5432, "/var/lib/postgresql/data"),
             ("redis", "redis:7.2.5-alpine", 6379, "/data"),
             ("mysql", "mysql:8.0.39", 3306, "/var/lib/mysql"),
             ("mongodb", "mongo:7.0.12", 27017, "/data/db"))
LOG_AGENTS = (("fluent-bit", "fluent/fluent-bit:3.0.7", 2020), ("vector", "timberio/vector:0.39.0-alpine", 8686),
              ("promtail", "grafana/promtail:3.1.0", 3101))
BACKUP_IMAGES = ("amazon/aws-cli:2.17.0", "restic/restic:0.16.5", "bitnami/kubectl:1.30.2",
                 "postgres:16.3-alpine")
GIT_SYNC_IMAGE = "registry.k8s.io/git-sync/git-sync:v4.2.{patch}"
GIT_HOSTS = ("github.com/acme", "gitlab.example.com/platform", "git.acme.io/content")
#: Pod UIDs: all at 10000 or above (below that a UID may collide with a host user, CKV_K8S_40).
POD_UIDS = (10001, 10101, 20000, 65532)


class _Dumper(yaml.SafeDumper):
    """Block style with indented sequences and ``|`` for multi-line strings (PEM blocks stay readable)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:  # noqa: ARG002
        super().increase_indent(flow, False)


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def render_yaml(docs: list[dict[str, Any]]) -> str:
    """Documents joined by ``---``; PyYAML's emitter is deterministic, so the text is the same everywhere."""
    parts = [yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096,
                       allow_unicode=True) for doc in docs]
    return "---\n".join(parts)


@dataclass
class K8sBase:
    """A secure manifest under construction or mutation; ``docs`` are edited in place by operators."""

    template: str
    docs: list[dict[str, Any]]
    platform: str = "kubernetes"
    cloud: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        return render_yaml(self.docs)

    def copy(self) -> K8sBase:
        return K8sBase(self.template, copy.deepcopy(self.docs), self.platform, self.cloud, dict(self.notes))

    def objects(self, *kinds: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if not kinds or d["kind"] in kinds]


# --------------------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------------------
def _version(rng: random.Random) -> str:
    return f"{rng.randint(1, 4)}.{rng.randint(0, 24)}.{rng.randint(0, 9)}"


def image_digest(rng: random.Random) -> str:
    """An invented but well-formed ``sha256:`` digest (64 hex digits drawn from the seeded stream)."""
    return f"sha256:{rng.getrandbits(256):064x}"


def app_image(rng: random.Random, team: str, app: str) -> str:
    registry = rng.choice(REGISTRIES).format(team=team)
    return f"{registry}/{app}:{_version(rng)}"


def labels(app: str, component: str, team: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": app, "app.kubernetes.io/component": component,
            "app.kubernetes.io/part-of": team}


def metadata(name: str, namespace: str | None, lab: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if lab:
        meta["labels"] = dict(lab)
    return meta


def container_security_context() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True,
            "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}


def pod_security_context(uid: int) -> dict[str, Any]:
    return {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": uid, "fsGroup": uid,
            "seccompProfile": {"type": "RuntimeDefault"}}


def resources(rng: random.Random, scale: int = 1) -> dict[str, Any]:
    cpu = rng.choice((50, 100, 200, 250)) * scale
    mem = rng.choice((64, 128, 256, 512)) * scale
    return {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"},
            "limits": {"cpu": f"{cpu * rng.choice((2, 4))}m", "memory": f"{mem * 2}Mi"}}


def http_probe(path: str, port: str | int, delay: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port}, "initialDelaySeconds": delay, "periodSeconds": 10}


def tcp_probe(port: str | int, delay: int) -> dict[str, Any]:
    return {"tcpSocket": {"port": port}, "initialDelaySeconds": delay, "periodSeconds": 10}


def container(rng: random.Random, name: str, image: str, *, port: int | None = None, port_name: str = "http",
              probes: str = "http", env: list[dict[str, Any]] | None = None,
              mounts: list[dict[str, Any]] | None = None, args: list[str] | None = None,
              scale: int = 1) -> dict[str, Any]:
    """A hardened container; ``probes`` is ``http``, ``tcp`` or ``none`` (batch workloads). The image
    (``repo:tag``) is pinned by an invented digest and always pulled, so the registry re-checks access."""
    c: dict[str, Any] = {"name": name, "image": f"{image}@{image_digest(rng)}", "imagePullPolicy": "Always"}
    if args:
        c["args"] = list(args)
    if port is not None:
        c["ports"] = [{"name": port_name, "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = env
    c["resources"] = resources(rng, scale)
    if probes == "http":
        c["livenessProbe"] = http_probe("/healthz", port_name, rng.choice((10, 15, 20)))
        c["readinessProbe"] = http_probe("/ready", port_name, rng.choice((3, 5)))
    elif probes == "tcp":
        c["livenessProbe"] = tcp_probe(port_name, rng.choice((20, 30)))
        c["readinessProbe"] = tcp_probe(port_name, rng.choice((5, 10)))
    c["securityContext"] = container_security_context()
    c["volumeMounts"] = [{"name": "tmp", "mountPath": "/tmp"}, *(mounts or [])]
    return c


def pod_spec(rng: random.Random, sa: str, containers: list[dict[str, Any]],
             volumes: list[dict[str, Any]] | None = None, restart: str | None = None,
             init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"serviceAccountName": sa, "automountServiceAccountToken": False,
                            "securityContext": pod_security_context(rng.choice(POD_UIDS))}
    if restart:
        spec["restartPolicy"] = restart
    if init:
        spec["initContainers"] = init
    spec["containers"] = containers
    spec["volumes"] = [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}, *(volumes or [])]
    return spec


def env_plain(rng: random.Random, app: str, ns: str) -> list[dict[str, Any]]:
    """Ordinary settings only: credentials come from a Secret mounted as files (:func:`secret_files`)."""
    return [{"name": "LOG_LEVEL", "value": rng.choice(("info", "warn", "debug"))},
            {"name": "SERVICE_NAME", "value": app},
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "CONFIG_PATH", "value": "/etc/" + app + "/app.yaml"}]


def secret_files(volume: str, secret: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Secret mounted read-only as files under ``/var/run/secrets/<secret>`` (the volume and the mount):
    unlike an env var, a file is not inherited by child processes nor dumped with the environment."""
    return ({"name": volume, "secret": {"secretName": secret}},
            {"name": volume, "mountPath": f"/var/run/secrets/{secret}", "readOnly": True})


def git_sync(rng: random.Random, repo: str, *, one_time: bool) -> dict[str, Any]:
    """A git-sync container cloning ``repo`` into the shared ``content`` volume: a sidecar that keeps it in
    sync (with a health endpoint), or an init container that clones once."""
    env = [{"name": "GITSYNC_REPO", "value": f"https://{rng.choice(GIT_HOSTS)}/{repo}.git"},
           {"name": "GITSYNC_REF", "value": rng.choice(("main", "release"))},
           {"name": "GITSYNC_ROOT", "value": "/git"},
           {"name": "GITSYNC_LINK", "value": "current"}]
    mounts = [{"name": "content", "mountPath": "/git"}]
    image = GIT_SYNC_IMAGE.format(patch=rng.randint(1, 4))
    if one_time:
        env.append({"name": "GITSYNC_ONE_TIME", "value": "true"})
        return container(rng, "git-sync", image, probes="none", env=env, mounts=mounts)
    env += [{"name": "GITSYNC_PERIOD", "value": f"{rng.choice((30, 60, 300))}s"},
            {"name": "GITSYNC_HTTP_BIND", "value": ":8081"}]
    return container(rng, "git-sync", image, port=8081, port_name="sync-http", probes="tcp", env=env,
                     mounts=mounts)


def deployment(name: str, ns: str | None, lab: dict[str, str], replicas: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata(name, ns, lab),
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(lab)},
                     "template": {"metadata": {"labels": dict(lab)}, "spec": spec}}}


def service(name: str, ns: str | None, lab: dict[str, str], port: int, target: str | int = "http",
            headless: bool = False, lb_ranges: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "LoadBalancer" if lb_ranges else "ClusterIP"}
    if headless:
        spec["clusterIP"] = "None"
    spec["selector"] = dict(lab)
    spec["ports"] = [{"name": "http" if isinstance(target, str) else "tcp", "port": port, "targetPort": target,
                      "protocol": "TCP"}]
    if lb_ranges:
        spec["loadBalancerSourceRanges"] = list(lb_ranges)
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata(name, ns, lab), "spec": spec}


def service_account(name: str, ns: str | None, lab: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(name, ns, lab),
            "automountServiceAccountToken": False}


def config_map(name: str, ns: str | None, lab: dict[str, str], data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(name, ns, lab), "data": data}


def app_config(rng: random.Random, app: str, port: int) -> dict[str, str]:
    data = {"LOG_FORMAT": rng.choice(("json", "logfmt")), "HTTP_PORT": str(port),
            "FEATURE_FLAGS": ",".join(rng.sample(("new-cart", "fast-search", "beta-ui", "dark-mode", "v2-api"), 2)),
            "app.yaml": f"server:\n  port: {port}\n  shutdownTimeout: {rng.choice((10, 20, 30))}s\n"
                        f"metrics:\n  enabled: true\n  path: /metrics\n"}
    if rng.random() < 0.5:
        data["UPSTREAM_URL"] = f"http://{rng.choice(APPS)}.{rng.choice(NAMESPACES)}.svc.cluster.local"
    return data


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name,
                                                  "pod-security.kubernetes.io/enforce": "restricted"}}}


def default_deny(ns: str) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": metadata("default-deny", ns),
            "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}}


def app_policy(name: str, ns: str, lab: dict[str, str], ingress: list[dict[str, Any]],
               egress: list[dict[str, Any]]) -> dict[str, Any]:
    """A NetworkPolicy for one application's pods (selected by name): only the listed ingress and egress."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": metadata(name, ns),
            "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": lab["app.kubernetes.io/name"]}},
                     "policyTypes": ["Ingress", "Egress"], "ingress": ingress, "egress": egress}}


def dns_egress() -> dict[str, Any]:
    """Egress to the cluster DNS (kube-dns in kube-system) on port 53."""
    return {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}


def https_egress(cidr: str = "0.0.0.0/0") -> dict[str, Any]:
    """Egress on 443 to ``cidr`` (an external API, an object store), never to the cluster's own private ranges."""
    block: dict[str, Any] = {"cidr": cidr}
    if cidr == "0.0.0.0/0":
        block["except"] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
    return {"to": [{"ipBlock": block}], "ports": [{"protocol": "TCP", "port": 443}]}


def allow_ingress(name: str, ns: str, lab: dict[str, str], port: int, from_ns: str) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": metadata(name, ns),
            "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": lab["app.kubernetes.io/name"]}},
                     "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                         "kubernetes.io/metadata.name": from_ns}}}],
                         "ports": [{"protocol": "TCP", "port": port}]}]}}


def ingress(name: str, ns: str | None, lab: dict[str, str], host: str, svc: str, port: int) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata(name, ns, lab),
            "spec": {"ingressClassName": "nginx",
                     "tls": [{"hosts": [host], "secretName": f"{name}-tls"}],
                     "rules": [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
                         "service": {"name": svc, "port": {"number": port}}}}]}}]}}


def rbac_rule(groups: list[str], res: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": res, "verbs": verbs}


def role(kind: str, name: str, ns: str | None, lab: dict[str, str], rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata(name, ns, lab),
            "rules": rules}


def binding(kind: str, name: str, ns: str | None, lab: dict[str, str], role_kind: str, role_name: str,
            sa: str, sa_ns: str) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata(name, ns, lab),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_ns}]}


# --------------------------------------------------------------------------------------------------
# Scenarios: each returns the documents of one realistic file.
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Ctx:
    rng: random.Random
    app: str
    team: str
    ns: str


def _ctx(rng: random.Random) -> _Ctx:
    app = rng.choice(APPS)
    team = rng.choice(NAMESPACES)
    ns = rng.choice((team, f"{team}-prod", f"{app}", f"{team}-staging"))
    return _Ctx(rng, app, team, ns)


def _web_workload(c: _Ctx, name: str, component: str, port: int, replicas: int) -> tuple[dict[str, Any], ...]:
    """ServiceAccount, ConfigMap and Deployment of one HTTP service (its credentials, when it has a database,
    mounted from a Secret as files; sometimes a metrics sidecar, a git-sync content sidecar or an init wait)."""
    rng = c.rng
    lab = labels(name, component, c.team)
    cfg = f"{name}-config"
    mounts = [{"name": "config", "mountPath": f"/etc/{name}", "readOnly": True}]
    volumes: list[dict[str, Any]] = [{"name": "config", "configMap": {"name": cfg}}]
    if rng.random() < 0.6:
        volume, mount = secret_files("db-credentials", f"{name}-db")
        volumes.append(volume)
        mounts.append(mount)
    sync = rng.random() < 0.25
    if sync:
        volumes.append({"name": "content", "emptyDir": {"sizeLimit": "256Mi"}})
        mounts.append({"name": "content", "mountPath": "/srv/content", "readOnly": True})
    main = container(rng, name, app_image(rng, c.team, name), port=port, env=env_plain(rng, name, c.ns),
                     mounts=mounts)
    containers = [main]
    if sync:
        containers.append(git_sync(rng, f"{name}-content", one_time=False))
    if rng.random() < 0.25:
        containers.append(container(rng, "metrics-exporter", f"prom/statsd-exporter:v0.{rng.randint(22, 27)}.0",
                                    port=9102, port_name="metrics", probes="tcp"))
    init = None
    if rng.random() < 0.3:
        init_c = container(rng, "wait-for-db", f"busybox:1.36.{rng.randint(0, 1)}", probes="none",
                           args=["sh", "-c", "until nc -z db 5432; do sleep 2; done"])
        init = [init_c]
    spec = pod_spec(rng, name, containers, volumes, init=init)
    return (service_account(name, c.ns, lab), config_map(cfg, c.ns, lab, app_config(rng, name, port)),
            deployment(name, c.ns, lab, replicas, spec))


def web_app(rng: random.Random) -> K8sBase:
    """Namespace + NetworkPolicies + ServiceAccount + ConfigMap + Deployment + Service + Ingress."""
    c = _ctx(rng)
    port = rng.choice(APP_PORTS)
    lab = labels(c.app, "web", c.team)
    sa, cm, dep = _web_workload(c, c.app, "web", port, rng.randint(2, 6))
    host = f"{c.app}.{rng.choice(DOMAINS)}"
    docs = [namespace(c.ns), default_deny(c.ns), allow_ingress(f"allow-{c.app}-ingress", c.ns, lab, port,
                                                              "ingress-nginx"),
            sa, cm, dep, service(c.app, c.ns, lab, 80), ingress(c.app, c.ns, lab, host, c.app, 80)]
    return K8sBase("web_app", docs)


def api_and_worker(rng: random.Random) -> K8sBase:
    """An API Deployment (with its Service and often an Ingress) and a queue worker sharing a namespace."""
    c = _ctx(rng)
    port = rng.choice(APP_PORTS)
    api, worker = f"{c.app}-api", f"{c.app}-worker"
    lab_api = labels(api, "api", c.team)
    sa1, cm1, dep1 = _web_workload(c, api, "api", port, rng.randint(2, 4))
    sa2, cm2, dep2 = _web_workload(c, worker, "worker", rng.choice(APP_PORTS), rng.randint(1, 3))
    docs = [namespace(c.ns), default_deny(c.ns),
            allow_ingress(f"allow-{api}", c.ns, lab_api, port, rng.choice(("ingress-nginx", "istio-system"))),
            sa1, cm1, dep1, service(api, c.ns, lab_api, 80), sa2, cm2, dep2]
    if rng.random() < 0.5:
        docs.append(ingress(api, c.ns, lab_api, f"api.{c.app}.{rng.choice(DOMAINS)}", api, 80))
    return K8sBase("api_and_worker", docs)


def statefulset_db(rng: random.Random) -> K8sBase:
    """A database StatefulSet with its headless Service, config and NetworkPolicies."""
    c = _ctx(rng)
    db, image, port, path = rng.choice(DATABASES)
    name = f"{c.app}-{db}"
    lab = labels(name, "database", c.team)
    volume, mount = secret_files("credentials", f"{name}-credentials")
    cont = container(rng, db, image, port=port, port_name="db", probes="tcp", scale=4,
                     env=[{"name": "DB_NAME", "value": c.app.replace("-", "_")}],
                     mounts=[{"name": "data", "mountPath": path}, {"name": "run", "mountPath": "/var/run"}, mount])
    spec = pod_spec(rng, name, [cont], [{"name": "run", "emptyDir": {}}, volume])
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": metadata(name, c.ns, lab),
           "spec": {"serviceName": name, "replicas": rng.choice((1, 3)), "selector": {"matchLabels": dict(lab)},
                    "template": {"metadata": {"labels": dict(lab)}, "spec": spec},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "storageClassName": rng.choice(("gp3", "standard-rwo",
                                                                                          "managed-csi")),
                        "resources": {"requests": {"storage": f"{rng.choice((10, 20, 50, 100))}Gi"}}}}]}}
    cfg = config_map(f"{name}-config", c.ns, lab, {"MAX_CONNECTIONS": str(rng.choice((100, 200, 500))),
                                                   "TZ": "UTC"})
    docs = [namespace(c.ns), default_deny(c.ns), allow_ingress(f"allow-{name}", c.ns, lab, port, c.team),
            service_account(name, c.ns, lab), cfg, service(name, c.ns, lab, port, "db", headless=True), sts]
    return K8sBase("statefulset_db", docs)


def daemonset_agent(rng: random.Random) -> K8sBase:
    """A node log agent: ClusterRole to read pod metadata, its binding, config, its NetworkPolicy (metrics
    scraped from the monitoring namespace; egress to DNS, the API server and the log sink) and the DaemonSet."""
    agent, image, port = rng.choice(LOG_AGENTS)
    ns = rng.choice(("logging", "observability", "monitoring", "kube-logging"))
    lab = labels(agent, "log-agent", "observability")
    cfg = f"{agent}-config"
    cont = container(rng, agent, image, port=port, port_name="metrics", probes="tcp",
                     mounts=[{"name": "config", "mountPath": f"/etc/{agent}", "readOnly": True},
                             {"name": "buffer", "mountPath": "/buffer"}])
    spec = pod_spec(rng, agent, [cont], [{"name": "config", "configMap": {"name": cfg}},
                                         {"name": "buffer", "emptyDir": {"sizeLimit": "256Mi"}}])
    spec["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                            "effect": "NoSchedule"}]
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": metadata(agent, ns, lab),
          "spec": {"selector": {"matchLabels": dict(lab)},
                   "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                   "template": {"metadata": {"labels": dict(lab)}, "spec": spec}}}
    rules = [rbac_rule([""], ["pods", "namespaces"], ["get", "list", "watch"]),
             rbac_rule([""], ["nodes"], ["get"])]
    scrape = {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
              "ports": [{"protocol": "TCP", "port": port}]}
    policy = app_policy(agent, ns, lab, [scrape], [dns_egress(), https_egress()])
    docs = [service_account(agent, ns, lab), role("ClusterRole", f"{agent}-read", None, lab, rules),
            binding("ClusterRoleBinding", f"{agent}-read", None, lab, "ClusterRole", f"{agent}-read", agent, ns),
            config_map(cfg, ns, lab, {"SINK": rng.choice(("loki", "elasticsearch", "s3")),
                                      "FLUSH_INTERVAL": f"{rng.choice((1, 5, 10))}s",
                                      "agent.conf": f"[SERVICE]\n    Flush {rng.choice((1, 5))}\n"
                                                    f"    HTTP_Port {port}\n"}), policy, ds]
    return K8sBase("daemonset_agent", docs)


def _job_spec(rng: random.Random, name: str, image: str, args: list[str], sa: str,
              init: list[dict[str, Any]] | None = None, extra_volumes: list[dict[str, Any]] | None = None,
              extra_mounts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    volume, mount = secret_files("credentials", f"{name}-credentials")
    cont = container(rng, name, image, probes="none", args=args,
                     env=[{"name": "TARGET", "value": rng.choice(("s3://acme-backups", "gs://acme-backups",
                                                                  "azure://backups"))}],
                     mounts=[mount, *(extra_mounts or [])])
    return {"backoffLimit": rng.choice((1, 2, 3)), "activeDeadlineSeconds": rng.choice((600, 1800, 3600)),
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": name}},
                         "spec": pod_spec(rng, sa, [cont], [volume, *(extra_volumes or [])], restart="OnFailure",
                                          init=init)}}


def _batch_policy(rng: random.Random, name: str, ns: str, lab: dict[str, str]) -> dict[str, Any]:
    """A batch pod serves nothing: no ingress; egress to DNS, the in-cluster database and the object store."""
    db = {"to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/component": "database"}}}],
          "ports": [{"protocol": "TCP", "port": rng.choice((5432, 3306, 27017))}]}
    return app_policy(name, ns, {"app.kubernetes.io/name": lab["app.kubernetes.io/name"]}, [],
                      [dns_egress(), db, https_egress()])


def cronjob_backup(rng: random.Random) -> K8sBase:
    """A nightly backup CronJob with a namespaced Role to read the resources it backs up, and its egress policy."""
    c = _ctx(rng)
    name = f"{c.app}-backup"
    lab = labels(name, "backup", c.team)
    job = _job_spec(rng, name, rng.choice(BACKUP_IMAGES), ["/bin/sh", "-c", "/scripts/backup.sh"], name)
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": metadata(name, c.ns, lab),
          "spec": {"schedule": f"{rng.randint(0, 59)} {rng.randint(0, 5)} * * *", "concurrencyPolicy": "Forbid",
                   "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1, "jobTemplate": {"spec": job}}}
    if rng.random() < 0.5:  # a one-rule Role (configuration only) or configuration plus workload specs
        rules = [rbac_rule([""], ["configmaps", "persistentvolumeclaims"], ["get", "list"])]
    else:
        rules = [rbac_rule([""], ["configmaps"], ["get", "list"]),
                 rbac_rule(["apps"], ["deployments", "statefulsets"], ["get", "list"])]
    docs = [service_account(name, c.ns, lab), role("Role", name, c.ns, lab, rules),
            binding("RoleBinding", name, c.ns, lab, "Role", name, name, c.ns),
            config_map(f"{name}-config", c.ns, lab, {"RETENTION_DAYS": str(rng.choice((7, 14, 30))),
                                                     "COMPRESSION": rng.choice(("zstd", "gzip"))}),
            _batch_policy(rng, name, c.ns, lab), cj]
    return K8sBase("cronjob_backup", docs)


def migration_job(rng: random.Random) -> K8sBase:
    """A one-off schema migration Job (its migrations sometimes cloned by a git-sync init container) with its
    ServiceAccount, ConfigMap and egress policy."""
    c = _ctx(rng)
    name = f"{c.app}-migrate"
    lab = labels(name, "migration", c.team)
    init = volumes = mounts = None
    if rng.random() < 0.5:
        init = [git_sync(rng, f"{c.app}-migrations", one_time=True)]
        volumes = [{"name": "content", "emptyDir": {"sizeLimit": "64Mi"}}]
        mounts = [{"name": "content", "mountPath": "/migrations", "readOnly": True}]
    job = _job_spec(rng, name, app_image(rng, c.team, c.app), ["migrate", "up"], name, init, volumes, mounts)
    job_doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata(name, c.ns, lab), "spec": job}
    docs = [service_account(name, c.ns, lab),
            config_map(f"{name}-config", c.ns, lab, {"MIGRATIONS_DIR": "/migrations",
                                                     "LOCK_TIMEOUT": f"{rng.choice((30, 60))}s"}),
            _batch_policy(rng, name, c.ns, lab), job_doc]
    return K8sBase("migration_job", docs)


def operator_rbac(rng: random.Random) -> K8sBase:
    """An operator: namespace, NetworkPolicy, SA, Role + RoleBinding, ClusterRole + binding, Deployment."""
    kind = rng.choice(("certificates", "backups", "databases", "queues", "tenants"))
    name = f"{kind[:-1]}-operator"
    ns = f"{name}-system"
    lab = labels(name, "operator", "platform")
    cont = container(rng, "manager", app_image(rng, "platform", name), port=8081, port_name="probes",
                     args=["--leader-elect", "--metrics-bind-address=:8080"])
    dep = deployment(name, ns, lab, 1, pod_spec(rng, name, [cont]))
    group = f"{kind}.acme.io"
    cluster_rules = [rbac_rule([group], [kind], ["get", "list", "watch", "update", "patch"]),
                     rbac_rule([group], [f"{kind}/status"], ["get", "update", "patch"]),
                     rbac_rule([""], ["events"], ["create", "patch"])]
    ns_rules = [rbac_rule(["coordination.k8s.io"], ["leases"], ["get", "list", "watch", "create", "update"]),
                rbac_rule([""], ["configmaps"], ["get", "list", "watch"])]
    docs = [namespace(ns), default_deny(ns), service_account(name, ns, lab),
            role("Role", f"{name}-leader-election", ns, lab, ns_rules),
            binding("RoleBinding", f"{name}-leader-election", ns, lab, "Role", f"{name}-leader-election", name, ns),
            role("ClusterRole", f"{name}-manager", None, lab, cluster_rules),
            binding("ClusterRoleBinding", f"{name}-manager", None, lab, "ClusterRole", f"{name}-manager", name, ns),
            dep]
    return K8sBase("operator_rbac", docs)


def debug_pod(rng: random.Random) -> K8sBase:
    """A standalone tooling Pod (e.g. a toolbox kept for on-call) with its ServiceAccount, a read-only Role on
    pods and their logs, and a NetworkPolicy (reachable from its own namespace only)."""
    c = _ctx(rng)
    name = f"{c.app}-toolbox"
    lab = labels(name, "toolbox", c.team)
    cont = container(rng, "toolbox", app_image(rng, c.team, "toolbox"), port=8080,
                     args=["serve", "--listen=:8080"])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata(name, c.ns, lab),
           "spec": pod_spec(rng, name, [cont])}
    same_ns = {"from": [{"podSelector": {}}], "ports": [{"protocol": "TCP", "port": 8080}]}
    api = {"to": [{"ipBlock": {"cidr": rng.choice(("10.0.0.1/32", "172.20.0.1/32", "10.96.0.1/32"))}}],
           "ports": [{"protocol": "TCP", "port": 443}]}
    rules = [rbac_rule([""], ["pods", "pods/log"], ["get", "list", "watch"])]
    docs = [service_account(name, c.ns, lab), role("Role", name, c.ns, lab, rules),
            binding("RoleBinding", name, c.ns, lab, "Role", name, name, c.ns),
            app_policy(name, c.ns, lab, [same_ns], [dns_egress(), api]), pod]
    return K8sBase("debug_pod", docs)


def public_loadbalancer(rng: random.Random) -> K8sBase:
    """A Deployment exposed by a LoadBalancer restricted to known source ranges, and a NetworkPolicy that admits
    only those ranges."""
    c = _ctx(rng)
    port = rng.choice(APP_PORTS)
    lab = labels(c.app, "edge", c.team)
    sa, cm, dep = _web_workload(c, c.app, "edge", port, rng.randint(2, 5))
    ranges = sorted(rng.sample(("203.0.113.0/24", "198.51.100.0/24", "192.0.2.0/24", "10.0.0.0/8"), 2))
    edge = {"from": [{"ipBlock": {"cidr": r}} for r in ranges], "ports": [{"protocol": "TCP", "port": port}]}
    docs = [sa, cm, app_policy(c.app, c.ns, lab, [edge], [dns_egress()]), dep,
            service(c.app, c.ns, lab, 443, lb_ranges=ranges)]
    return K8sBase("public_loadbalancer", docs)


K8S_TEMPLATES: dict[str, Callable[[random.Random], K8sBase]] = {
    "web_app": web_app,
    "api_and_worker": api_and_worker,
    "statefulset_db": statefulset_db,
    "daemonset_agent": daemonset_agent,
    "cronjob_backup": cronjob_backup,
    "migration_job": migration_job,
    "operator_rbac": operator_rbac,
    "debug_pod": debug_pod,
    "public_loadbalancer": public_loadbalancer,
}

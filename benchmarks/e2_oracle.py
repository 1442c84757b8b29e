"""Speed of the E2 (config-audit) oracle in-process versus the common way: one CLI process per file.

(a) In-process: ``Oracle.scan_many`` over N distinct files (Rego + Checkov + validation per file, ONE semgrep
    process for the batch). Cold = the first scan of a fresh process, imports and engine loading included
    (measured in a child process).
    Warm per item = that item's own in-process time (validation, Rego, Checkov) plus its share of the
    batched semgrep run; median and p90 over the items. The batch wall time is reported too.
(b) CLI: for a subset of the same files, one process per engine per file, as a CI job would run them:
    ``checkov -f FILE --framework ... --quiet --compact -o json`` (offline environment), ``semgrep scan ...
    FILE`` with the same local rules, and the Rego policies in a fresh ``python -c`` that builds a
    RegoEngine (there is no OPA binary here).

Files: ``--dir`` (every *.yaml/*.yml/*.tf that parses), else the fixtures under tests/tools/fixtures
(spread evenly when there are more than ``--n``), padded with generated variants of two built-in
multi-resource files (``--generated``: only those). Prints JSON.

    python benchmarks/e2_oracle.py --n 60 --cli-n 5
    python benchmarks/e2_oracle.py --n 60 --cli-n 5 --generated
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "tools" / "fixtures"

K8S_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: team-{i}
spec:
  selector:
    matchLabels: {{app: web-{i}}}
  template:
    metadata:
      labels: {{app: web-{i}}}
    spec:
      hostNetwork: {flag}
      containers:
        - name: app
          image: nginx:1.{i}
          securityContext:
            privileged: {flag}
            allowPrivilegeEscalation: false
          resources:
            limits: {{cpu: 500m, memory: 256Mi}}
---
apiVersion: v1
kind: Service
metadata:
  name: web-{i}
  namespace: team-{i}
spec:
  type: NodePort
  selector: {{app: web-{i}}}
  ports:
    - port: 80
      targetPort: 8080
"""
TF_TEMPLATE = """\
resource "aws_s3_bucket" "data_{i}" {{
  bucket = "acme-data-{i}"
  acl    = "{acl}"
}}

resource "aws_security_group" "ssh_{i}" {{
  name = "ssh-{i}"
  ingress {{
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["{cidr}"]
  }}
}}

resource "aws_db_instance" "db_{i}" {{
  engine              = "postgres"
  password            = "literal-{i}"
  storage_encrypted   = {flag}
  publicly_accessible = {flag}
}}
"""


def generated(i: int) -> tuple[str, str]:
    flag = "true" if i % 2 else "false"
    if i % 2:
        return ("kubernetes", K8S_TEMPLATE.format(i=i, flag=flag))
    return ("terraform", TF_TEMPLATE.format(i=i, flag=flag, acl="public-read" if i % 4 else "private",
                                            cidr="0.0.0.0/0" if i % 3 else "10.0.0.0/8"))


def platform_of(path: Path) -> str:
    return "terraform" if path.suffix == ".tf" else "kubernetes"


def load_items(directory: Path | None, n: int, generated_only: bool = False) -> list[tuple[str, str]]:
    """Up to ``n`` distinct parseable items, spread evenly over the sorted files (so every rule's fixtures
    and both platforms are represented), padded with generated ones when there are too few."""
    from security_verifiers.engines.validate import validate

    root = directory or FIXTURES
    paths = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".tf")) if root.is_dir() else []
    items: list[tuple[str, str]] = []
    for path in [] if generated_only else paths:
        item = (platform_of(path), path.read_text(encoding="utf-8"))
        if validate(*item).parsed:
            items.append(item)
    items = list(dict.fromkeys(items))
    if n and len(items) > n:
        items = [items[i * len(items) // n] for i in range(n)]
    if directory is None:
        i = 0
        while len(items) < n:
            items.append(generated(i))
            i += 1
    return items


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"median": round(statistics.median(ordered), 4), "p90": round(p90, 4), "n": len(ordered)}


COLD_CODE = """\
import json, sys, time
t0 = time.perf_counter()
from security_verifiers.engines.oracle import Oracle
oracle = Oracle()
load_s = time.perf_counter() - t0
oracle.scan(sys.argv[1], open(sys.argv[2], encoding="utf-8").read())
print(json.dumps({"cold_first_scan_s": time.perf_counter() - t0, "engine_load_s": load_s}))
"""


def cold(item: tuple[str, str]) -> dict[str, float]:
    """The first scan of a fresh process (imports, engine loading, first semgrep run), timed inside it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "item.tf" if item[0] == "terraform" else "item.yaml")
        path.write_text(item[1], encoding="utf-8")
        proc = subprocess.run([sys.executable, "-c", COLD_CODE, item[0], str(path)], capture_output=True, text=True,
                              timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    if proc.returncode != 0:
        raise SystemExit(f"cold run failed: {proc.stderr[-800:]}")
    return {k: round(v, 3) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def in_process(items: list[tuple[str, str]]) -> dict[str, object]:
    from security_verifiers.engines.oracle import Oracle
    from security_verifiers.engines.validate import validate

    oracle = Oracle()

    # Warm-up on other texts (first use of each schema / check), then time each part per item.
    oracle.scan_many([(p, t + "\n# warm-up\n") for p, t in items])
    per_item = []
    for platform, text in items:
        s = time.perf_counter()
        validate(platform, text)
        oracle.rego.scan(platform, text)
        oracle.checkov.scan(platform, text)
        per_item.append(time.perf_counter() - s)
    s = time.perf_counter()
    oracle.semgrep.scan_many(items)
    semgrep_batch_s = time.perf_counter() - s

    oracle.clear_cache()
    s = time.perf_counter()
    results = oracle.scan_many(items)
    batch_s = time.perf_counter() - s
    s = time.perf_counter()
    oracle.scan_many(items)
    cached_s = time.perf_counter() - s
    share = semgrep_batch_s / len(items)
    return {
        "items": len(items),
        "findings": sum(len(r.findings) for r in results),
        **cold(items[0]),
        "warm_per_item_s": quantiles([x + share for x in per_item]),
        "warm_per_item_without_semgrep_s": quantiles(per_item),
        "semgrep_batch_s": round(semgrep_batch_s, 3),
        "scan_many_batch_s": round(batch_s, 3),
        "scan_many_per_item_s": round(batch_s / len(items), 4),
        "cached_per_item_s": round(cached_s / len(items), 6),
        "versions": oracle.versions(),
    }


def cli(items: list[tuple[str, str]]) -> dict[str, object]:
    from security_verifiers.engines.checkov import OFFLINE_ENV as CHECKOV_ENV
    from security_verifiers.engines.semgrep import OFFLINE_ENV as SEMGREP_ENV
    from security_verifiers.engines.semgrep import checked_semgrep, semgrep_command

    bin_dir = Path(sys.executable).parent
    checkov_env = {k: v for k, v in CHECKOV_ENV.items() if k != "CHECKOV_PARALLELIZATION_TYPE"}  # CLI default
    env = {**os.environ, **checkov_env, **SEMGREP_ENV}
    semgrep, _ = checked_semgrep()  # the pinned version, or EngineUnavailable naming `sv engines install`
    rego_code = ("import sys; from security_verifiers.engines.rego import RegoEngine; "
                 "RegoEngine().scan(sys.argv[1], open(sys.argv[2], encoding='utf-8').read())")
    rows: dict[str, list[float]] = {"checkov": [], "semgrep": [], "rego": [], "total": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (platform, text) in enumerate(items):
            path = Path(tmp, f"item{i}{'.tf' if platform == 'terraform' else '.yaml'}")
            path.write_text(text, encoding="utf-8")
            commands = {
                "checkov": [str(bin_dir / "checkov"), "-f", str(path), "--framework", platform, "--quiet", "--compact",
                            "-o", "json", "--skip-download"],
                "semgrep": semgrep_command(semgrep, [str(path)], native=False),  # plain `semgrep scan`
                "rego": [sys.executable, "-c", rego_code, platform, str(path)],
            }
            total = 0.0
            for name, command in commands.items():
                s = time.perf_counter()
                proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp, timeout=600)
                took = time.perf_counter() - s
                if proc.returncode not in (0, 1):  # checkov exits 1 when a check fails
                    raise SystemExit(f"{name} failed ({proc.returncode}): {proc.stderr[-800:]}")
                rows[name].append(took)
                total += took
            rows["total"].append(total)
    return {name: quantiles(values) for name, values in rows.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="Scan the *.yaml/*.yml/*.tf files of this directory.")
    parser.add_argument("--n", type=int, default=60, help="Items for the in-process measurement.")
    parser.add_argument("--cli-n", type=int, default=5, help="Items for the one-process-per-file measurement.")
    parser.add_argument("--generated", action="store_true",
                        help="Only generated items (larger multi-resource files) instead of the fixtures.")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    items = load_items(args.dir, args.n, args.generated)
    if not items:
        raise SystemExit("no parseable items")
    oracle = in_process(items)
    subset = items[:: max(1, len(items) // max(1, args.cli_n))][: args.cli_n]
    per_file = cli(subset)
    warm = oracle["warm_per_item_s"]["median"]  # type: ignore[index]
    amortized = oracle["scan_many_per_item_s"]
    result = {
        "in_process": oracle,
        "cli_per_item_s": per_file,
        "speedup_median_cli_vs_warm_item": round(per_file["total"]["median"] / warm, 1),  # type: ignore[index]
        "speedup_median_cli_vs_scan_many_per_item": round(per_file["total"]["median"] / amortized, 1),  # type: ignore
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

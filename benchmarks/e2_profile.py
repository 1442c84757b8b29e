"""Where E2 (config-audit) scoring spends its time: seconds per item for each engine and stage, for the original
file and for the patched one, as ``sv eval config-audit --model baseline:autofix`` scores them.

For each item the ``autofix`` baseline answers (timed apart as ``autofix_answer``: the prompt, its own scan of
the original and its patch, which the runner spends besides scoring), then every stage runs on the original text
and again on the patched text, in the order the scorer runs them, each timed alone. Parse results are cached per
text in the engines (the scorer shares them too), so the stage that parses first pays for it: ``parse`` (YAML or
HCL), then ``terraform_eval`` (Terraform only: variables, locals and expressions evaluated), ``validation``
(schema and type checks), ``rego``, ``checkov``, ``secret_values``, ``inventory``; for the patched file also
``patch_apply`` (the unified diff applied) and ``fail_closed`` (the Terraform fail-closed variant built and
scanned again by every engine). ``semgrep`` runs once per batch over every text, as the oracle runs it; an
item's share is the batch time divided by the texts. Median and p90 over the items, in milliseconds; ``total``
sums the stages item by item. Apart: a fresh process's start (imports and engine loading, then one scan), in a
child process (:func:`e2_oracle.cold`). The scan and parse stores are off (a first run's costs).

``--stored``: the same stages as a process finds them once the machine's stores hold the texts (a second run, an
RL run's later epochs, the scoring worker reading what the runner's process parsed): a first pass fills a fresh
store, the in-memory memos are cleared, and the timed pass reads parses and evaluations from the parse store
(``engines/parse_store.py``) and the scanners' findings from the scan store (one row, ``scanners_stored``, in
place of ``rego``, ``checkov`` and ``secret_values``, as the scorer asks for them); semgrep is not stored.

    python benchmarks/e2_profile.py                      # the public test set (150 items)
    python benchmarks/e2_profile.py --generated 1000     # 1,000 generated dev items (seed 7)
    python benchmarks/e2_profile.py --stored             # the public test set, stores filled
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import e2_oracle  # noqa: E402  (a sibling script: quantiles and the fresh process's first scan)

STAGES = ("parse", "terraform_eval", "validation", "rego", "checkov", "secret_values", "scanners_stored", "semgrep",
          "inventory", "patch_apply", "fail_closed")


def _items(generated: int | None, seed: int) -> list[Any]:
    from security_verifiers.envs.config_audit.env import ConfigAudit

    env = ConfigAudit()
    return env.generate("dev", generated, seed) if generated else list(env.dataset("test").items)


def _patched(env: Any, items: list[Any], answering: list[float]) -> list[tuple[str, str] | None]:
    """The autofix baseline's patch of each item and the text it makes (None: no patch, or one that does not
    apply); ``answering`` gets the seconds each answer took (the baseline scans the original itself, in the
    runner's process, while the scorer scans it again in its worker)."""
    from security_verifiers.core.parsing import Parsed, parse_answer
    from security_verifiers.envs.config_audit.env import Answer
    from security_verifiers.envs.kits.patching import PatchError, apply_patch

    policy = env.baselines()["autofix"]()
    if hasattr(policy, "prepare"):
        policy.prepare(items)
    out: list[tuple[str, str] | None] = []
    for item in items:
        t0 = time.perf_counter()
        reply = asyncio.run(policy.respond(item, env.prompt(item), None, 0)).text
        answering.append(time.perf_counter() - t0)
        answer = parse_answer(reply, Answer)
        patch = answer.value.patch if isinstance(answer, Parsed) else ""
        try:
            out.append((patch, apply_patch(item.input["text"], patch, item.input["filename"])) if patch.strip()
                       else None)
        except PatchError:
            out.append(None)
    return out


def _timed(fn: Callable[..., Any], *args: Any) -> float:
    t0 = time.perf_counter()
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - a text an engine refuses still took the time it took
        pass
    return time.perf_counter() - t0


def _stages(oracle: Any, platform: str, text: str, context: tuple[str, ...], stored: bool = False) -> dict[str, float]:
    from security_verifiers.engines.configs import evaluated_terraform, hcl_document, inventory, parse_kubernetes
    from security_verifiers.engines.validate import validate

    times = {"parse": _timed(hcl_document, text) if platform == "terraform" else _timed(parse_kubernetes, text)}
    if platform == "terraform":
        times["terraform_eval"] = _timed(evaluated_terraform, text, context)
    times["validation"] = _timed(validate, platform, text, context)
    if stored:
        times["scanners_stored"] = _timed(oracle.scanner_findings, platform, text, context)
    else:
        times["rego"] = _timed(oracle.rego.scan, platform, text, context)
        times["checkov"] = _timed(oracle.checkov.scan, platform, text, context)
        times["secret_values"] = _timed(oracle.values.scan, platform, text, context)
    times["inventory"] = _timed(inventory, platform, text)
    return times


def profile(items: list[Any], stored: bool = False) -> dict[str, Any]:
    from security_verifiers.engines.oracle import get_oracle
    from security_verifiers.envs.config_audit.env import ConfigAudit, scan_request
    from security_verifiers.envs.kits.patching import apply_patch

    env = ConfigAudit()
    oracle = get_oracle()
    answering: list[float] = []
    patched = _patched(env, items, answering)
    oracle.scan_many([scan_request(items[0])])  # engines loaded before anything is timed
    if stored:  # fill the stores with every text the timed pass reads (the scorer's scans of them included)
        oracle.scan_many([scan_request(i) for i in items] + [scan_request(i, a[1]) for i, a in
                                                             zip(items, patched, strict=True) if a])
        for item, answer in zip(items, patched, strict=True):
            if answer is not None and item.input["platform"] == "terraform":
                _fail_closed(oracle, item, answer[1], scan_request(item)[2])
    _clear_caches(oracle)  # answering parsed and scanned the originals: each text is parsed afresh below
    per: dict[str, dict[str, list[float]]] = {"original": defaultdict(list), "patched": defaultdict(list)}
    for item, answer in zip(items, patched, strict=True):
        platform, original, context = scan_request(item)
        for stage, seconds in _stages(oracle, platform, original, context, stored).items():
            per["original"][stage].append(seconds)
        if answer is None:
            continue
        patch, text = answer
        per["patched"]["patch_apply"].append(_timed(apply_patch, original, patch, item.input["filename"]))
        for stage, seconds in _stages(oracle, platform, text, context, stored).items():
            per["patched"][stage].append(seconds)
        if platform == "terraform":
            per["patched"]["fail_closed"].append(_timed(_fail_closed, oracle, item, text, context))
    for kind, texts in (("original", [scan_request(i)[:2] for i in items]),
                        ("patched", [(i.input["platform"], a[1]) for i, a in zip(items, patched, strict=True) if a])):
        seconds = _timed(oracle.semgrep.scan_many, texts)
        per[kind]["semgrep"] = [seconds / max(1, len(texts))] * len(texts)
    return {kind: _summary(stages) for kind, stages in per.items()} | {
        "autofix_answer": _ms(answering), "items": len(items), "patched_items": sum(t is not None for t in patched)}


def _clear_caches(oracle: Any) -> None:
    from security_verifiers.engines import configs

    oracle.clear_cache()
    for cached in (configs._kubernetes_parsed, configs._hcl_loads, configs._evaluated, configs._document):  # noqa: SLF001
        cached.cache_clear()


def _fail_closed(oracle: Any, item: Any, text: str, context: tuple[str, ...]) -> None:
    """The fail-closed variant of a patched Terraform file, built and scanned as the scorer does."""
    from security_verifiers.envs.config_audit.env import scan_request
    from security_verifiers.envs.config_audit.fail_closed import fail_closed_variant

    built = fail_closed_variant(item.input["text"], text, context)
    if built is not None:
        oracle.scan_many([scan_request(item, built)])


def _summary(stages: dict[str, list[float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stage in STAGES:
        values = stages.get(stage)
        if values:
            out[stage] = _ms(values)
    n = max((len(v) for v in stages.values()), default=0)
    totals = [sum(v[i] for v in stages.values() if len(v) == n) for i in range(n)]
    out["total"] = _ms(totals)
    return out


def _ms(values: list[float]) -> dict[str, float]:
    """:func:`e2_oracle.quantiles` in milliseconds, with the sum in seconds."""
    q = e2_oracle.quantiles(values)
    return {"n": q["n"], "median_ms": round(q["median"] * 1000, 2), "p90_ms": round(q["p90"] * 1000, 2),
            "sum_s": round(sum(values), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generated", type=int, default=None, metavar="N",
                        help="Profile N generated dev items instead of the public test set.")
    parser.add_argument("--seed", type=int, default=7, help="Generator seed (with --generated).")
    parser.add_argument("--stored", action="store_true",
                        help="Time the stages with the scan and parse stores filled (default: both off).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        if args.stored:  # a fresh store of this run's own, filled by a first pass
            os.environ.update(SV_SCAN_STORE="on", SV_CACHE_DIR=cache)
        else:  # a first run's costs: nothing is served from the machine's stores
            os.environ["SV_SCAN_STORE"] = "off"
        items = _items(args.generated, args.seed)
        first = (items[0].input["platform"], items[0].input["text"])
        result = {"dataset": f"generated dev {args.generated} (seed {args.seed})" if args.generated else "public test",
                  "stores": "filled" if args.stored else "off",
                  "process_start": e2_oracle.cold(first), **profile(items, args.stored)}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``sv train ablation``: the training variants of one preset over several seeds, at equal budget.

The question an ablation answers is whether one way of turning the environment's reward into a training
signal beats another (GRPO on the summed reward, GDPO-style per-component normalisation, a weighted sum,
distillation from a teacher) on held-out items. Three rules make the answer trustworthy:

* **Equal budget.** Every RL variant runs from the same preset: same train prompts, generations per prompt,
  completion length and steps. The table records the figures from each run's own manifest and checks that
  they agree, rather than assuming it.
* **A common start.** Per seed, one ``sft`` run (the preset's SFT targets) is trained first; every RL variant
  of that seed starts from its checkpoint, so differences between RL variants are the RL stage's alone.
  ``distill`` is its own SFT run on the teacher's filtered answers (no RL).
* **No claim beyond the intervals.** Seeds are the unit of replication: each variant's held-out metric gets a
  95% t-interval across seeds, and two variants are compared by their per-seed differences (paired by seed:
  same data, same start). With three seeds these intervals are wide; ``ablation.md`` says "no difference
  shown" whenever an interval contains zero.

The directory is resumable: a finished run (``manifest.json`` status ``finished``) is kept, an interrupted one
is removed and redone, so ``sv train ablation`` run again with the same arguments continues where it stopped.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from itertools import combinations
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import write_json_atomic
from security_verifiers.envs.base import get_env
from security_verifiers.train.curves import plot_ablation, read_log
from security_verifiers.train.pipeline import RL_COMMANDS, read_manifest, train
from security_verifiers.train.presets import TrainPreset

VARIANTS: tuple[str, ...] = ("grpo", "gdpo", "weighted", "distill")
START = "sft"  # the common SFT start of the RL variants, shown as a reference row
BUDGET_KEYS = ("steps", "prompts_per_step", "num_generations", "max_completion_length", "temperature")


def _say(message: str) -> None:
    print(f"[sv train ablation] {message}", flush=True)


def parse_variants(text: str) -> list[str]:
    variants = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if not variants or unknown:
        raise ConfigError(f"--variants: unknown {', '.join(unknown) or '(none given)'}; "
                          f"choose from {', '.join(VARIANTS)}")
    if len(set(variants)) != len(variants):
        raise ConfigError("--variants: a variant is named twice")
    return variants


def _jobs(variants: list[str], seeds: int) -> list[tuple[str, int]]:
    """Per seed: the common SFT start (when an RL variant needs it), then each variant."""
    jobs: list[tuple[str, int]] = []
    for seed in range(seeds):
        if any(v in RL_COMMANDS for v in variants):
            jobs.append((START, seed))
        jobs.extend((v, seed) for v in variants)
    return jobs


def _finished(run: Path) -> bool:
    try:
        return read_manifest(run).get("status") == "finished" and (run / "summary.json").is_file()
    except ConfigError:
        return False


def _check_plan(out: Path, plan: dict[str, Any]) -> None:
    """An ablation directory holds one plan; running another into it would mix incomparable runs."""
    path = out / "plan.json"
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old != plan:
            changed = sorted(k for k in set(old) | set(plan) if old.get(k) != plan.get(k))
            raise ConfigError(f"{out} holds an ablation with other settings ({', '.join(changed)}); "
                              "use another --out")
    else:
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, plan)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def run_ablation(env_name: str, preset: TrainPreset, variants: list[str], seeds: int, out: Path) -> Path:
    """Train every (variant, seed) not yet finished under ``out/runs/``, then write the ablation's tables and
    plots; returns ``out``."""
    if seeds < 1:
        raise ConfigError("--seeds must be at least 1")
    get_env(env_name, preset.env_options.get(env_name, {}))  # unknown environment or option: fail before training
    plan = {"env": env_name, "preset": preset.model_dump(mode="json"), "variants": variants, "seeds": seeds}
    _check_plan(out, plan)
    runs = out / "runs"
    jobs = _jobs(variants, seeds)
    spent: dict[str, list[float]] = {}
    started = time.monotonic()
    for k, (variant, seed) in enumerate(jobs, start=1):
        run = runs / f"{variant}-s{seed}"
        if _finished(run):
            _say(f"[{k}/{len(jobs)}] {run.name}: finished earlier, kept")
            continue
        if run.exists():
            _say(f"[{k}/{len(jobs)}] {run.name}: interrupted earlier, removed and redone")
            shutil.rmtree(run)
        _say(f"[{k}/{len(jobs)}] {run.name} (elapsed {_duration(time.monotonic() - started)}"
             f"{_time_left(jobs[k - 1:], spent)})")
        t0 = time.monotonic()
        train(variant if variant != START else "sft", env_name, preset, seed=seed, out=runs, run_id=run.name,
              sft_run=runs / f"{START}-s{seed}" if variant in RL_COMMANDS else None)
        spent.setdefault(_kind(variant), []).append(time.monotonic() - t0)
    result = summarise(out)
    table = (out / "ablation.md").read_text(encoding="utf-8").split("\n## ")[0:2]
    print("\n## ".join(table), flush=True)
    _say(f"wrote {out / 'ablation.md'}, ablation.json, heldout.png, curves.png "
         f"(budget parity: {result['budget']['parity']})")
    return out


def _kind(variant: str) -> str:
    return "rl" if variant in RL_COMMANDS else "sft"


def _time_left(remaining: list[tuple[str, int]], spent: dict[str, list[float]]) -> str:
    """From the mean duration of this session's finished runs of each kind (SFT-like or RL)."""
    if not spent:
        return ""
    fallback = sum(sum(v) for v in spent.values()) / sum(len(v) for v in spent.values())
    left = sum(sum(spent[_kind(v)]) / len(spent[_kind(v)]) if _kind(v) in spent else fallback
               for v, _ in remaining)
    return f", about {_duration(left)} left"


# -- the summary -----------------------------------------------------------------------------------
def _t_interval(values: list[float]) -> tuple[float, float, list[float] | None]:
    """Mean, sample sd and the 95% t-interval of the mean (None with fewer than two values)."""
    from scipy import stats

    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return mean, sd, [mean - half, mean + half]


def _runs(out: Path) -> dict[str, dict[int, dict[str, Any]]]:
    """variant → seed → {"manifest", "summary", "log"} of every finished run."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for run in sorted((out / "runs").glob("*-s*")):
        if not _finished(run):
            continue
        manifest = read_manifest(run)
        variant = manifest["command"]
        found.setdefault(variant, {})[int(manifest["seed"])] = {
            "dir": run, "manifest": manifest,
            "summary": json.loads((run / "summary.json").read_text(encoding="utf-8")),
            "log": read_log(run / "log.jsonl"),
        }
    return found


def _budget(found: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """Each RL run's budget as its manifest recorded it; parity holds when they all agree."""
    rows = []
    for variant, seeds in found.items():
        if variant not in RL_COMMANDS:
            continue
        for seed, run in sorted(seeds.items()):
            grpo = run["manifest"]["preset"]["grpo"]
            logged = [r for r in run["log"] if r.get("stage", "").startswith("grpo") and "num_tokens" in r]
            rows.append({"variant": variant, "seed": seed, "train_hash": run["manifest"]["data"]["train"]["hash"],
                         **{k: grpo[k] for k in BUDGET_KEYS},
                         "completions_scored": (run["manifest"].get("rl_reward_counts") or {}).get("scored"),
                         "tokens": logged[-1]["num_tokens"] if logged else None})
    fixed = ["train_hash", *BUDGET_KEYS]
    parity = all(all(r[k] == rows[0][k] for k in fixed) for r in rows) if rows else None
    return {"parity": parity, "fixed": fixed, "runs": rows}


def _stability(run: dict[str, Any]) -> dict[str, float | None]:
    """Collapsed groups (every completion of a prompt scored alike: no advantage, no signal) and parse
    failures over the RL stage, and the train-batch reward of its last tenth."""
    rows = [r for r in run["log"] if r.get("stage", "").startswith("grpo") and "reward" in r]
    if not rows:
        return {"collapsed_groups": None, "parse_failure_rate": None, "final_train_reward": None}
    tail = rows[-max(1, len(rows) // 10):]
    parse = [r["parse_failure_rate"] for r in rows if isinstance(r.get("parse_failure_rate"), int | float)]
    return {"collapsed_groups": sum(float(r.get("frac_reward_zero_std", 0.0)) for r in rows) / len(rows),
            "parse_failure_rate": sum(parse) / len(parse) if parse else None,
            "final_train_reward": sum(float(r["reward"]) for r in tail) / len(tail)}


def summarise(out: Path) -> dict[str, Any]:
    """Rebuild ``ablation.json``, ``ablation.md`` and the plots from the finished runs under ``out/runs``."""
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    env = get_env(plan["env"], plan["preset"]["env_options"].get(plan["env"], {}))
    found = _runs(out)
    metrics = [(key, up) for key, up in env.headline_metrics]
    order = [v for v in [START, *plan["variants"]] if v in found]
    table: dict[str, Any] = {}
    for variant in order:
        seeds = found[variant]
        row: dict[str, Any] = {"seeds": sorted(seeds), "metrics": {}, "stage_delta": {}}
        for key, _ in metrics:
            values = [s["summary"]["metrics"][key]["b"] for s in seeds.values()
                      if s["summary"]["metrics"].get(key, {}).get("b") is not None]
            if values:
                mean, sd, ci = _t_interval(values)
                row["metrics"][key] = {"values": values, "mean": mean, "sd": sd, "ci": ci}
            deltas = [s["summary"]["metrics"][key] for s in seeds.values() if key in s["summary"]["metrics"]]
            row["stage_delta"][key] = [{"delta": d["delta"], "ci": d["ci"]} for d in deltas]
        if variant in RL_COMMANDS:
            per_seed = [_stability(s) for s in seeds.values()]
            row["stability"] = {k: _mean([p[k] for p in per_seed]) for k in per_seed[0]}
        table[variant] = row
    pairs = {}
    for a, b in combinations(order, 2):
        shared = sorted(set(found[a]) & set(found[b]))
        pairs[f"{b} - {a}"] = {}
        for key, _ in metrics:
            diffs = [found[b][s]["summary"]["metrics"][key]["b"] - found[a][s]["summary"]["metrics"][key]["b"]
                     for s in shared if found[a][s]["summary"]["metrics"].get(key, {}).get("b") is not None
                     and found[b][s]["summary"]["metrics"].get(key, {}).get("b") is not None]
            if diffs:
                mean, sd, ci = _t_interval(diffs)
                pairs[f"{b} - {a}"][key] = {"seeds": shared, "mean": mean, "sd": sd, "ci": ci}
    result = {"env": env.describe(), "plan": plan, "metrics": [{"key": k, "higher_is_better": up} for k, up in metrics],
              "variants": table, "pairs": pairs, "budget": _budget(found),
              "heldout": {v: found[v][min(found[v])]["manifest"]["data"]["heldout"] for v in order}}
    write_json_atomic(out / "ablation.json", result)
    (out / "ablation.md").write_text(_markdown(result), encoding="utf-8")
    plot_ablation(result, found, out / "heldout.png", out / "curves.png")
    return result


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _ci(ci: list[float] | None, signed: bool = False) -> str:
    return "—" if ci is None else f"[{_fmt(ci[0], signed)}, {_fmt(ci[1], signed)}]"


def _markdown(result: dict[str, Any]) -> str:
    plan, metrics = result["plan"], result["metrics"]
    keys = [m["key"] for m in metrics]
    arrows = {m["key"]: "↑" if m["higher_is_better"] else "↓" for m in metrics}
    lines = [f"# Ablation: {plan['env']}, preset {plan['preset']['name']}, {plan['seeds']} seeds", "",
             f"Held-out: {next(iter(result['heldout'].values()))['n']} items of split "
             f"{plan['preset']['data']['heldout_split']}. Each cell: mean over seeds, with the 95% t-interval "
             "across seeds. `sft` is the common start of the RL variants (SFT on the preset's targets).", "",
             "| variant | seeds | " + " | ".join(f"{k} {arrows[k]}" for k in keys) + " |",
             "|---|---|" + "---|" * len(keys)]
    for variant, row in result["variants"].items():
        cells = [f"{_fmt(row['metrics'][k]['mean'])} {_ci(row['metrics'][k]['ci'])}" if k in row["metrics"] else "—"
                 for k in keys]
        lines.append(f"| {variant} | {len(row['seeds'])} | " + " | ".join(cells) + " |")
    lines += ["", "## Paired by seed (B − A; same data, same start)", "",
              "| B − A | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    findings = []
    for pair, by_key in result["pairs"].items():
        lines.append(f"| {pair} | " + " | ".join(
            f"{_fmt(by_key[k]['mean'], True)} {_ci(by_key[k]['ci'], True)}" if k in by_key else "—" for k in keys)
            + " |")
        for key in keys[:1] + [k for k in keys[1:] if k in ("expected_cost", "brier", "f1_weighted", "fix_rate")]:
            cell = by_key.get(key)
            if cell is None or cell["ci"] is None:
                continue
            lo, hi = cell["ci"]
            if lo <= 0 <= hi:
                findings.append(f"- {pair}, {key}: no difference shown ({_ci(cell['ci'], True)} contains 0).")
            else:
                better = (lo > 0) == next(m["higher_is_better"] for m in metrics if m["key"] == key)
                findings.append(f"- {pair}, {key}: {pair.split(' - ')[0]} is {'better' if better else 'worse'} "
                                f"than {pair.split(' - ')[1]} ({_fmt(cell['mean'], True)} {_ci(cell['ci'], True)}).")
    lines += ["", "What the intervals support:", "", *(findings or ["- (one seed: no interval)"])]
    stable = [(v, r["stability"]) for v, r in result["variants"].items() if "stability" in r]
    if stable:
        lines += ["", "## Stability of the RL stage (means over seeds)", "",
                  "| variant | sd of held-out " + keys[0] + " across seeds | collapsed groups | parse failures | "
                  "final train reward |", "|---|---|---|---|---|"]
        for variant, s in stable:
            lines.append(f"| {variant} | {_fmt(result['variants'][variant]['metrics'][keys[0]]['sd'])} | "
                         f"{_fmt(s['collapsed_groups'])} | {_fmt(s['parse_failure_rate'])} | "
                         f"{_fmt(s['final_train_reward'])} |")
    budget = result["budget"]
    lines += ["", "## Budget", "", f"Parity across RL runs ({', '.join(budget['fixed'])}): **{budget['parity']}**.",
              "", "| variant | seed | " + " | ".join(BUDGET_KEYS) + " | distinct completions scored | tokens |",
              "|---|---|" + "---|" * (len(BUDGET_KEYS) + 2)]
    for r in budget["runs"]:
        lines.append(f"| {r['variant']} | {r['seed']} | " + " | ".join(str(r[k]) for k in BUDGET_KEYS)
                     + f" | {r['completions_scored']} | {r['tokens']} |")
    lines += ["", "Plots: `heldout.png` (held-out metrics per variant, each seed and the interval), `curves.png` "
              "(train-batch reward per component, mean ± sd over seeds, and collapsed groups).", ""]
    return "\n".join(lines)


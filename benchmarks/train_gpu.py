"""GRPO step speed of each generation path (``grpo.generation``) on a Qwen3-4B-shaped model: what ``sv train``'s
RL stage costs per step, and how fast it generates.

A model of Qwen3-4B's shape (hidden 2560, 36 layers, 32 heads of 128, 8 key-value heads, MLP 9728, vocabulary
151,936, tied embeddings; ~4.0B parameters) is built here from a config, randomly initialised in bf16, with a
byte-level BPE tokenizer trained on the prompts (as ``sv train``'s tiny models are; its vocabulary is padded to
the model's with tokens no text encodes to, so every sampled id decodes). No hub is used. A random model never
ends an answer, so every completion runs to the length limit: the figures are for full-length completions.

For each path (``transformers``: the model's ``generate``; ``paged``: transformers' continuous batching;
``vllm``: a colocated vLLM engine, where the ``vllm`` package is installed), a child process runs the project's
own :func:`run_grpo` (LoRA r16 on q/k/v/o, bf16, network-logs with a window of 3 and the compact prompt, as in
``tiny-cpu``, rewarded by its scorer) for ``--steps`` steps of ``--completions`` completions of
``--max-tokens`` tokens each. Per path: median step time (TRL's ``step_time``: generation, scoring, forward and
backward), median generation time, generated tokens per step and generated tokens/s (tokens / generation
seconds, from the step log's ``generated_tokens`` and ``generation_s``), over the steps after the first (a
warm-up); and the peak memory (GPU: torch's peak reserved; CPU: the child's peak RSS). The final checkpoint save
of ``run_grpo`` is skipped (it is not part of a step). Goal: under 8 minutes on one H100.

    python benchmarks/train_gpu.py                     # one GPU: 64 completions of 64 tokens, 4 steps per path
    python benchmarks/train_gpu.py --tiny              # CPU: tiny-cpu's model sizes, 16 completions
    python benchmarks/train_gpu.py --paths paged vllm --out outputs/benchmarks/train_gpu.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PATHS = ("transformers", "paged", "vllm")
#: Qwen/Qwen3-4B's config.json (the text model; Qwen3-4B-Instruct-2507 has the same shape).
QWEN3_4B = {"vocab_size": 151_936, "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40_960,
            "rope_theta": 1_000_000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": True}
NUM_GENERATIONS = 8


def _env() -> Any:
    from security_verifiers.envs.base import get_env
    from security_verifiers.train.presets import load_preset

    return get_env("network-logs", load_preset("tiny-cpu").env_options["network-logs"])


def _items(env: Any, n: int) -> list[Any]:
    return list(env.dataset("train", n=n, seed=0).items)


def _pad_vocab(tokenizer: Any, size: int) -> Any:
    """The tokenizer with its BPE vocabulary grown to ``size`` by tokens no merge produces (so encoding is
    unchanged) but that decode, as a large model's vocabulary would."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    state = json.loads(tokenizer.backend_tokenizer.to_str())
    vocab: dict[str, int] = state["model"]["vocab"]
    filler = (f"x{i:06d}" for i in range(10**6))
    while len(vocab) < size:
        token = next(filler)
        if token not in vocab:
            vocab[token] = len(vocab)
    padded = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(state)),
                                     eos_token=tokenizer.eos_token, pad_token=tokenizer.pad_token)
    padded.chat_template = tokenizer.chat_template
    if len(padded) != size:
        raise RuntimeError(f"padded tokenizer has {len(padded)} tokens, not {size}")
    return padded


def build_start(path: Path, tiny: bool) -> dict[str, Any]:
    """The starting checkpoint (tokenizer and weights) at ``path``; returns what it is."""
    import torch

    from security_verifiers.train.presets import load_preset
    from security_verifiers.train.tiny import tiny_model, train_tokenizer

    env = _env()
    texts = [m.content for item in _items(env, 256) for m in env.prompt(item)]
    if tiny:
        spec = load_preset("tiny-cpu").model.tiny
        assert spec is not None
        tokenizer = train_tokenizer(texts, spec.vocab_size)
        model = tiny_model(tokenizer, spec, seed=0)
    else:
        from transformers import Qwen3Config, Qwen3ForCausalLM

        tokenizer = _pad_vocab(train_tokenizer(texts, 8192), QWEN3_4B["vocab_size"])
        config = Qwen3Config(**QWEN3_4B, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                             bos_token_id=None)
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = Qwen3ForCausalLM(config).to(torch.bfloat16)
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    chats = [tokenizer.apply_chat_template([{"role": m.role, "content": m.content} for m in env.prompt(item)],
                                           tokenize=False, add_generation_prompt=True) for item in _items(env, 16)]
    prompt_tokens = [len(tokenizer(chat)["input_ids"]) for chat in chats]
    return {"parameters": sum(p.numel() for p in model.parameters()), "vocab": model.config.vocab_size,
            "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
            "prompt_tokens_median": statistics.median(prompt_tokens)}


def child(args: argparse.Namespace) -> int:
    """One path's GRPO run, in its own process (its own peak memory; a vLLM engine's memory is freed with it)."""
    import torch

    from security_verifiers.train import trainers
    from security_verifiers.train.presets import GRPOSpec, LoraSpec

    trainers._save = lambda trainer, tokenizer, path: path  # the closing checkpoint save is not a step
    env = _env()
    prompts = args.completions // NUM_GENERATIONS
    spec = GRPOSpec(steps=args.steps, learning_rate=1e-5, prompts_per_step=prompts, num_generations=NUM_GENERATIONS,
                    max_completion_length=args.max_tokens, temperature=1.0, beta=0.0, generation=args.child)
    gpu = torch.cuda.is_available() and not args.tiny
    trainers.run_grpo(env, _items(env, prompts * args.steps), args.start, args.work, spec, "grpo", seed=0,
                      log_path=args.work / "log.jsonl", lora=LoraSpec(r=16, alpha=32), use_cpu=not gpu, bf16=gpu)
    peak = torch.cuda.max_memory_reserved() if gpu else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    (args.work / "peak.json").write_text(json.dumps({"peak_memory_bytes": peak, "device": "cuda" if gpu else "cpu"}))
    return 0


def _row_line(path: str, row: dict[str, Any]) -> str:
    rate = row.get("generated_tokens_per_s")
    return (f"[{path}] step {row['step']}/{row['max_steps']}: {row.get('step_time', 0):.2f} s, "
            f"{row.get('generated_tokens', 0)} tokens generated in {row.get('generation_s') or 0:.2f} s"
            f" ({rate if rate is not None else '-'} tokens/s), reward {row.get('reward', float('nan')):.3f}")


def run_path(path: str, args: argparse.Namespace, start: Path, work: Path) -> dict[str, Any]:
    if path == "vllm" and importlib.util.find_spec("vllm") is None:
        print(f"[{path}] skipped: the vllm package is not installed", flush=True)
        return {"path": path, "skipped": "vllm is not installed"}
    work.mkdir(parents=True)
    argv = [sys.executable, __file__, "--child", path, "--start", str(start), "--work", str(work),
            "--steps", str(args.steps), "--completions", str(args.completions), "--max-tokens", str(args.max_tokens),
            *(["--tiny"] if args.tiny else [])]
    print(f"[{path}] starting ({args.steps} steps of {args.completions} completions)", flush=True)
    began = time.monotonic()
    log, seen = work / "log.jsonl", 0
    with (work / "child.log").open("w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        while proc.poll() is None or seen < _count_lines(log):
            time.sleep(0.5)
            rows = _rows(log)
            for row in rows[seen:]:
                if "loss" in row:
                    print(_row_line(path, row), flush=True)
            seen = len(rows)
            if time.monotonic() - began > args.timeout and proc.poll() is None:
                proc.kill()
                proc.wait()
                print(f"[{path}] stopped after {args.timeout} s", flush=True)
    wall = round(time.monotonic() - began, 1)
    if proc.returncode != 0:
        tail = (work / "child.log").read_text(errors="replace")[-2000:]
        print(f"[{path}] failed ({proc.returncode}):\n{tail}", flush=True)
        return {"path": path, "failed": proc.returncode, "log_tail": tail, "wall_s": wall}
    steps = [r for r in _rows(log) if "loss" in r]
    measured = steps[1:] or steps  # the first step warms up (allocation, kernels, an engine's first batch)
    tokens, seconds = sum(r["generated_tokens"] for r in measured), sum(r["generation_s"] for r in measured)
    peak = json.loads((work / "peak.json").read_text())
    return {"path": path, "steps": len(steps), "measured_steps": len(measured),
            "step_s_median": round(statistics.median(r["step_time"] for r in measured), 3),
            "generation_s_median": round(statistics.median(r["generation_s"] for r in measured), 3),
            "generated_tokens_per_step": round(tokens / len(measured), 1),
            "generated_tokens_per_s": round(tokens / seconds, 1) if seconds else None,
            "step_tokens_per_s": round(tokens / sum(r["step_time"] for r in measured), 1),
            "peak_memory_gib": round(peak["peak_memory_bytes"] / 2**30, 2), "memory": peak["device"],
            "wall_s": wall, "per_step": steps}


def _count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _table(results: list[dict[str, Any]]) -> str:
    lines = [f"{'path':<13} {'step s':>8} {'gen s':>8} {'tokens/step':>12} {'gen tok/s':>10} {'step tok/s':>11} "
             f"{'peak mem':>13}"]
    for r in results:
        if "step_s_median" not in r:
            lines.append(f"{r['path']:<13} {r.get('skipped') or 'failed (see JSON)'}")
            continue
        lines.append(f"{r['path']:<13} {r['step_s_median']:>8.2f} {r['generation_s_median']:>8.2f} "
                     f"{r['generated_tokens_per_step']:>12.0f} {r['generated_tokens_per_s'] or 0:>10.1f} "
                     f"{r['step_tokens_per_s']:>11.1f} {r['peak_memory_gib']:>7.2f} GiB {r['memory']}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="tiny-cpu's model sizes (~0.2M parameters) on "
                        "CPU, even where a GPU is (default --completions 16), instead of the Qwen3-4B shape on a GPU.")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS),
                        help="Generation paths to run (default: all; vllm is skipped where it is not installed).")
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps per path; the first is a warm-up "
                        "left out of the figures (default 4).")
    parser.add_argument("--completions", type=int, help=f"Completions per step, {NUM_GENERATIONS} per prompt "
                        "(default 64; 16 with --tiny).")
    parser.add_argument("--max-tokens", type=int, default=64, help="Completion length limit (default 64).")
    parser.add_argument("--timeout", type=float, default=300, help="Seconds a path may take (default 300).")
    parser.add_argument("--out", type=Path, default=Path("outputs/benchmarks/train_gpu.json"),
                        help="Where to write the figures as JSON.")
    parser.add_argument("--child", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--start", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.completions = args.completions or (16 if args.tiny else 64)
    if args.child:
        return child(args)
    if args.completions % NUM_GENERATIONS or args.steps < 2:
        parser.error(f"--completions must be a multiple of {NUM_GENERATIONS}, and --steps at least 2")
    import torch

    if not args.tiny and not torch.cuda.is_available():
        parser.error("no GPU here: the Qwen3-4B shape needs one (use --tiny on CPU)")
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sv-train-gpu-") as tmp:
        start = Path(tmp) / "start"
        print(f"building the {'tiny-cpu' if args.tiny else 'Qwen3-4B'}-shaped start model", flush=True)
        model = build_start(start, args.tiny)
        print(f"  {model['parameters'] / 1e6:,.1f}M parameters, vocabulary {model['vocab']:,}, {model['dtype']}, "
              f"median prompt {model['prompt_tokens_median']:.0f} tokens ({time.monotonic() - began:.0f} s)",
              flush=True)
        results = [run_path(path, args, start, Path(tmp) / path) for path in args.paths]
    print(f"\n{args.completions} completions of up to {args.max_tokens} tokens per step, median over steps 2-"
          f"{args.steps}; gen tok/s = generated tokens / generation seconds, step tok/s = / step seconds")
    print(_table(results))
    device = torch.cuda.get_device_name() if torch.cuda.is_available() and not args.tiny else \
        f"cpu ({os.cpu_count()} cores)"
    figures = {"device": device, "tiny": args.tiny, "model": model, "steps": args.steps,
               "completions": args.completions, "max_tokens": args.max_tokens,
               "total_s": round(time.monotonic() - began, 1), "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"wrote {args.out} ({figures['total_s']} s in all)", file=sys.stderr)
    return 0 if all("failed" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

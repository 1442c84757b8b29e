"""``--model hf:PATH``: a local checkpoint measured by the same runner, scorer and report as an API model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.base import get_env
from security_verifiers.harness.policies import resolve_policy
from security_verifiers.models.base import Sampling
from security_verifiers.models.hf_local import HFLocalPolicy, weights_digest
from security_verifiers.train.tiny import TinyModelSpec, tiny_model, train_tokenizer

SPEC = TinyModelSpec(vocab_size=400, hidden_size=16, layers=1, heads=2, kv_heads=1, intermediate_size=32,
                     max_positions=4096)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = get_env("network-logs")
    texts = [m.content for item in env.dataset("test", n=10).items for m in env.prompt(item)]
    tokenizer = train_tokenizer(texts, SPEC.vocab_size)
    path = tmp_path_factory.mktemp("tiny")
    tiny_model(tokenizer, SPEC, seed=0).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_sv_eval_runs_a_local_checkpoint(checkpoint: Path, tmp_path: Path) -> None:
    argv = ["eval", "network-logs", "--model", f"hf:{checkpoint}", "--n", "4", "--max-tokens", "6",
            "--out", str(tmp_path), "--run-id", "r", "--quiet", "--max-error-rate", "0"]
    assert main(argv) == 0
    run = next((tmp_path / "evals").glob("*/r"))
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["error"] is None and r["reward"] is not None for r in records)
    assert all(r["usage"]["completion_tokens"] <= 6 for r in records)
    policy = json.loads((run / "metadata.json").read_text())["policy"]
    assert policy["kind"] == "hf" and policy["identity"]["weights_sha256"] == weights_digest(checkpoint)


def test_greedy_generation_is_batched_and_deterministic(checkpoint: Path) -> None:
    env = get_env("network-logs")
    items = list(env.dataset("test", n=3).items)
    policy = HFLocalPolicy(str(checkpoint), sampling=Sampling(max_tokens=5), batch_size=2)
    conversations = [env.prompt(i) for i in items]
    batched = [c.text for c in policy.generate(conversations)]
    alone = [policy.generate([c])[0].text for c in conversations]
    assert batched == alone  # left padding leaves every row's greedy reply unchanged


def test_weights_identify_the_checkpoint(checkpoint: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in checkpoint.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    assert weights_digest(copy) == weights_digest(checkpoint)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert weights_digest(copy) != weights_digest(checkpoint)


def test_bad_sources_are_clear_errors(tmp_path: Path, checkpoint: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "network-logs", "--model", f"hf:{tmp_path / 'nope'}", "--n", "1", "--out",
                 str(tmp_path)]) == 2
    assert "no such model directory" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="no model weights"):
        weights_digest(tmp_path)



def test_a_local_model_calls_tools_in_text(checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the environment offers tools, the chat template lists them and a ``<tool_call>`` in the reply becomes a
    structured call (here E5's ``deliver``); a reply without one is an answer."""
    import torch

    env = get_env("redteam-attack")
    item = env.dataset("test", n=1).items[0]
    toolbox = env.tools(item)
    assert toolbox is not None
    policy = HFLocalPolicy(str(checkpoint), sampling=Sampling(max_tokens=64), batch_size=2)
    tokenizer = policy._tokenizer
    reply = '<tool_call>{"name": "deliver", "arguments": {"content": "hello"}}</tool_call>'
    seen: list[str] = []

    def generate(input_ids: torch.Tensor, **_: object) -> torch.Tensor:
        seen.extend(tokenizer.batch_decode(input_ids))
        tail = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        return torch.cat([input_ids, torch.tensor([tail] * len(input_ids))], dim=1)

    monkeypatch.setattr(policy._model, "generate", generate)
    with_tools, without = policy.generate([(env.prompt(item), toolbox.schemas()), (env.prompt(item), None)])
    assert '"name": "deliver"' in seen[0] and "<tools>" in seen[0] and "<tools>" not in seen[1]
    assert [(c.name, c.arguments) for c in with_tools.tool_calls] == [("deliver", '{"content": "hello"}')]
    assert with_tools.text == "" and not without.tool_calls and without.text == reply
    assert resolve_policy(f"hf:{checkpoint}", env).name == f"hf:{checkpoint}"  # tool-using environments accepted

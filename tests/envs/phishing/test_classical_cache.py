"""The classical baseline is fitted once per training set and code, and kept on disk: a second process loads it, a
changed training set refits, and a corrupt or foreign cache file is refitted with a warning, never an error."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from security_verifiers.envs.base import get_env
from security_verifiers.envs.phishing import classical
from security_verifiers.envs.phishing.env import LABELS


@pytest.fixture
def fits(tmp_path: Path, monkeypatch) -> list[int]:
    """A small training set, an empty cache directory and process, and the count of fits (one entry per fit)."""
    monkeypatch.setenv("SV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(classical, "TRAIN_ITEMS", 60)
    monkeypatch.setattr(classical, "_MODELS", {})
    calls: list[int] = []
    real = classical.train

    def counted(env):
        calls.append(classical.TRAIN_SEED)
        return real(env)

    monkeypatch.setattr(classical, "train", counted)
    return calls


def _new_process(monkeypatch) -> None:
    monkeypatch.setattr(classical, "_MODELS", {})


def _probabilities(env) -> list[float]:
    items = env.dataset("dev", n=4, seed=3).items
    return classical.ClassicalBaseline(env.config.costs, LABELS, env).probabilities(list(items))


def test_a_second_process_loads_the_fitted_model(fits: list[int], tmp_path: Path, monkeypatch) -> None:
    env = get_env("phishing", {})
    first = _probabilities(env)
    assert len(fits) == 1 and classical.cache_path(classical.cache_key()).is_file()
    _new_process(monkeypatch)
    assert _probabilities(env) == first
    assert len(fits) == 1  # loaded, not fitted
    assert len(list((tmp_path / "cache" / "phishing-classical").iterdir())) == 1  # no temporary file left


def test_a_changed_training_set_or_code_refits(fits: list[int], monkeypatch) -> None:
    env = get_env("phishing", {})
    seed, code_hash = classical.TRAIN_SEED, classical._code_hash
    classical.model(env)
    monkeypatch.setattr(classical, "TRAIN_SEED", seed + 1)  # another training set
    classical.model(env)
    assert len(fits) == 2
    monkeypatch.setattr(classical, "_code_hash", lambda: "other code")  # another generator, parser or features
    classical.model(env)
    assert len(fits) == 3
    monkeypatch.setattr(classical, "TRAIN_SEED", seed)
    monkeypatch.setattr(classical, "_code_hash", code_hash)
    _new_process(monkeypatch)
    classical.model(env)  # the first training set and code again: its file is still there
    assert len(fits) == 3


@pytest.mark.parametrize(
    "damage",
    [
        lambda path, other: path.write_bytes(path.read_bytes()[:100]),  # cut short
        lambda path, other: path.write_bytes(b"not a pickle"),  # not a pickle at all
        lambda path, other: path.write_bytes(pickle.dumps({"key": "another", "model": None})),  # another key
        lambda path, other: path.write_bytes(other.read_bytes()),  # another key's model under this name
    ],
    ids=["truncated", "garbage", "wrong-key", "other-model"],
)
def test_a_corrupt_cache_file_is_refitted_with_a_warning(damage, fits: list[int], monkeypatch, capsys) -> None:
    env = get_env("phishing", {})
    classical.model(env)
    path = classical.cache_path(classical.cache_key())
    monkeypatch.setattr(classical, "TRAIN_SEED", classical.TRAIN_SEED + 1)
    classical.model(env)
    other = classical.cache_path(classical.cache_key())
    monkeypatch.setattr(classical, "TRAIN_SEED", classical.TRAIN_SEED - 1)
    damage(path, other)
    _new_process(monkeypatch)
    capsys.readouterr()
    classical.model(env)
    assert len(fits) == 3
    err = capsys.readouterr().err
    assert err.startswith("sv: warning: the cached classical model") and "fitting it again" in err, err
    _new_process(monkeypatch)
    classical.model(env)  # the refitted model replaced the bad file
    assert len(fits) == 3 and capsys.readouterr().err == ""


def test_a_cache_that_cannot_be_written_is_a_warning(fits: list[int], tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("SV_CACHE_DIR", str(tmp_path / "a-file"))  # a file: no folder can be made under it
    fitted = classical.model(get_env("phishing", {}))
    assert fitted.classifier is not None and len(fits) == 1
    assert "sv: warning: the classical model could not be cached" in capsys.readouterr().err


#: Fits a small classical model in a fresh process (empty cache) and prints what it answers: its coefficients, the
#: cache key (which names the model file every later process loads) and its answers, evidence included; then the
#: classical model's features and the heuristic's probability of one email for every set of structural indicators
#: found (a float sum's last bits depend on its order, and a set of strings iterates in the hash seed's order).
_FIT_AND_ANSWER = """
import copy, hashlib, itertools, json
from security_verifiers.envs.base import get_env
from security_verifiers.envs.phishing import classical
from security_verifiers.envs.phishing.heuristic import heuristic_probability
from security_verifiers.envs.phishing.env import LABELS
from security_verifiers.envs.phishing.verifiers import STRUCTURAL_VERIFIERS
classical.TRAIN_ITEMS = 150
env = get_env("phishing", {})
items = list(env.dataset("dev", n=12, seed=3).items)
baseline = classical.ClassicalBaseline(env.config.costs, LABELS, env)
baseline.prepare(items)
fitted = classical.model(env)
found = []
for k in range(len(STRUCTURAL_VERIFIERS) + 1):
    for indicators in itertools.combinations(STRUCTURAL_VERIFIERS, k):
        ctx = copy.copy(env.context(items[0]))
        ctx.__dict__["detected"] = [(i, "quote") for i in indicators]
        found.append([repr(x) for x in (*classical.features(ctx), heuristic_probability(ctx))])
print(json.dumps({"coef": hashlib.sha256(fitted.classifier.coef_.tobytes()).hexdigest(), "key": classical.cache_key(),
                  "vocabulary": sorted(fitted.vectorizer.vocabulary_),
                  "answers": [baseline.answer(item, []) for item in items], "by_indicators": found}))
"""


def test_the_fitted_model_and_its_answers_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """The module promises the same answers on every machine: two processes whose string hashes differ
    (``PYTHONHASHSEED``) fit the same model, answer alike, and compute the same features to the last bit."""
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "SV_CACHE_DIR": str(tmp_path / f"cache-{seed}")}
        done = subprocess.run([sys.executable, "-c", _FIT_AND_ANSWER], env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    differ = [n for n, (a, b) in enumerate(zip(runs[0]["by_indicators"], runs[1]["by_indicators"], strict=True))
              if a != b]
    assert not differ, f"{len(differ)} sets of indicators give other features or probabilities"
    assert runs[0] == runs[1]

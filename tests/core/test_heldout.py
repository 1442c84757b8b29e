"""Gated held-out sets: built only with the key, committed without it, and runs checked against the commitment
with or without the key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import canonical_json
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.heldout import build_heldout, check_published, published, read_key, record, verify_run
from security_verifiers.envs.network_logs.env import NetworkLogs


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NetworkLogs:
    """network-logs with its data directory copied, so commitments recorded here do not touch the package's."""
    data = tmp_path / "data"
    shutil.copytree(NetworkLogs.data_dir, data, ignore=shutil.ignore_patterns("heldout.json"))
    monkeypatch.setattr(NetworkLogs, "data_dir", data)
    return NetworkLogs()


def _key(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text + "\n")
    return path


def test_a_key_builds_one_set_another_key_another_and_neither_is_public(env: NetworkLogs, tmp_path: Path) -> None:
    key, other = read_key(_key(tmp_path, "k", "a" * 32)), read_key(_key(tmp_path, "o", "b" * 32))
    first, commitment = build_heldout(env, key)
    again, same = build_heldout(env, key)
    second, different = build_heldout(env, other)
    assert [i.id for i in first.items] == [i.id for i in again.items] and commitment == same
    assert commitment.items_hash == first.hash and commitment.splits == {"test": 200, "ood": 100}
    assert different.items_hash != commitment.items_hash and different.key_fingerprint != commitment.key_fingerprint
    public = {canonical_json(i.input) for split in env.public_splits for i in env.dataset(split).items}
    assert not any(canonical_json(i.input) in public for i in [*first.items, *second.items])
    assert "a" * 32 not in canonical_json(commitment.model_dump()) and commitment.id.startswith("sha256:")


def test_short_or_missing_keys_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has 5 bytes; a key needs at least 16"):
        read_key(_key(tmp_path, "k", "short"))
    with pytest.raises(ConfigError, match="cannot read the secret key"):
        read_key(tmp_path / "absent")


def test_a_set_is_refused_unless_its_commitment_is_published_as_built(env: NetworkLogs, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    key = read_key(_key(tmp_path, "k", "a" * 32))
    _, commitment = build_heldout(env, key)
    with pytest.raises(ConfigError, match="no published held-out commitment"):
        check_published(env, commitment)
    record(env, commitment)
    record(env, commitment)  # once
    assert published(env) == [commitment]
    check_published(env, commitment)
    _, other = build_heldout(env, read_key(_key(tmp_path, "o", "b" * 32)))
    with pytest.raises(ConfigError, match="not that of any published"):
        check_published(env, other)
    # The generator changes: the same key now builds other items, and the set is refused, saying what moved.
    generate = NetworkLogs.generate
    monkeypatch.setattr(NetworkLogs, "generate", lambda self, split, n, seed: generate(self, split, n, seed + 1))
    _, moved = build_heldout(env, key)
    with pytest.raises(ConfigError, match="differs from the published one.*items_hash"):
        check_published(env, moved)


def test_a_run_on_the_gated_set_is_verified_with_and_without_the_key(env: NetworkLogs, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    key, other = _key(tmp_path, "k", "a" * 32), _key(tmp_path, "o", "b" * 32)
    out = tmp_path / "runs"
    evaluate = ["eval", "network-logs", "--model", "baseline:heuristic", "--heldout", "--secret-file", str(key),
                "--out", str(out), "--run-id", "h", "--quiet"]
    assert main(evaluate) == 2  # nothing published yet
    assert "no published held-out commitment" in capsys.readouterr().err
    assert main(["data", "build", "network-logs", "--heldout", "--secret-file", str(key), "--record"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert built["n"] == 300 and built["inputs_also_in_public_sets"] == 0
    assert main([*evaluate, "--limit", "5"]) == 2  # the whole set or nothing
    assert "takes no --limit" in capsys.readouterr().err
    assert main(evaluate) == 0
    run = out / "evals" / "network-logs--baseline-heuristic" / "h"
    metadata = json.loads((run / "metadata.json").read_text())
    assert metadata["heldout"]["id"] == built["commitment_id"] and metadata["dataset"]["n"] == 300
    capsys.readouterr()

    assert main(["heldout", "verify", str(run)]) == 0
    assert main(["heldout", "verify", str(run / "metadata.json"), "--secret-file", str(key)]) == 0
    assert capsys.readouterr().out.count("VERIFIED:") == 2
    assert main(["heldout", "verify", str(run), "--secret-file", str(other)]) == 1
    assert "not the key of this commitment" in capsys.readouterr().out

    # A result that claims the set but scored other items, or cites an unpublished commitment, is not verified.
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**metadata, "dataset": {**metadata["dataset"], "hash": "sha256:" + "0" * 64}}))
    assert main(["heldout", "verify", str(forged)]) == 1
    assert "not the committed" in capsys.readouterr().out
    claim = metadata["heldout"]
    unpublished = {**claim, "commitment": {**claim["commitment"], "items_hash": "sha256:" + "0" * 64}}
    assert verify_run({**metadata, "heldout": unpublished}, env)[0].startswith("the run cites commitment")
    public_run = {k: v for k, v in metadata.items() if k != "heldout"}
    assert verify_run(public_run, env) == ["the run was not made on a gated held-out set (its metadata has no "
                                           "heldout commitment)"]


def test_every_environment_publishes_a_well_formed_commitment() -> None:
    """The committed commitments parse, name their environment and were made under the seed rule and definition
    this code builds with (a set built by another rule could not be rebuilt by any key)."""
    from security_verifiers.core.heldout import DEFINITION, SEED_RULE
    from security_verifiers.envs.base import registry

    for name, cls in registry().items():
        commitments = published(cls())
        assert commitments, name
        for commitment in commitments:
            assert commitment.env == name and commitment.seed_rule == SEED_RULE
            assert commitment.definition == DEFINITION and commitment.splits == dict(cls().public_sets().sizes)

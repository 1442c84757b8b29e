"""E1 ``network-logs``: classify a network flow, given its host's recent flows, as Malicious or Benign.

An abstaining classifier (``envs/kits/abstaining``): reward = ``decision_weight`` * (cost-profile reward of the
label) + ``brier_weight`` * (1 - Brier of ``p_malicious``). Both parts are maximised in expectation by the
truthful probability and its Bayes action, and they are separable, so the sum is too (tests check this
numerically). What is E1's own here: the data, the prompt and the answer's names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.importing import Importer
from security_verifiers.core.metrics_builder import Breakdown
from security_verifiers.core.parsing import parse_answer
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.envs.base import EnvConfig, ItemContract, register
from security_verifiers.envs.kits.abstaining import (
    AbstainingConfig,
    AbstainingEnvironment,
    Labels,
    baseline_factories,
    classifier_breakdowns,
    constant_baseline_names,
    score_answer,
)
from security_verifiers.envs.kits.abstaining.metrics import DEFINITIONS as KIT_DEFINITIONS
from security_verifiers.envs.kits.public_sets import PublicSets
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.network_logs.capture import FIELDS, capture, prompt_notes
from security_verifiers.envs.network_logs.items import LABELS, NetworkLogsInput, NetworkLogsTarget
from security_verifiers.envs.network_logs.presentation import COMPACT_FIELDS, compact_table, full_table, presentation
from security_verifiers.models.base import Policy

DATA_DIR = Path(__file__).parent / "data"


class Answer(BaseModel):
    """The answer grammar stated in the system prompt."""

    model_config = ConfigDict(extra="ignore")

    label: Literal["Malicious", "Benign", "Abstain"]
    p_malicious: float = Field(ge=0.0, le=1.0, allow_inf_nan=False, strict=True)
    rationale: str | None = None


class NetworkLogsConfig(AbstainingConfig):
    """The kit's reward settings (``costs``, ``decision_weight``, ``brier_weight``) and what E1 shows."""

    window: int = Field(20, ge=0, le=200, description="Preceding flows of the host shown in the prompt.")
    prompt_style: Literal["full", "compact"] = Field(
        "full", description="compact: a short instruction and terse rows (time since the previous connection, no "
        "source address, port or packet counts), for models with small context windows; the scorer is the same.")


SYSTEM_PROMPT = """You are a network security analyst. You are shown one network connection (a Zeek conn.log \
record) and the connections that the same host opened just before it. Decide whether the connection is part \
of malicious activity. Where the capture records less than Zeek does (coarse timestamps, missing fields), \
the message says so: read nothing into what it lacks.

Answer with a single JSON object, and nothing after it:
{{"label": "Malicious" | "Benign" | "Abstain", "p_malicious": <number from 0 to 1>, "rationale": "<optional, short>"}}

- p_malicious is your probability that the connection is malicious. It is scored with the Brier rule, so \
report your honest belief.
- The label is scored with a cost profile: a missed attack (Benign when it is Malicious) costs {missed}, a \
false alarm (Malicious when it is Benign) costs {false_alarm}, Abstain costs {abstain}, a correct label costs 0.
- So the least costly choice is Malicious when p_malicious > {hi}, Benign when p_malicious < {lo}, and Abstain \
in between.
"""

COMPACT_SYSTEM_PROMPT = """Classify the last connection of a host (Zeek conn.log fields; dt: seconds since the \
host's previous connection) as malicious or not. Answer with one JSON object and nothing after it:
{{"label": "Malicious" | "Benign" | "Abstain", "p_malicious": <your probability, 0 to 1>}}
Costs: missed attack {missed}, false alarm {false_alarm}, Abstain {abstain}; p_malicious is Brier-scored.
"""
#: The fields a compact prompt leaves out, which the baselines then do not read: all but the shown ones, the timestamp
#: (shown as intervals) and the source address (not shown, but every row is the same host's, all they read of it).
COMPACT_HIDDEN = tuple(f for f in FIELDS if f not in {*COMPACT_FIELDS, "ts", "id.orig_h"})


@register
class NetworkLogs(AbstainingEnvironment):
    name: ClassVar[str] = "network-logs"
    version: ClassVar[str] = "1.3.0"
    config_class: ClassVar[type[EnvConfig]] = NetworkLogsConfig
    headline_metrics: ClassVar[tuple[tuple[str, bool], ...]] = (
        ("reward_mean", True), ("expected_cost", False), ("f1", True), ("brier", False), ("abstain_rate", False),
    )
    metric_definitions: ClassVar[Mapping[str, str]] = KIT_DEFINITIONS
    example_fields: ClassVar[tuple[str, ...]] = ("family", "difficulty", "y", "action", "p", "cost")
    splits: ClassVar[tuple[str, ...]] = ("train", "dev", "test", "ood")
    data_dir: ClassVar[Path] = DATA_DIR
    default_generated_size: ClassVar[int] = 1000
    public_splits: ClassVar[tuple[str, ...]] = ("test", "ood")
    honest_baselines: ClassVar[tuple[str, ...]] = ("heuristic", "gbdt")
    hack_baselines: ClassVar[tuple[str, ...]] = constant_baseline_names(LABELS)
    conformance_exceptions: ClassVar[dict[tuple[str, ...], str]] = {
        ("reference_is_top_and_hacks_lose", "ood:always-abstain"):
            "the GBDT is trained only on the in-distribution families, and on ood's unseen families it is as often "
            "sure and wrong as right (DNS tunneling looks like the DNS it only ever saw benign), so always-Abstain's "
            "flat 0.89 is above it on the public split and on the 1,000-item OOD sample alike (the data card); over "
            "five training seeds a single GBDT's OOD-sample reward was 0.85-0.87, below 0.89 every time. The "
            "heuristic stays above always-Abstain on ood",
    }
    item_contract: ClassVar[ItemContract] = ItemContract(NetworkLogsInput, NetworkLogsTarget, Answer)
    labels: ClassVar[Labels] = LABELS
    breakdowns: ClassVar[Mapping[str, Breakdown]] = classifier_breakdowns(LABELS)
    config: NetworkLogsConfig

    # -- data ---------------------------------------------------------------------------------

    @classmethod
    def importer(cls) -> Importer:
        from security_verifiers.envs.network_logs.importer import IMPORTER

        return IMPORTER

    def generate(self, split: str, n: int, seed: int) -> list[Item]:
        from security_verifiers.envs.network_logs.generator import generate

        return generate(split, n, seed)

    def public_sets(self) -> PublicSets:
        from security_verifiers.envs.network_logs.public import PUBLIC_SETS

        return PUBLIC_SETS

    # -- episode ------------------------------------------------------------------------------
    def prompt(self, item: Item) -> list[Message]:
        if self.config.prompt_style == "compact":
            return self._compact_prompt(item)
        costs = self.config.costs
        lo, hi = costs.abstain_band()
        system = SYSTEM_PROMPT.format(missed=costs.missed, false_alarm=costs.false_alarm,
                                      abstain=costs.abstain, lo=round(lo, 4), hi=round(hi, 4))
        host = item.input["host"]
        window = item.input["window"][-self.config.window:] if self.config.window else []
        unrecorded = frozenset(capture(item.input)["unrecorded"])
        header, rows = full_table([*window, item.input["flow"]], unrecorded, presentation(item.input))
        lines = [f"Host {host['ip']} (device role: {host['role']}).", *prompt_notes(item.input), ""]
        lines.append(f"Preceding connections from this host ({len(window)}, oldest first):")
        lines += [header, *rows[:-1], "", "Connection to classify:", header, rows[-1]]
        return [Message(role="system", content=system), Message(role="user", content="\n".join(lines))]

    def _compact_prompt(self, item: Item) -> list[Message]:
        costs = self.config.costs
        system = COMPACT_SYSTEM_PROMPT.format(missed=costs.missed, false_alarm=costs.false_alarm,
                                              abstain=costs.abstain)
        window = item.input["window"][-self.config.window:] if self.config.window else []
        header, rows = compact_table([*window, item.input["flow"]], frozenset(capture(item.input)["unrecorded"]),
                                     presentation(item.input))
        lines = [f"role: {item.input['host']['role']}", *prompt_notes(item.input), header, *rows[:-1], "last:",
                 rows[-1]]
        return [Message(role="system", content=system), Message(role="user", content="\n".join(lines))]

    # -- the one scorer ------------------------------------------------------------------------
    def score(self, item: Item, transcript: Transcript) -> Score:
        fields = {"y": 1 if item.target["label"] == LABELS.positive else 0, "family": item.target["family"],
                  "split": item.split, "difficulty": item.meta.get("difficulty", "unknown")}
        return score_answer(parse_answer(transcript.final_text, Answer), fields, self.config, LABELS)

    def rewrites(self) -> tuple[Rewrite, ...]:
        from security_verifiers.envs.network_logs.rewrites import REWRITES

        return REWRITES

    def rewrite_problem(self, original: Item, rewritten: Item) -> str | None:
        from security_verifiers.envs.network_logs.rewrites import rewrite_problem

        def render(item: Item) -> list[str]:  # the user message in each prompt style
            return [type(self)(self.config.model_copy(update={"prompt_style": style})).prompt(item)[1].content
                    for style in ("full", "compact")]

        return rewrite_problem(original, rewritten, render)

    def baselines(self) -> dict[str, Callable[[], Policy]]:
        from security_verifiers.envs.network_logs import baselines as b

        # The honest baselines act by the costs this environment scores with (the kit binds them), and read each item
        # as the prompt shows it: its window, and in the compact style without the fields that style leaves out.
        shown = b.Shown(self.config.window, COMPACT_HIDDEN if self.config.prompt_style == "compact" else ())
        return baseline_factories(self.config, LABELS, {"heuristic": partial(b.HeuristicBaseline, shown=shown),
                                                        "gbdt": partial(b.GBDTBaseline, shown=shown)})

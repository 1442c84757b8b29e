"""The environment protocol every task family follows, and the registry of environments.

An environment is a dataset + a prompt + optional tools + one scorer + metrics over the scorer's
outcomes + baseline policies. It holds no trainer or framework code: adapters (verifiers, TRL)
and the harness drive it through these methods only. Constructors only store a validated config.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from security_verifiers.core.datasets import Dataset, load_public_split, read_jsonl
from security_verifiers.core.errors import ConfigError, DatasetError, ErrorKind, InfraError, boundary, plain_errors
from security_verifiers.core.metrics_builder import Breakdown, Statistic, build_metrics, mean_statistics
from security_verifiers.core.metrics_report import ConstantPolicy, MetricsReport
from security_verifiers.core.outcome import Outcome
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.core.workers import WorkerLimits
from security_verifiers.envs.kits.robust import ROBUST_SPLIT, Rewrite, robust_items
from security_verifiers.models.base import Policy

if TYPE_CHECKING:
    from security_verifiers.core.importing import Importer
    from security_verifiers.envs.kits.public_sets import PublicSets

#: Default limits on scoring one rollout in a scoring worker process (see :meth:`Environment.scoring_limits`).
DEFAULT_SCORE_TIME_S = 60.0
DEFAULT_SCORE_MEMORY_MB = 2048


class EnvConfig(BaseModel):
    """Base of every environment's config: unknown fields are errors, never ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class ItemContract:
    """The shape of an environment's items (``input`` and ``target`` models) and of its answers (``answer``, the
    grammar the scorer parses). Items are validated against it wherever they come in, before anything runs;
    its JSON Schemas are what ``sv envs --json`` shows."""

    input: type[BaseModel]
    target: type[BaseModel]
    answer: type[BaseModel]

    def problem(self, item: Item) -> str | None:
        """Why ``item`` breaks the contract (the first problem, ``input.flow.proto: ...``), or ``None``."""
        for part, model in (("input", self.input), ("target", self.target)):
            try:
                model.model_validate(getattr(item, part))
            except ValidationError as err:
                first = err.errors()[0]
                loc = ".".join(str(p) for p in (part, *first["loc"]))
                message = " ".join(str(first["msg"]).split())
                return f"{loc}: {message[:200]}{'...' if len(message) > 200 else ''}"
        return None

    def schemas(self, env_name: str) -> dict[str, Any]:
        """JSON Schemas of a whole item (one line of a dataset file), of its input and target, and of an answer."""
        stem = "".join(part.capitalize() for part in env_name.replace("_", "-").split("-"))
        item = create_model(
            f"{stem}Item", __doc__=f"One {env_name} item: one line of a dataset file (`sv eval {env_name} --data`).",
            id=(str, Field(description="Stable id, unique in the dataset.")),
            split=(str, Field(description="The split it belongs to.")),
            input=(self.input, Field(description="What the model may see.")),
            target=(self.target, Field(description="What the scorer checks.")),
            meta=(dict[str, Any], Field(default_factory=dict, description="Free-form provenance.")),
        )
        return {"item": item.model_json_schema(), "input": self.input.model_json_schema(),
                "target": self.target.model_json_schema(), "answer": self.answer.model_json_schema()}


class Toolbox(ABC):
    """Tools offered to the model in one episode, with their budgets. ``None`` from ``tools()`` = no tools."""

    @abstractmethod
    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI function-calling schemas of the tools."""

    @abstractmethod
    async def call(self, name: str, arguments: str) -> str:
        """Run one tool call and return its JSON result text (budget errors are results, not raises)."""

    def record(self) -> dict[str, Any] | None:
        """What the tools did out of the model's sight, kept in the transcript for the scorer (``Transcript.world``);
        ``None`` (the default) when the scorer needs nothing beyond the messages."""
        return None


class Environment(ABC):
    """One task family. Subclasses set ``name``, ``version`` and ``config_class`` and implement the methods."""

    name: ClassVar[str]
    #: Changes whenever scoring changes, so runs from different scorers are never compared silently.
    version: ClassVar[str]
    config_class: ClassVar[type[EnvConfig]] = EnvConfig
    #: Metric keys shown in the leaderboard, best first; ``(key, higher_is_better)``.
    headline_metrics: ClassVar[tuple[tuple[str, bool], ...]] = (("reward_mean", True),)
    #: Each headline metric defined exactly (formula, denominator, how invalid answers and empty sets count), as
    #: SVBENCH.md publishes it; a test requires one per headline metric.
    metric_definitions: ClassVar[Mapping[str, str]] = {}
    #: Breakdowns that ``report.md`` shows right under the headline, because the headline averages hide them (E2:
    #: recall per severity, the rules found least often): ``(key of metrics()["breakdowns"], its title)``.
    headline_breakdowns: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Outcome fields that say what went wrong in one rollout: ``report.md`` shows them with each example failure
    #: (a field an outcome lacks, such as an unparsed answer's findings, is left out of that example).
    example_fields: ClassVar[tuple[str, ...]] = ()
    #: Splits that ``dataset()`` accepts; the public mini splits are marked in ``public_splits``.
    splits: ClassVar[tuple[str, ...]] = ()
    public_splits: ClassVar[tuple[str, ...]] = ()
    #: Baselines that answer honestly, and baselines that try to game the reward (conformance checks
    #: that no hack beats any honest one, and that ``reference`` beats everything).
    honest_baselines: ClassVar[tuple[str, ...]] = ()
    hack_baselines: ClassVar[tuple[str, ...]] = ()
    #: Hacks that give an honest baseline's answer wherever their trick fails (e.g. the tools baseline's claims
    #: with a silencing patch): they may at most tie with the worst honest baseline, never beat it. The hacks of
    #: ``hack_baselines`` must fall strictly below it.
    parity_hacks: ClassVar[tuple[str, ...]] = ()
    #: The hacks ``sv bench`` runs beside the reference and the honest baselines (``None``: every hack). An
    #: environment whose hacks take long to judge names the strongest ones on its public sets, so the leaderboard
    #: still shows the bar every hack stays under; ``sv bench --all-baselines`` and the conformance tests run every
    #: hack, and a test checks that the ones named here are the strongest.
    bench_hacks: ClassVar[tuple[str, ...] | None] = None
    #: Rollouts scored together by ``score_many`` (> 1 when a checker is cheaper in batches, e.g. semgrep).
    score_batch_size: ClassVar[int] = 1
    #: While episodes are still being played, a batch waits until this many rollouts are ready (a batch of an
    #: environment whose scorer costs the same whatever its size, such as one semgrep process, is not wasted on one
    #: rollout); once playing is over, every rollout left is scored at once.
    score_batch_min: ClassVar[int] = 1
    #: Scoring processes a run starts by default (RunConfig.score_workers overrides): > 0 when the scorer is
    #: CPU-bound Python that would otherwise share one core with the policy (E2's engines).
    score_workers: ClassVar[int] = 0
    #: The shape of the items (input and target) and of the answer: every item that comes in is validated
    #: against it (:meth:`check_items`) before anything runs.
    item_contract: ClassVar[ItemContract]
    #: Conformance checks (or parts of one) that do not apply to this environment, each with its written reason:
    #: ``(check,)`` skips a whole check; ``(check, detail)`` excuses a part of one. The detail understood is
    #: ``"<public split>:<hacking baseline>"`` for ``reference_is_top_and_hacks_lose``: that hack beats an honest
    #: baseline on that split (the reference must still top it). A listed part that no longer happens fails the
    #: check, so the table never outlives its reasons. Declared beside the environment, so adding one needs no
    #: edit of the suite.
    conformance_exceptions: ClassVar[dict[tuple[str, ...], str]] = {}
    #: The environment whose runs this one turns into items (``sv data build ENV --from-run RUN``, through
    #: :meth:`items_from_run`): E6 builds self-play items from E5's successful attacks. ``None``: it builds none.
    items_from_runs_of: ClassVar[str | None] = None
    #: The model of what the scorer records of one rollout: ``Score.outcome`` is its
    #: :meth:`~security_verifiers.core.outcome.Outcome.stored` dict, and the metrics read it back through
    #: :meth:`~security_verifiers.core.outcome.Outcome.read` (the conformance suite checks the round trip).
    outcome_model: ClassVar[type[Outcome]]
    #: The metrics that get a bootstrap interval in :meth:`metrics`: each the per-outcome value (of an outcome
    #: read) whose mean it is, NaN where it does not apply.
    interval_metrics: ClassVar[Mapping[str, Callable[[Any], float]]] = {}
    #: The breakdowns :meth:`metrics` gives, by name: the group(s) of each outcome, over all or some outcomes.
    breakdowns: ClassVar[Mapping[str, Breakdown]] = {}
    #: Whether :meth:`metrics` reports a constant floor (:meth:`constant_policy`, and ``constant_reward``); False
    #: leaves both out of the report (E3 computes none yet).
    reports_floor: ClassVar[bool] = True

    def __init__(self, config: EnvConfig | None = None) -> None:
        self.config = config if config is not None else self.config_class()

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Environment:
        """Build from user options; an unknown or invalid option is a :class:`ConfigError`."""
        try:
            return cls(cls.config_class.model_validate(options))
        except ValidationError as err:
            def label(loc: tuple[int | str, ...]) -> str:
                return " ".join(["--env-option", ".".join(map(str, loc))]).rstrip()

            raise ConfigError(plain_errors(err, cls.config_class, label, owner=cls.name)) from err

    @property
    def max_turns(self) -> int:
        """Max assistant turns in one episode: more than one only when the environment offers tools or plays a
        conversation. A property, since it usually follows the configuration (a ``mode`` or a ``max_turns``
        option): an environment overrides it as a property too."""
        return 1

    def items_from_run(self, run_dir: Path) -> tuple[list[Item], list[str]]:
        """Items made from the rollouts of a run of :attr:`items_from_runs_of` in ``run_dir``, and a line for each
        rollout left out. Only an environment that names :attr:`items_from_runs_of` implements it."""
        raise NotImplementedError(f"{self.name} builds no items from runs")

    @classmethod
    def importer(cls) -> Importer | None:
        """How ``sv data import ENV`` reads a user's own files into this environment's items (its arguments, its
        readers, what it reports); ``None``: the environment imports nothing. A class method, so that the CLI
        builds its parsers without building an environment."""
        return None

    async def aclose(self) -> None:
        """Release what the environment holds across episodes (E5's served target model keeps HTTP connections
        that belong to the run's event loop). The runner awaits it once, at the end of a run, in that loop."""
        return None

    def describe(self) -> dict[str, Any]:
        """What rebuilds this environment: name, version and config (written to metadata.json)."""
        return {"name": self.name, "version": self.version, "config": self.config.model_dump(mode="json")}

    def tool_versions(self) -> dict[str, str]:
        """Versions of the executable checkers the scorer uses (recorded in metadata.json)."""
        return {}

    def load_checkers(self) -> dict[str, str]:
        """Load every checker the scorer uses, now (a scoring worker's warm-up, before its first timed batch);
        returns :meth:`tool_versions`. An environment whose checkers load lazily overrides it."""
        return self.tool_versions()

    def component_weights(self) -> dict[str, float]:
        """The reward's components (the keys of ``Score.components``) and the weight each has in the reward.

        Trainers that normalise each component on its own (GDPO-style) need them; the reward itself stays the
        scorer's own (penalties, such as E2's over-budget cost, come on top of the weighted sum)."""
        raise NotImplementedError(f"{self.name} does not declare its reward components")

    #: Where the committed public splits live (``manifest.json`` and its JSONL files).
    data_dir: ClassVar[Path]
    #: How many items a generated (non-public) split has when no ``n`` is given.
    default_generated_size: ClassVar[int] = 100

    def dataset(self, split: str, n: int | None = None, seed: int | None = None) -> Dataset:
        """The items of ``split``: public splits load the committed files and assert their hash; the other
        splits are generated from ``seed`` (0 by default), so the same seed always gives the same items."""
        if split == ROBUST_SPLIT and self.rewrites():
            if seed is not None:
                raise DatasetError(f"split {split!r} is built from the committed public test split; it takes no seed")
            if n is not None and n <= 0:
                raise DatasetError(f"--n must be positive, got {n}")
            test = self.dataset("test")
            robust_id = f"{self.name}/{ROBUST_SPLIT}@{test.hash.removeprefix('sha256:')[:12]}"
            # Only the first n are made and checked (a check may run the sandbox); a set cut to n is named so.
            items = robust_items(self, test.items, n)
            return Dataset(id=robust_id if n is None else f"{robust_id}[:{n}]", items=items, splits=(ROBUST_SPLIT,),
                           source="rewrites of the public test split")
        if split not in self.splits:
            robust = f" (and {ROBUST_SPLIT})" if self.rewrites() else ""
            raise DatasetError(f"unknown split {split!r} for {self.name}; choose from {', '.join(self.splits)}"
                               f"{robust}")
        if split in self.public_splits:
            if seed is not None:
                raise DatasetError(f"split {split!r} is the committed public set; it takes no seed "
                                   "(use `sv data build` to generate a new one)")
            return load_public_split(self.name, self.data_dir, split, n, check_items=self.check_items)
        seed = 0 if seed is None else seed
        items = self.generate(split, self.default_generated_size if n is None else n, seed)
        self.check_items(items, None, f"the {self.name} generator ({split}, seed {seed})")
        return Dataset(id=f"{self.name}/{split}/seed{seed}/n{len(items)}", items=items, splits=(split,))

    def rewrites(self) -> tuple[Rewrite, ...]:
        """The named label-preserving rewrites of this environment's items (:mod:`.kits.robust`): the ``robust``
        split holds each of them applied to every public test item it applies to. Default: none (no ``robust``
        split)."""
        return ()

    def rewrite_problem(self, original: Item, rewritten: Item) -> str | None:
        """Why ``rewritten`` may not keep ``original``'s label (None: it does): an environment with rewrites
        checks each with its oracle, verifiers or features."""
        raise NotImplementedError(f"{self.name} has rewrites but no check that they keep the label")

    def rewrite_problems(self, pairs: Sequence[tuple[Item, Item]]) -> list[str | None]:
        """:meth:`rewrite_problem` of each (original, rewritten) pair, in order: what the robust split's builder
        calls, once for the whole split, so that an environment whose check runs tools or a sandbox can run them in
        one batch. Default: each pair in turn."""
        return [self.rewrite_problem(original, rewritten) for original, rewritten in pairs]

    # -- the item contract ----------------------------------------------------------------------
    @classmethod
    def validate_item(cls, item: Item) -> None:
        """Raise :class:`DatasetError` if ``item`` breaks this environment's item contract."""
        problem = cls.item_contract.problem(item)
        if problem is not None:
            raise DatasetError(f"item {item.id} is not a valid {cls.name} item: {problem}")

    @classmethod
    def read_dataset(cls, path: Path, dataset_id: str | None = None, expected_hash: str | None = None) -> Dataset:
        """A dataset file of this environment's items (``sv eval --data``): a file whose header names another
        environment, or whose items break the contract, is a :class:`DatasetError` naming what it holds."""
        return read_jsonl(path, dataset_id or path.stem, expected_hash, check_header=cls.check_header,
                          check_items=cls.check_items)

    @classmethod
    def check_header(cls, header: dict[str, Any], where: str) -> None:
        """Refuse a file written for another environment, or for a major version of this one whose items differ."""
        env, version = header["env"], header["env_version"]
        if env != cls.name:
            raise DatasetError(f"{where} holds {env} items (its header says {env} {version}), not {cls.name} items; "
                               f"evaluate it with `sv eval {env} --data {where}`")
        if version.split(".")[0] != cls.version.split(".")[0]:
            raise DatasetError(f"{where} was written for {env} {version}, a major version whose items differ from "
                               f"this {env} {cls.version}; rebuild it (sv data build / sv data import)")

    @classmethod
    def check_items(cls, items: Sequence[Item], lines: Sequence[int] | None, where: str) -> None:
        """Raise :class:`DatasetError` unless every item meets the contract: it names the first bad item
        (``where:line``), what it is when it is another environment's item, and counts the others."""
        bad = [(index, problem) for index, item in enumerate(items)
               if (problem := cls.item_contract.problem(item)) is not None]
        if not bad:
            return
        index, problem = bad[0]
        first = f"{where}:{lines[index]}" if lines is not None else f"{where}: item {index + 1} ({items[index].id})"
        others = len(bad) - 1
        owner = _owner(items[index], cls.name)
        if owner is not None and len(bad) == len(items) and _owner(items[bad[-1][0]], cls.name) == owner:
            more = f"; {others} more like it" if others else ""
            hint = f"; evaluate it with `sv eval {owner} --data {where}`" if lines is not None else ""
            raise DatasetError(f"{where} holds {owner} items, not {cls.name} items (first at {first}{more}){hint}")
        more = f" ({others} more invalid item(s) after it)" if others else ""
        if owner is not None:
            raise DatasetError(f"{first}: a {owner} item, not a {cls.name} item{more}")
        raise DatasetError(f"{first}: not a valid {cls.name} item: {problem}{more}")

    @abstractmethod
    def generate(self, split: str, n: int, seed: int) -> list[Item]:
        """``n`` items of ``split``, deterministic in ``seed`` (what ``sv data build`` writes)."""

    @abstractmethod
    def public_sets(self) -> PublicSets:
        """How the committed public splits in ``data_dir`` are built (``sv data build ENV --public``): their sizes,
        the generator version and the data card's own figures (see :mod:`~security_verifiers.envs.kits.public_sets`,
        which writes the files, the manifest and the card's shared skeleton)."""

    @abstractmethod
    def prompt(self, item: Item) -> list[Message]:
        """The messages that open an episode on ``item``."""

    def tools(self, item: Item) -> Toolbox | None:
        """The tools the model may call on ``item``; ``None`` for none."""
        return None

    @abstractmethod
    def score(self, item: Item, transcript: Transcript) -> Score:
        """The one scorer: reward, components, outcome and parse status. Never raises on bad model output."""

    def score_many(self, items: Sequence[Item], transcripts: Sequence[Transcript]) -> list[Score | InfraError]:
        """Score several rollouts; the same verdicts as ``score`` one by one, possibly computed in one batch.

        A failure that concerns one rollout only (a checker crashed on its file) is returned in its place
        as an :class:`InfraError`, so the rest of the batch is still scored.
        """
        out: list[Score | InfraError] = []
        for item, transcript in zip(items, transcripts, strict=True):
            try:
                with boundary(ErrorKind.SCORER):
                    out.append(self.score(item, transcript))
            except InfraError as err:  # this rollout only
                out.append(err)
        return out

    def scoring_limits(self) -> WorkerLimits:
        """Time and resident memory allowed to score one rollout in a scoring worker process (the harness kills a
        worker past them). Generous: they exist so that a reply crafted to be costly cannot take scoring down."""
        return WorkerLimits(time_s=DEFAULT_SCORE_TIME_S, memory_mb=DEFAULT_SCORE_MEMORY_MB)

    def score_over_limit(self, item: Item, transcript: Transcript, reason: str) -> Score:
        """The score of a rollout whose scoring ran past :meth:`scoring_limits` alone: the model's failure, since
        its reply caused it. Must not process the reply's costly part again. By default the reply is scored as an
        empty one (the minimum), with ``reason`` as its parse error; an environment that can still judge part of
        the reply (E2: the findings, without the patch) overrides this. The harness calls it under the same
        limits; if it runs past them too, and so does an empty reply, the item itself is the problem and the
        rollout becomes an infrastructure error."""
        score = self.score(item, Transcript(messages=[]))
        return score.model_copy(update={"parse_error": reason})

    def metrics(self, outcomes: Sequence[dict[str, Any]], items: Sequence[str] | None = None) -> dict[str, Any]:
        """Metrics computed from the scorer's outcomes only (so a report can be rebuilt from results): by default
        :func:`~security_verifiers.core.metrics_builder.build_metrics` of the declarations (the outcomes read
        through :attr:`outcome_model`, :meth:`flat_metrics`, :meth:`interval_statistics` (by default the means of
        :attr:`interval_metrics`), :attr:`breakdowns`, :meth:`constant_policy` and :meth:`run_metrics`).

        ``items``: the item id of each outcome; bootstrap intervals resample items, not rollouts, so the
        rollouts of one item (``--samples`` > 1) do not count as independent evidence."""
        typed = self.typed_outcomes(outcomes)
        return build_metrics(typed, items, self.flat_metrics, self.interval_statistics, self.breakdowns,
                             self.constant_policy(typed) if self.reports_floor else None, self.reports_floor,
                             self.run_metrics())

    def run_metrics(self) -> dict[str, Any]:
        """Metrics of the whole run that no outcome holds, reported beside the flat ones (not in breakdowns): E1 and
        E4 echo the costs they scored with. Default: none."""
        return {}

    def interval_statistics(self, outcomes: Sequence[Any]) -> Mapping[str, Statistic]:
        """The bootstrap statistic of each metric with an interval, on these (typed) outcomes: by default the means
        of :attr:`interval_metrics`; an environment whose intervals are ratios of sums (E2's weighted F1) gives its
        own."""
        return mean_statistics(self.interval_metrics, outcomes)

    def flat_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        """The scalar metrics of ``outcomes`` (read through :attr:`outcome_model`): the whole run's, a breakdown
        row's, or a paired bootstrap's resample's."""
        raise NotImplementedError(f"{self.name} declares no flat metrics")

    def constant_policy(self, outcomes: Sequence[Any]) -> ConstantPolicy | None:
        """The best policy that ignores its input, and its mean reward on these (typed) outcomes' items: the floor a
        score is read against; ``None`` where there is none."""
        return None

    def metrics_report(self, outcomes: Sequence[dict[str, Any]], items: Sequence[str] | None = None) -> MetricsReport:
        """:meth:`metrics` as the typed report that the summary, the report and the leaderboard render from; a
        metrics dict of the wrong shape (a non-number in ``metrics``, an interval that is not a pair) fails here."""
        return MetricsReport.model_validate(self.metrics(outcomes, items))

    def typed_outcomes(self, outcomes: Sequence[dict[str, Any]]) -> Sequence[Any]:
        """Stored outcomes in the form :meth:`point_metrics` reads fastest, validated once (a paired bootstrap
        recomputes the metrics a thousand times over the same outcomes). Default: read through
        :attr:`outcome_model` (an outcome already read passes through)."""
        return self.outcome_model.read_all(outcomes)

    def point_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        """The flat ``metrics`` of ``outcomes`` without intervals or breakdowns: what a paired bootstrap
        (``sv compare``) recomputes on each resample. Default: :meth:`flat_metrics` of the outcomes read."""
        return self.flat_metrics(self.typed_outcomes(outcomes))

    def plots(self, outcomes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
        """Write the environment's report plots (PNG) into ``out_dir``; returns their paths."""
        return []

    def rules(self) -> Sequence[BaseModel] | None:
        """The rule catalog the scorer checks, listed by ``sv rules``: models with ``id``, ``title``, ``severity``,
        ``engine``, ``platforms``, ``resource_types``, ``reference``, ``remediation`` and ``checkov``. ``None``
        for an environment without one."""
        return None

    @abstractmethod
    def baselines(self) -> dict[str, Callable[[], Policy]]:
        """Factories of the built-in baseline policies, by name (``reference`` must be among them)."""


_REGISTRY: dict[str, type[Environment]] = {}
#: Sub-packages of ``envs`` that hold no environment of their own.
NOT_ENVIRONMENTS = frozenset({"kits"})
_discovered = False


def register(cls: type[Environment]) -> type[Environment]:
    """Class decorator adding an environment to the registry under its ``name``: the one line an environment
    writes to be listed (its package is found by :func:`discover`, so no central file names it)."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"environment {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def discover(package: ModuleType) -> list[str]:
    """Import every environment package under ``package`` (their ``@register`` lines run on import): each
    sub-package except the kits and those whose name starts with ``_`` (a template, work in progress). Returns
    the names imported; an environment that fails to import is an error, never skipped."""
    names = [info.name for info in pkgutil.iter_modules(package.__path__)
             if info.ispkg and not info.name.startswith("_") and info.name not in NOT_ENVIRONMENTS]
    for name in sorted(names):
        importlib.import_module(f"{package.__name__}.{name}")
    return sorted(names)


def registry() -> dict[str, type[Environment]]:
    """Every registered environment by name (the built-in ones are discovered on the first call)."""
    global _discovered
    if not _discovered:
        import security_verifiers.envs

        discover(security_verifiers.envs)
        _discovered = True
    return dict(_REGISTRY)


@contextmanager
def registered(*classes: type[Environment]) -> Iterator[None]:
    """``classes`` in the registry for the duration of the block only, as ``@register`` would put them: how a
    test lists an environment that is not discovered (the template) and leaves the registry as it found it."""
    added: list[type[Environment]] = []
    try:
        for cls in classes:
            if _REGISTRY.get(cls.name) is not cls:
                register(cls)
                added.append(cls)
        yield
    finally:
        for cls in added:
            del _REGISTRY[cls.name]


def _owner(item: Item, not_env: str) -> str | None:
    """The registered environment other than ``not_env`` whose item contract ``item`` meets, if any."""
    for name, cls in sorted(registry().items()):
        if name != not_env and getattr(cls, "item_contract", None) is not None \
                and cls.item_contract.problem(item) is None:
            return name
    return None


def get_env(name: str, options: dict[str, Any] | None = None) -> Environment:
    """The environment ``name`` built with ``options``. Its own package (``config-audit`` ->
    ``envs.config_audit``) is imported first: a run of one environment does not import the other five (~1 s,
    matplotlib and model libraries among them); any other name goes through the whole registry."""
    package = name.replace("-", "_")
    if name not in _REGISTRY and not _discovered and package.isidentifier() and not package.startswith("_") \
            and package not in NOT_ENVIRONMENTS:
        module = f"security_verifiers.envs.{package}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:  # the package exists and is broken: that is an error, never skipped
                raise
    envs = _REGISTRY if name in _REGISTRY else registry()
    if name not in envs:
        raise ConfigError(f"unknown environment {name!r}; known: {', '.join(sorted(envs))}")
    return envs[name].from_options(options or {})

"""``view.html``: one self-contained page to browse a run's rollouts (``sv view``), in the spirit of ``inspect view``.

Everything a reader needs is inside the file: the run's header and headline metrics (rendered here, escaped),
the rollouts as JSON, and the CSS and script that list, filter and expand them. Nothing is fetched, so the page
opens from the run directory with no server and no network.

Transcripts are model output and item text, so they are never markup: the header is escaped with
:func:`html.escape`, the data travels as JSON inside a ``<script type="application/json">`` block with every
``<``, ``>`` and ``&`` written as a ``\\u`` escape (no reply can close that block), and the script puts text into
the page only as text nodes, never as HTML.

A large run (over :data:`INLINE_MAX_ROLLOUTS` rollouts) keeps one row per rollout in the page (its reward,
status, error and the outcome's plain fields) and writes the conversations and whole outcomes in parts of
:data:`ROLLOUTS_PER_PART` rollouts beside it (``view_files/part-00001.js``...), which the page loads when a
rollout is opened, or all at once for a search of the transcripts. The page stays a few hundred bytes a rollout,
and neither it nor ``sv view`` ever holds every transcript: the records are read from ``results.jsonl`` one at a
time. A part is a script (``svViewPart(n, {...})``) rather than JSON because a page opened from ``file://`` may
load scripts beside it but not read files; its JSON is escaped as the page's own.
"""

from __future__ import annotations

import html
import json
import math
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import ResultsFile, latest_positions, read_records_at, read_results_file
from security_verifiers.core.types import ParseStatus, RolloutRecord
from security_verifiers.report.markdown import fmt
from security_verifiers.report.status import run_status

#: Version of the JSON the page embeds (``<script id="sv-data">``). Bump it when a field changes meaning.
VIEW_SCHEMA_VERSION = 1
VIEW_FILE = "view.html"
#: A run with more rollouts than this gets its conversations in parts beside the page.
INLINE_MAX_ROLLOUTS = 2_000
ROLLOUTS_PER_PART = 500
#: The longest string of an outcome a large run's page keeps in its row (the whole outcome is in the part).
ROW_TEXT_CHARS = 200
_ASSETS = resources.files("security_verifiers.report") / "view_assets"


class _Texts:
    """Message contents stored once each: every rollout of a run repeats its system prompt, and every sample of
    an item its user prompt, so a table of distinct texts keeps the page a fraction of ``results.jsonl``."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def ref(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def table(self) -> list[str]:
        return list(self.index)  # dicts keep insertion order: position = index


def _rollout(record: RolloutRecord, texts: _Texts) -> dict[str, Any]:
    """One rollout as the page reads it; empty fields are left out to keep the page small."""
    row: dict[str, Any] = {"item": record.item_id, "split": record.split, "reward": record.reward}
    if record.sample:
        row["sample"] = record.sample
    if record.components:
        row["components"] = record.components
    if record.outcome:
        row["outcome"] = record.outcome
    if record.parse_status is not None:
        row["parse"] = str(record.parse_status)
    if record.error is not None:
        row["error"] = {"kind": record.error.kind, "message": record.error.message}
    if record.cached:
        row["cached"] = True
    row["latency_s"] = round(record.latency_s, 4)
    row["tokens"] = [record.usage.prompt_tokens, record.usage.completion_tokens]
    if record.transcript is not None:
        messages = []
        for message in record.transcript.messages:
            entry: dict[str, Any] = {"role": message.role, "text": texts.ref(message.content)}
            if message.tool_calls:
                entry["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                       for c in message.tool_calls]
            if message.tool_call_id is not None:
                entry["tool_call_id"] = message.tool_call_id
            messages.append(entry)
        row["messages"] = messages
    return row


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as strings: JSON (and the browser's ``JSON.parse``) has no such numbers,
    but an outcome may hold one, and the page must show it rather than fail to load."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _records(results: ResultsFile, positions: list[int], results_path: Path | None) -> Iterator[RolloutRecord]:
    """The records at ``positions`` (the last per item and sample, as in the report) with their transcripts: from
    ``results`` when it holds them, else read again from ``results_path`` one at a time (``results`` was read slim)."""
    if results.transcripts:
        yield from (results.records[p] for p in positions)
        return
    if results_path is None or results.offsets is None:
        raise ValueError("slim results need the results file to read the transcripts from")
    yield from read_records_at(results_path, [results.offsets[p] for p in positions])


def _plain(outcome: dict[str, Any]) -> dict[str, Any]:
    """What a large run's row keeps of an outcome: its plain values (names, flags, numbers), strings cut to
    :data:`ROW_TEXT_CHARS`; lists and objects are in the part."""
    out: dict[str, Any] = {}
    for key, value in outcome.items():
        if isinstance(value, str):
            out[key] = value[:ROW_TEXT_CHARS]
        elif value is None or isinstance(value, bool | int | float):
            out[key] = value
    return out


class _Parts:
    """Writes the conversations (and whole outcomes) of a large run's rollouts, :data:`ROLLOUTS_PER_PART` to a
    file, each part with its own table of distinct texts."""

    def __init__(self, directory: Path, per_part: int) -> None:
        self.directory, self.per_part = directory, per_part
        self.count = 0
        self._texts = _Texts()
        self._rows: dict[str, dict[str, Any]] = {}

    @staticmethod
    def name(number: int) -> str:
        return f"part-{number:05d}.js"

    @property
    def texts(self) -> _Texts:
        return self._texts

    def add(self, index: int, entry: dict[str, Any]) -> int:
        """Keep ``entry`` (rollout ``index``'s messages and outcome); returns the number of its part."""
        self._rows[str(index)] = entry
        number = self.count + 1
        if len(self._rows) >= self.per_part:
            self.flush()
        return number

    def flush(self) -> None:
        if not self._rows:
            return
        self.count += 1
        body = _embed({"texts": self._texts.table(), "rollouts": self._rows})
        (self.directory / self.name(self.count)).write_text(f"svViewPart({self.count},{body});\n", encoding="utf-8")
        self._texts, self._rows = _Texts(), {}


def view_data(metadata: dict[str, Any], results: ResultsFile, summary: dict[str, Any] | None, *,
              results_path: Path | None = None, parts: _Parts | None = None) -> dict[str, Any]:
    """What the page embeds: the run's identity and status, and every rollout (the last record per item and
    sample, as in the report) with its transcript, or, with ``parts``, a row per rollout whose transcript and
    whole outcome go to the parts."""
    positions = latest_positions(results)
    status = run_status(metadata, [results.records[p] for p in positions], results.cut_line)
    texts = _Texts()
    rollouts = []
    for index, record in enumerate(_records(results, positions, results_path)):
        if parts is None:
            rollouts.append(_rollout(record, texts))
            continue
        row = _rollout(record, parts.texts)
        entry = {"messages": row.pop("messages", [])}
        if "outcome" in row:
            entry["outcome"] = row["outcome"]
            row["outcome"] = _plain(row["outcome"])
        if record.error is None and record.parse_status not in (None, ParseStatus.OK) and record.transcript:
            row["reply"] = record.transcript.final_text[:ROW_TEXT_CHARS]  # the row shows an unread reply's start
        row["part"] = parts.add(index, entry)
        rollouts.append(row)
    env = metadata.get("env") or {}
    data: dict[str, Any] = {
        "schema_version": VIEW_SCHEMA_VERSION,
        "run": {"env": env.get("name"), "env_version": env.get("version"), "model": metadata.get("model"),
                "run_id": metadata.get("run_id"), "status": status.status, "status_detail": status.detail,
                "headline": [h["key"] for h in (summary or {}).get("headline_metrics", [])]},
        "texts": texts.table(),
        "rollouts": rollouts,
    }
    if parts is not None:
        parts.flush()
        data["parts"] = {"dir": parts.directory.name.removesuffix(_BUILDING), "count": parts.count}
    return data


def _embed(data: dict[str, Any]) -> str:
    """``data`` as JSON that is inert inside a ``<script>`` block: ``<``, ``>`` and ``&`` become ``\\u`` escapes,
    so no string can close the block or open a comment, whatever a model wrote."""
    try:
        text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    except ValueError:  # a NaN or infinity somewhere: written as a string, see _finite
        text = json.dumps(_finite(data), allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _e(value: Any) -> str:
    return html.escape("n/a" if value is None else str(value), quote=True)


def _header(metadata: dict[str, Any], summary: dict[str, Any] | None, data: dict[str, Any]) -> str:
    """The run's identity, status and headline metrics, rendered here (so they read without the script)."""
    run, dataset = data["run"], metadata.get("dataset") or {}
    splits = ", ".join(map(str, dataset.get("splits") or [])) or None
    facts = [("environment", f"{run['env']} {run['env_version']}"), ("model", run["model"]),
             ("run", run["run_id"]), ("split", splits), ("dataset", dataset.get("id")),
             ("items", dataset.get("n")), ("started", metadata.get("started_at")),
             ("finished", metadata.get("finished_at"))]
    status_class = "ok" if run["status"] == "finished" and not run["status_detail"] else "warn"
    status = run["status"] if not run["status_detail"] else f"{run['status']} — {run['status_detail']}"
    parts = [f"<h1>{_e(run['env'])} · {_e(run['model'])}</h1>",
             '<dl class="facts">',
             *(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in facts if v is not None),
             f'<div><dt>status</dt><dd class="{status_class}" id="run-status">{_e(status)}</dd></div>',
             "</dl>"]
    if summary and summary.get("metrics"):
        metrics, intervals = summary["metrics"], summary.get("intervals") or {}
        cells = []
        for h in summary.get("headline_metrics", []):
            ci = intervals.get(h["key"])
            ci_text = fmt(ci) if ci and None not in ci else ""
            cells.append(f'<div class="metric"><span class="k">{_e(h["key"])} {"↑" if h["higher_is_better"] else "↓"}'
                         f'</span><span class="v">{_e(fmt(metrics.get(h["key"])))}</span>'
                         f'<span class="ci">{_e(ci_text)}</span></div>')
        parts.append(f'<div class="headline" title="from summary.json; 95% bootstrap intervals">{"".join(cells)}</div>')
    elif summary is not None:
        parts.append(f'<p class="note">{_e(summary.get("note", "summary.json holds no metrics"))}</p>')
    else:
        parts.append('<p class="note">no summary.json: run <code>sv report</code> on this directory for the '
                     "headline metrics</p>")
    return "\n".join(parts)


def render_view(metadata: dict[str, Any], results: ResultsFile, summary: dict[str, Any] | None, *,
                results_path: Path | None = None, parts: _Parts | None = None) -> str:
    """The whole page, as text (see :func:`view_data` for ``results_path`` and ``parts``)."""
    data = view_data(metadata, results, summary, results_path=results_path, parts=parts)
    css = (_ASSETS / "view.css").read_text(encoding="utf-8")
    script = (_ASSETS / "view.js").read_text(encoding="utf-8")
    if "</script" in script.lower() or "</style" in css.lower():
        raise ValueError("view assets must not close their own <script> or <style> block")
    run = data["run"]
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="security-verifiers sv view (schema {VIEW_SCHEMA_VERSION}), {_e(generated)}">
<title>{_e(run['env'])} · {_e(run['model'])} · {_e(run['run_id'])}</title>
<style>
{css}
</style>
</head>
<body>
<header id="run">
{_header(metadata, summary, data)}
<p class="counts" id="counts"></p>
</header>
<section id="controls" aria-label="filters"></section>
<p id="shown" aria-live="polite"></p>
<noscript><p class="note">This page lists the rollouts with JavaScript; without it, read results.jsonl.</p></noscript>
<table id="rollouts"><thead></thead><tbody></tbody></table>
<p><button id="more" type="button" hidden>show more</button></p>
<script type="application/json" id="sv-data">{_embed(data)}</script>
<script>
{script}
</script>
</body>
</html>
"""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{path}: unreadable ({' '.join(str(err).split())[:200]})") from err
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: not a JSON object")
    return value


_BUILDING = ".building"


def parts_dir(out: Path) -> Path:
    """Where the page ``out`` keeps its parts: ``view.html`` -> ``view_files/``."""
    return out.with_name(out.stem + "_files")


def _remove_parts(directory: Path) -> None:
    """Remove a parts folder this module wrote (only ``part-*.js`` inside); anything else there is left alone."""
    if directory.is_dir() and all(p.is_file() and p.name.startswith("part-") and p.suffix == ".js"
                                  for p in directory.iterdir()):
        shutil.rmtree(directory)


def write_view(run_dir: Path, out: Path | None = None, *, metadata: dict[str, Any] | None = None,
               results: ResultsFile | None = None, summary: dict[str, Any] | None = None,
               inline_max: int = INLINE_MAX_ROLLOUTS, per_part: int = ROLLOUTS_PER_PART) -> Path:
    """Write the page for ``run_dir`` to ``out`` (default ``run_dir/view.html``) through a temporary file; returns
    its path. What is not given is read from the run directory (``summary.json`` only if it exists; the results
    slim, their transcripts read again one at a time). Over ``inline_max`` rollouts, the conversations go to parts
    of ``per_part`` rollouts in ``<out stem>_files/`` beside the page, replaced as a whole."""
    run_dir = Path(run_dir)
    results_path = run_dir / "results.jsonl"
    if metadata is None or results is None:
        if not (run_dir / "metadata.json").is_file() or not results_path.is_file():
            raise ConfigError(f"{run_dir} is not a run directory (needs metadata.json and results.jsonl)")
        metadata = _read_json(run_dir / "metadata.json")
        try:
            results = read_results_file(results_path, transcripts=False)
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise ConfigError(f"{results_path}: unreadable ({' '.join(str(err).split())[:300]})") from err
        if summary is None and (run_dir / "summary.json").is_file():
            summary = _read_json(run_dir / "summary.json")
    out = Path(out) if out is not None else run_dir / VIEW_FILE
    final_parts = parts_dir(out)
    parts = None
    if len(latest_positions(results)) > inline_max:
        building = final_parts.with_name(final_parts.name + _BUILDING)
        shutil.rmtree(building, ignore_errors=True)
        try:
            building.mkdir()
        except OSError as err:
            raise ConfigError(f"cannot write {building}: {err.strerror or err}") from err
        parts = _Parts(building, max(1, per_part))
    tmp = out.with_name(out.name + ".tmp")
    try:
        page = render_view(metadata, results, summary, results_path=results_path, parts=parts)
        tmp.write_text(page, encoding="utf-8")
        _remove_parts(final_parts)  # the parts of an earlier page of this run, large or not
        if parts is not None:
            parts.directory.rename(final_parts)
        tmp.replace(out)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        if parts is not None:
            shutil.rmtree(parts.directory, ignore_errors=True)
        raise ConfigError(f"cannot write {out}: {err.strerror or err}") from err
    return out

"""view.html (``sv view``): what the page embeds, that nothing from the run can become markup, and the page as a
headless browser renders it (the script ran, filters work, a ``<script>`` in a reply is shown as text).

The browser is Debian's ``chromium-headless-shell`` (or ``chromium``), installed by ``make test`` (see the
Makefile's DEBIAN_PACKAGES). A missing browser fails these tests: the page is only tested by rendering it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from security_verifiers.cli import main
from security_verifiers.core.rundir import ResultsFile, latest_by_key, read_results_file
from security_verifiers.core.types import ErrorRecord, Item, Message, RolloutRecord, ToolCall, Transcript, Usage
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.report import regenerate
from security_verifiers.report.view import render_view, view_data, write_view
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_item

ENV = NetworkLogs()
#: A reply that would run script if the page ever treated run text as HTML.
HOSTILE = ('<script>document.title = "PWNED"; document.body.setAttribute("data-pwned", "script")</script>'
           '<img src="x" onerror="document.body.setAttribute(\'data-pwned\', \'img\')"></pre></td></tr></table>'
           '</script><!-- {"label": "Malicious", "p_malicious": 0.9}')
MODEL = 'model <i>"quoted"</i>'
RIGHT = '{"label": "Malicious", "p_malicious": 0.9}'
BROWSERS = ("chromium-headless-shell", "chromium", "chrome-headless-shell", "google-chrome")


def _record(i: int, messages: list[Message], *, error: ErrorRecord | None = None) -> RolloutRecord:
    item = e1_item(i, "Malicious" if i % 2 else "Benign")
    transcript = Transcript(messages=messages, tool_calls=sum(len(m.tool_calls) for m in messages))
    base = dict(env=ENV.name, env_version=ENV.version, item_id=item.id, split=item.split, transcript=transcript,
                usage=Usage(prompt_tokens=50, completion_tokens=5), latency_s=0.1 * i)
    if error is not None:
        return RolloutRecord(**base, error=error)
    score = ENV.score(item, transcript)
    return RolloutRecord(**base, reward=score.reward, components=score.components, outcome=score.outcome,
                         parse_status=score.parse_status)


def _messages(item: Item, *replies: Message) -> list[Message]:
    return [*ENV.prompt(item), *replies]


def _records() -> list[RolloutRecord]:
    """Twelve rollouts: a hostile reply, a tool call, a parse failure, two errors and seven plain answers."""
    out = []
    for i in range(12):
        item = e1_item(i, "Malicious" if i % 2 else "Benign")
        if i == 0:
            out.append(_record(i, _messages(item, Message(role="assistant", content=HOSTILE))))
        elif i == 1:
            call = ToolCall(id="call-7", name="lookup_host", arguments='{"ip": "10.0.0.9"}')
            out.append(_record(i, _messages(item, Message(role="assistant", content="", tool_calls=[call]),
                                            Message(role="tool", content="<b>known scanner</b>",
                                                    tool_call_id="call-7"),
                                            Message(role="assistant", content=RIGHT))))
        elif i == 2:
            out.append(_record(i, _messages(item, Message(role="assistant", content="I cannot tell."))))
        elif i in (3, 4):
            kind, message = ("provider", "m at http://127.0.0.1:1/v1: HTTP 401 (<b>Unauthorized</b>)") if i == 3 \
                else ("timeout", "no reply within 120.0s")
            out.append(_record(i, _messages(item), error=ErrorRecord(kind=kind, message=message)))
        else:
            reply = RIGHT if i % 3 else '{"label": "Benign", "p_malicious": 0.1}'
            out.append(_record(i, _messages(item, Message(role="assistant", content=reply))))
    return out


def _metadata(n: int) -> dict:
    return {"env": ENV.describe(), "model": MODEL, "run_id": "view-test", "status": "finished",
            "started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:01:00+00:00",
            "dataset": {"id": "network-logs/test@abc", "hash": "sha256:abc", "splits": ["test"], "n": n},
            "run": {"samples": 1}}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory as `sv eval` leaves it, view.html included (written by regenerate)."""
    path = tmp_path_factory.mktemp("run") / "run"
    path.mkdir()
    records = _records()
    (path / "metadata.json").write_text(json.dumps(_metadata(len(records))), encoding="utf-8")
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    regenerate(path)
    return path


def _embedded(page: str) -> dict:
    block = re.search(r'<script type="application/json" id="sv-data">(.*?)</script>', page, re.S)
    assert block is not None
    return json.loads(block.group(1))


# -- the page as text ---------------------------------------------------------------------------------------------
def test_regenerate_writes_the_view_with_every_rollout(run_dir: Path) -> None:
    page = (run_dir / "view.html").read_text(encoding="utf-8")
    data = _embedded(page)
    assert [r["item"] for r in data["rollouts"]] == [f"nl-test{i:04d}" for i in range(12)]
    assert data["run"]["headline"][0] == "reward_mean" and data["run"]["status"] == "finished"
    errors = [r["error"] for r in data["rollouts"] if "error" in r]
    assert errors == [{"kind": "provider", "message": "m at http://127.0.0.1:1/v1: HTTP 401 (<b>Unauthorized</b>)"},
                      {"kind": "timeout", "message": "no reply within 120.0s"}]
    tool_turn = data["rollouts"][1]["messages"]
    assert tool_turn[-3]["tool_calls"] == [{"id": "call-7", "name": "lookup_host", "arguments": '{"ip": "10.0.0.9"}'}]
    assert tool_turn[-2]["tool_call_id"] == "call-7" and data["texts"][tool_turn[-2]["text"]] == "<b>known scanner</b>"
    assert data["rollouts"][2]["parse"] == "no_json"
    # the headline metrics come from summary.json
    summary = json.loads((run_dir / "summary.json").read_text())
    assert f"{summary['metrics']['reward_mean']:.4f}" in page


def test_every_text_is_stored_once(run_dir: Path) -> None:
    data = _embedded((run_dir / "view.html").read_text(encoding="utf-8"))
    assert len(data["texts"]) == len(set(data["texts"]))
    system = [m["text"] for r in data["rollouts"] for m in r["messages"] if m["role"] == "system"]
    assert len(system) == 12 and len(set(system)) == 1  # one system prompt, shared by every rollout


def _embedded_text(page: str) -> str:
    block = re.search(r'id="sv-data">(.*?)</script>', page, re.S)
    assert block is not None
    return block.group(1)


def test_nothing_from_the_run_is_markup_in_the_page(run_dir: Path) -> None:
    page = (run_dir / "view.html").read_text(encoding="utf-8")
    # the reply, the tool output and the error message travel only as escaped JSON
    for raw in ("<script>document.title", '<img src="x"', "<b>known scanner</b>", "<b>Unauthorized</b>", "<!--"):
        assert raw not in page, raw
    assert "\\u003cscript\\u003edocument.title" in page
    # the model name in the header is escaped as HTML
    assert "<i>" not in page and "model &lt;i&gt;&quot;quoted&quot;&lt;/i&gt;" in page
    # only this page's own two scripts and nothing loaded from anywhere: the page works offline
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert not re.search(r"\b(src|href)\s*=|@import|url\(", page.replace(_embedded_text(page), ""))


def test_non_finite_outcome_values_become_strings() -> None:
    record = _records()[5].model_copy(update={"outcome": {"p": float("nan"), "cost": float("inf")}})
    data = _embedded(render_view(_metadata(1), ResultsFile([record]), None))
    assert data["rollouts"][0]["outcome"] == {"p": "nan", "cost": "inf"}


def test_a_cut_results_file_shows_as_incomplete(run_dir: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut"
    shutil.copytree(run_dir, cut)
    results = cut / "results.jsonl"
    results.write_text(results.read_text(encoding="utf-8")[:-30], encoding="utf-8")
    page = write_view(cut).read_text(encoding="utf-8")
    assert "incomplete — 1 cut line in results.jsonl (line 12); 11 of 12 rollouts recorded" in page
    assert len(_embedded(page)["rollouts"]) == 11


def test_view_data_keeps_the_last_record_of_a_repeated_rollout() -> None:
    first, retry = _records()[3], _records()[5].model_copy(update={"item_id": _records()[3].item_id})
    data = view_data(_metadata(1), ResultsFile([first, retry]), None)
    assert len(data["rollouts"]) == 1 and "error" not in data["rollouts"][0]


# -- the command --------------------------------------------------------------------------------------------------
def test_sv_view_writes_the_page_where_asked(run_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "elsewhere.html"
    assert main(["view", str(run_dir), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert f"wrote {out}" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "words"), [
    (["view", "{tmp}/nope"], "not a run directory"),
    (["view", "{run}", "--out", "{tmp}"], "is a directory"),
    (["view", "{run}", "--out", "{tmp}/no/such/dir/view.html"], "cannot write"),
])
def test_sv_view_bad_input_is_one_line_exit_2(argv: list[str], words: str, run_dir: Path, tmp_path: Path,
                                             capsys) -> None:
    filled = [a.replace("{tmp}", str(tmp_path)).replace("{run}", str(run_dir)) for a in argv]
    assert main(filled) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("sv: error:") and words in err[0]


def test_sv_eval_writes_the_view_of_a_model_run(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(e1_item(i).model_dump_json() + "\n" for i in range(3)), encoding="utf-8")
    with FakeOpenAIServer(reply=lambda request: HOSTILE) as server:
        assert main(["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--data", str(data),
                     "--out", str(tmp_path), "--run-id", "r", "--no-cache", "--quiet"]) == 0
    page = (tmp_path / "evals" / "network-logs--m" / "r" / "view.html").read_text(encoding="utf-8")
    assert len(_embedded(page)["rollouts"]) == 3 and "<script>document.title" not in page


# -- the page in a browser ----------------------------------------------------------------------------------------
def browser() -> str:
    """The headless browser's path; its absence is a failure, not a skip (``make test`` installs it)."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no headless browser found (looked for " + ", ".join(BROWSERS) + "): install Debian's "
                "chromium-headless-shell, as `make test` does (Makefile: DEBIAN_PACKAGES)")


def render(page: Path, *, fragment: str = "", screenshot: Path | None = None) -> str:
    """The DOM after the page's script ran (``--dump-dom``), or a screenshot when ``screenshot`` is given."""
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    mode = [f"--screenshot={screenshot}", "--window-size=1280,900", "--hide-scrollbars"] if screenshot \
        else ["--dump-dom"]
    result = subprocess.run([browser(), "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                             "--disable-extensions", *mode, url], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_browser_runs_the_page_and_lists_every_rollout(run_dir: Path) -> None:
    dom = render(run_dir / "view.html")
    assert 'data-rendered="12"' in dom  # set by the script once it has run
    assert dom.count('class="row') == 12
    assert "Showing 12 of 12 matching rollouts (12 in the run)" in dom
    assert "12 rollouts: 10 scored, 2 errors (provider 1, timeout 1) kept out of the metrics, 1 parse failures" in dom
    # filters built from the data: error kinds, parse statuses, and the outcome's labels
    for option in ('value="error:provider"', 'value="error:timeout"', 'value="parse:no_json"', 'id="filter-o-action"'):
        assert option in dom, option


def test_a_script_in_a_reply_is_shown_as_text_and_never_runs(run_dir: Path) -> None:
    dom = render(run_dir / "view.html", fragment="open=nl-test0000%230,nl-test0001%230,nl-test0003%230")
    assert dom.count('class="detail"') == 3  # the three rollouts named in the address are expanded
    assert "&lt;script&gt;document.title = \"PWNED\"" in dom  # the reply, as text
    assert "&lt;b&gt;known scanner&lt;/b&gt;" in dom and "→ lookup_host" in dom  # the tool turn
    assert "&lt;b&gt;Unauthorized&lt;/b&gt;" in dom  # the error message
    # neither the script nor the image's handler ran, and neither became an element
    assert "PWNED" not in dom.split("<body")[0]  # the title is unchanged
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None and "data-pwned" not in body.group(0) and 'data-rendered="12"' in body.group(0)
    assert "<img" not in dom and "<script>document" not in dom
    assert "model &lt;i&gt;\"quoted\"&lt;/i&gt;" in dom


@pytest.mark.parametrize(("fragment", "shown"), [
    ("status=errors", "Showing 2 of 2 matching"),  # the errored rollouts only
    ("status=parse", "Showing 1 of 1 matching"),  # the unparseable reply
    ("q=lookup_host", "Showing 1 of 1 matching"),  # search reaches tool calls
    ("q=PWNED", "Showing 1 of 1 matching"),  # and reply text
    ("min=0.5&status=scored", None),  # a reward range: checked against the embedded rewards below
])
def test_filters_in_the_address_select_the_rollouts(run_dir: Path, fragment: str, shown: str | None) -> None:
    dom = render(run_dir / "view.html", fragment=fragment)
    if shown is None:
        rewards = [r["reward"] for r in _embedded((run_dir / "view.html").read_text())["rollouts"]]
        n = sum(1 for x in rewards if x is not None and x >= 0.5)
        assert 0 < n < 12
        shown = f"Showing {n} of {n} matching"
    assert shown in dom


def test_the_screenshot_is_not_blank(run_dir: Path, tmp_path: Path) -> None:
    shot = tmp_path / "view.png"
    render(run_dir / "view.html", fragment="open=nl-test0003%230", screenshot=shot)
    with Image.open(shot) as image:
        assert image.size == (1280, 900)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200  # text, badges and the reward shading, not an empty page
    background = max(colours)[0] / (1280 * 900)
    assert background < 0.9  # at most 90% of the page is the background colour


# -- a large run: a row per rollout in the page, the conversations in parts beside it ------------------------------
def _part(path: Path) -> tuple[int, dict]:
    text = path.read_text(encoding="utf-8")
    match = re.fullmatch(r"svViewPart\((\d+),(.*)\);\n", text, re.S)
    assert match is not None, text[:200]
    return int(match.group(1)), json.loads(match.group(2))


@pytest.fixture(scope="module")
def large_run(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The twelve-rollout run, its page written as a large run's: over 5 rollouts, parts of 4."""
    path = tmp_path_factory.mktemp("large") / "run"
    shutil.copytree(run_dir, path)
    write_view(path, inline_max=5, per_part=4)
    return path


def test_a_large_run_keeps_its_conversations_in_parts(large_run: Path) -> None:
    data = _embedded((large_run / "view.html").read_text(encoding="utf-8"))
    rows = data["rollouts"]
    assert [r["item"] for r in rows] == [f"nl-test{i:04d}" for i in range(12)]
    assert all("messages" not in r for r in rows) and data["texts"] == []
    assert [r["part"] for r in rows] == [1] * 4 + [2] * 4 + [3] * 4
    assert data["parts"] == {"dir": "view_files", "count": 3}
    assert rows[2]["reply"] == "I cannot tell."  # an unparsed reply's start stays in its row
    files = sorted(p.name for p in (large_run / "view_files").iterdir())
    assert files == ["part-00001.js", "part-00002.js", "part-00003.js"]
    number, part = _part(large_run / "view_files" / "part-00001.js")
    assert number == 1 and sorted(part["rollouts"], key=int) == ["0", "1", "2", "3"]
    tool_turn = part["rollouts"]["1"]["messages"]
    assert part["texts"][tool_turn[-2]["text"]] == "<b>known scanner</b>"
    # what the inline page holds for a rollout is what the parts and rows hold together
    full = _embedded(render_view(json.loads((large_run / "metadata.json").read_text()),
                                 read_results_file(large_run / "results.jsonl"), None))
    for index, inline in enumerate(full["rollouts"]):
        _, holder = _part(large_run / "view_files" / f"part-{index // 4 + 1:05d}.js")
        entry = holder["rollouts"][str(index)]
        assert [holder["texts"][m["text"]] for m in entry["messages"]] == \
            [full["texts"][m["text"]] for m in inline["messages"]]
        assert entry.get("outcome") == inline.get("outcome")
        assert {k: v for k, v in rows[index].items() if k not in ("part", "reply", "outcome")} == \
            {k: v for k, v in inline.items() if k not in ("messages", "outcome")}
    # nothing from the run is markup, in the parts either
    raw = (large_run / "view_files" / "part-00001.js").read_text(encoding="utf-8")
    assert "<script>document.title" not in raw and "\\u003cscript\\u003edocument.title" in raw


def test_a_smaller_page_removes_the_parts_of_an_earlier_one(large_run: Path, tmp_path: Path) -> None:
    path = tmp_path / "run"
    shutil.copytree(large_run, path)
    (path / "notes").mkdir()  # a folder of the user's own is never touched
    write_view(path)
    assert not (path / "view_files").exists() and (path / "notes").is_dir()
    assert "messages" in _embedded((path / "view.html").read_text(encoding="utf-8"))["rollouts"][0]


def test_the_browser_loads_a_part_when_its_rollout_is_opened(large_run: Path) -> None:
    dom = render(large_run / "view.html", fragment="open=nl-test0000%230,nl-test0001%230")
    assert 'data-rendered="12"' in dom and 'data-parts-loaded="1"' in dom
    assert dom.count('class="detail"') == 2
    assert "&lt;script&gt;document.title = \"PWNED\"" in dom  # the hostile reply, as text, from part 1
    assert "&lt;b&gt;known scanner&lt;/b&gt;" in dom and "→ lookup_host" in dom
    assert "<script>document" not in dom and "PWNED" not in dom.split("<body")[0]
    assert "The transcripts are in 3 parts in view_files/" in dom


def test_a_missing_part_is_said_and_the_rest_still_works(large_run: Path, tmp_path: Path) -> None:
    path = tmp_path / "run"
    shutil.copytree(large_run, path)
    (path / "view_files" / "part-00003.js").unlink()
    dom = render(path / "view.html", fragment="open=nl-test0009%230,nl-test0005%230")
    assert "part-00003.js, which could not be loaded" in dom
    assert dom.count('class="detail"') == 2 and 'data-parts-loaded="1"' in dom  # part 2 loaded


def test_the_report_reads_results_without_their_conversations(run_dir: Path) -> None:
    """``regenerate`` reads the results slim (only the final answer kept); its summary is the one the whole records
    give, failure examples included."""
    slim = read_results_file(run_dir / "results.jsonl", transcripts=False)
    full = read_results_file(run_dir / "results.jsonl")
    assert not slim.transcripts and len(slim.records) == len(full.records) == 12
    for light, whole in zip(slim.records, full.records, strict=True):
        assert [m.role for m in light.transcript.messages] == (["assistant"] if whole.transcript.final_text or any(
            m.role == "assistant" for m in whole.transcript.messages) else [])
        assert light.transcript.final_text == whole.transcript.final_text
        assert light.model_dump(exclude={"transcript"}) == whole.model_dump(exclude={"transcript"})
    metadata = json.loads((run_dir / "metadata.json").read_text())
    stored = json.loads((run_dir / "summary.json").read_text())
    from security_verifiers.report import build_summary

    assert build_summary(ENV, latest_by_key(full.records), metadata) == stored
    assert stored["failure_examples"]  # the examples quote the final answers the slim records kept

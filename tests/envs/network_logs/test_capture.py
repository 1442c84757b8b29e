"""What a capture records: items say it, the prompt says it, the features respect it."""

import math

import pytest

from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.envs.network_logs.capture import coarsened, prompt_notes, timing_known
from security_verifiers.envs.network_logs.features import FEATURE_NAMES, TIMING_FEATURES, features
from security_verifiers.envs.network_logs.generator import generate

ENV = NetworkLogs()
#: A full window and a named service (a flow without one reads as "unknown" where history is unrecorded).
ITEM = next(i for i in generate("test", 40, seed=6)
            if len(i.input["window"]) == 20 and i.input["flow"]["service"] is not None)


@pytest.mark.parametrize(
    ("resolution", "unrecorded", "notes"),
    [
        # Zeek (the generator, IoT-23): nothing to say
        (1e-06, (), []),
        # CIC-IDS-2017: minutes, no service, no history
        (60.0, ("service", "history"), ["rounded down to 60 s", "does not record service, history"]),
        # raw UNSW-NB15: whole seconds, no history
        (1.0, ("history",), ["rounded down to 1 s", "does not record history"]),
        # the ML-ready CSVs: no clock at all
        (None, ("id.orig_h", "service"), ["has no timestamps", "does not record id.orig_h, service"]),
    ],
)
def test_prompt_says_what_the_capture_lacks(resolution, unrecorded, notes) -> None:
    view = coarsened(ITEM.input, resolution, unrecorded)
    said = prompt_notes(view)
    assert len(said) == len(notes) and all(n in s for n, s in zip(notes, said, strict=True))
    user = ENV.prompt(ITEM.model_copy(update={"input": view}))[1].content
    assert all(s in user for s in said)


def test_unrecorded_fields_are_shown_as_dashes_not_placeholders() -> None:
    view = coarsened(ITEM.input, None, ("id.orig_h", "id.orig_p", "service", "history"))
    rows = ENV.prompt(ITEM.model_copy(update={"input": view}))[1].content.splitlines()
    flow_row = rows[-1].split("\t")
    assert flow_row[0] == "-" and flow_row[1] == "-" and flow_row[2] == "-" and flow_row[6] == "-"
    assert "unknown" not in rows[-1]


def test_coarsened_rounds_down_and_keeps_order() -> None:
    view = coarsened(ITEM.input, 60.0, ("service", "history"))
    assert all(f["ts"] % 60 == 0 and f["ts"] <= g["ts"] + 1e-6 for f, g in zip(view["window"], ITEM.input["window"],
                                                                               strict=True))
    assert [f["id.orig_p"] for f in view["window"]] == [f["id.orig_p"] for f in ITEM.input["window"]]
    assert view["capture"] == {"ts_resolution": 60.0, "unrecorded": ["service", "history"]}
    assert ITEM.input["capture"] == {"ts_resolution": 1e-06, "unrecorded": []}  # the original is untouched


def test_features_mark_what_the_capture_cannot_tell() -> None:
    fine = dict(zip(FEATURE_NAMES, features(ITEM.input), strict=True))
    assert timing_known(ITEM.input) and not any(math.isnan(v) for v in fine.values())
    for resolution in (1.0, 60.0, None):
        view = coarsened(ITEM.input, resolution, ("history",))
        values = dict(zip(FEATURE_NAMES, features(view), strict=True))
        assert not timing_known(view)
        assert {n for n, v in values.items() if math.isnan(v)} == set(TIMING_FEATURES) | {"server_spoke_first"}


def test_an_item_without_its_capture_is_an_error() -> None:
    bare = {k: v for k, v in ITEM.input.items() if k != "capture"}
    with pytest.raises(ValueError, match="capture description"):
        features(bare)


def test_the_compact_prompt_shows_the_same_connections_tersely() -> None:
    compact = NetworkLogs.from_options({"prompt_style": "compact", "window": 5})
    system, user = compact.prompt(ITEM)
    assert "p_malicious" in system.content and "missed attack 10.0" in system.content
    assert len(system.content) + len(user.content) < (len(ENV.prompt(ITEM)[0].content) + len(user.content))
    rows = user.content.splitlines()
    assert rows[0] == f"role: {ITEM.input['host']['role']}" and rows[-2] == "last:"
    flows = [*ITEM.input["window"][-5:], ITEM.input["flow"]]
    table = [r.split("\t") for r in rows[2:-2] + rows[-1:]]
    assert len(table) == 6 and table[0][0] == "-"
    for row, flow, prev in zip(table[1:], flows[1:], flows[:-1], strict=True):
        assert float(row[0]) == pytest.approx(flow["ts"] - prev["ts"], abs=1e-3)
        assert row[1:5] == [str(flow["id.resp_h"]), str(flow["id.resp_p"]), flow["proto"], str(flow["service"] or "-")]
    assert compact.score(ITEM, _answer(ITEM)).reward == ENV.score(ITEM, _answer(ITEM)).reward


def test_the_compact_prompt_shows_what_the_capture_lacks_as_dashes() -> None:
    view = coarsened(ITEM.input, None, ("service", "history"))
    compact = NetworkLogs.from_options({"prompt_style": "compact"})
    user = compact.prompt(ITEM.model_copy(update={"input": view}))[1].content
    assert "has no timestamps" in user
    last = user.splitlines()[-1].split("\t")
    assert last[0] == "-" and last[4] == "-" and last[9] == "-"


def _answer(item):
    from security_verifiers.core.types import Message, Transcript

    label = item.target["label"]
    text = f'{{"label": "{label}", "p_malicious": {1.0 if label == "Malicious" else 0.0}}}'
    return Transcript(messages=[Message(role="assistant", content=text)])

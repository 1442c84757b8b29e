"""``--limit`` / ``--sample-seed``: the first N, a range, or N at random, reproducibly."""

from __future__ import annotations

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.subset import ItemSubset
from security_verifiers.core.types import Item


def _dataset(n: int = 20) -> Dataset:
    items = [Item(id=f"i{k}", split="test", input={"k": k}, target={}) for k in range(n)]
    return Dataset(id="d", items=items, splits=("test",))


def _ids(dataset: Dataset) -> list[str]:
    return [item.id for item in dataset.items]


def test_first_n_range_and_open_ranges() -> None:
    ds = _dataset()
    assert _ids(ItemSubset.parse("3").select(ds)) == ["i0", "i1", "i2"]
    assert _ids(ItemSubset.parse(3).select(ds)) == ["i0", "i1", "i2"]
    assert _ids(ItemSubset.parse("5:8").select(ds)) == ["i5", "i6", "i7"]
    assert _ids(ItemSubset.parse("18:").select(ds)) == ["i18", "i19"]
    assert _ids(ItemSubset.parse(":2").select(ds)) == ["i0", "i1"]
    assert ItemSubset.parse("15:99").select(ds).items == ds.items[15:]  # past the end keeps what there is
    assert ItemSubset.parse("100").select(ds) is ds
    assert ItemSubset.parse(None) is None
    assert ItemSubset.parse("3").first_n == 3 and ItemSubset.parse("1:3").first_n is None


def test_a_sample_is_reproducible_in_dataset_order_and_differs_by_seed() -> None:
    ds = _dataset(200)
    one = _ids(ItemSubset.parse("10", sample_seed=1).select(ds))
    assert one == _ids(ItemSubset.parse("10", sample_seed=1).select(ds))
    assert len(one) == 10 and one == sorted(one, key=lambda i: int(i[1:]))
    assert one != _ids(ItemSubset.parse("10", sample_seed=2).select(ds))
    assert one != _ids(ds)[:10]
    assert ItemSubset.parse("10", sample_seed=1).select(ds).hash != ds.head(10).hash


@pytest.mark.parametrize(("limit", "seed", "words"), [
    ("0", None, "positive"), ("-3", None, "takes N"), ("abc", None, "takes N"), ("5:5", None, "empty"),
    ("9:2", None, "empty"), ("2:9", 1, "give --limit N"), (None, 3, "needs --limit"), ("3.5", None, "takes N")])
def test_bad_limits_are_config_errors_in_the_flags_words(limit: str | None, seed: int | None, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        ItemSubset.parse(limit, sample_seed=seed)


def test_a_range_that_starts_past_the_end_is_refused() -> None:
    with pytest.raises(ConfigError, match="starts past the 20 items"):
        ItemSubset.parse("25:30").select(_dataset())

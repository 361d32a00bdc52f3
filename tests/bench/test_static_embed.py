"""The static embedding's arithmetic on a tiny hand-made model (int8 rows, one scale per row)."""

from __future__ import annotations

import math
from array import array

import pytest

from bench.variants.static.static_embed import StaticModel, TableRows, mean_vector

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "graph", "path", "##s", "node"]
DIM = 3
# rows by id: [PAD], [UNK], [CLS], [SEP] zero; graph, path, ##s, node
VALUES = [0, 0, 0] * 4 + [10, 0, 0] + [0, 20, 0] + [0, 0, 5] + [127, -127, 0]
SCALES = [1.0] * 4 + [0.5, 0.25, 2.0, 0.01]


def table(first: int = 0, count: int | None = None) -> TableRows:
    count = len(VOCAB) - first if count is None else count
    values = bytes(array("b", VALUES[first * DIM : (first + count) * DIM]))
    return TableRows(values, array("f", SCALES[first : first + count]).tobytes(), DIM, first=first)


def unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def test_a_text_is_the_unit_sum_of_its_tokens_rows() -> None:
    model = StaticModel(VOCAB, DIM, table())
    # graph = (5, 0, 0), path = (0, 5, 0), ##s = (0, 0, 10); "paths" = path + ##s
    assert model.token_ids("graph paths") == [4, 5, 6]
    assert model.embed("graph paths") == pytest.approx(unit([5.0, 5.0, 10.0]))
    assert model.embed("graph graph path") == pytest.approx(unit([10.0, 5.0, 0.0]))  # each occurrence counts


def test_unknown_words_are_left_out_and_nothing_known_gives_none() -> None:
    model = StaticModel(VOCAB, DIM, table())
    assert model.token_ids("graph zebra") == [4]
    assert model.embed("graph zebra") == pytest.approx([1.0, 0.0, 0.0])
    assert model.embed("zebra") is None
    assert model.embed("") is None
    assert model.embed("[PAD]") is None  # a zero row: no direction


def test_negative_int8_values_and_scales() -> None:
    model = StaticModel(VOCAB, DIM, table())
    assert model.embed("node") == pytest.approx(unit([1.27, -1.27, 0.0]))


def test_max_tokens_cuts_the_text() -> None:
    model = StaticModel(VOCAB, DIM, table(), max_tokens=1)
    assert model.embed("path graph") == pytest.approx([0.0, 1.0, 0.0])


def test_rows_must_fit_their_scales() -> None:
    with pytest.raises(ValueError):
        TableRows(b"\x01\x02", array("f", [1.0]).tobytes(), DIM)


def test_mean_vector_skips_missing_rows() -> None:
    rows = [None, (memoryview(bytes(array("b", [3, 4]))).cast("b"), 1.0)]
    assert mean_vector(rows, 2) == pytest.approx([0.6, 0.8])

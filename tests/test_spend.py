"""A paid run's figures, read off the CLI's result line and back off the ledger."""

from __future__ import annotations

import math

import pytest

from executive.spend import Spend, chart, not_reported, of_line, of_record, usd

LINE = {
    "type": "result",
    "subtype": "success",
    "num_turns": 4,
    "total_cost_usd": 0.220896,
    "duration_api_ms": 126,
    "usage": {
        "input_tokens": 54664,
        "cache_creation_input_tokens": 10,
        "cache_read_input_tokens": 20,
        "output_tokens": 112,
        "server_tool_use": {"web_search_requests": 0},
    },
}


def test_a_result_line_gives_cost_tokens_turns_and_api_time():
    spend = of_line(LINE)
    assert spend == Spend(0.220896, 54664, 112, 20, 10, 4, 126)
    assert spend.cache_read_tokens == 20 and spend.cache_write_tokens == 10


def test_the_ledger_form_reads_back_the_same_with_the_packs_tokens_beside_it():
    spend = of_line(LINE)
    assert spend is not None
    record = spend.record(pack_tokens=812)
    assert record["reported"] is True and record["pack_tokens"] == 812
    assert record["input_tokens"] == 54664 and record["cost_usd"] == 0.220896
    assert of_record(record) == spend


@pytest.mark.parametrize(
    "cost", [None, "0.5", -0.01, math.nan, math.inf, True, 2_000_000.0], ids=repr
)
def test_a_line_without_a_believable_cost_is_not_reported_never_zero(cost):
    assert of_line({**LINE, "total_cost_usd": cost}) is None
    assert of_record({"reported": True, "cost_usd": cost}) is None


def test_not_reported_stays_not_reported_and_bad_counts_are_not_counted():
    assert of_record(not_reported(pack_tokens=5)) is None
    odd = of_line({**LINE, "usage": {"input_tokens": -3, "output_tokens": "9"}, "num_turns": 1.5})
    assert odd == Spend(0.220896, 0, 0, 0, 0, 1, 126)


def test_a_sum_adds_every_figure_and_amounts_read_as_dollars():
    # The unreported are left out of a sum (and counted) by the spending's Tally: see
    # tests/workspace/test_spending.py.
    one = Spend(0.25, 10, 1, 0, 0, 1, 5)
    assert sum([one, one], Spend()) == Spend(0.5, 20, 2, 0, 0, 2, 10)
    assert usd(None) == "not reported" and usd(0.0123) == "$0.0123" and usd(1234.5) == "$1,234.50"


def test_the_week_chart_scales_to_its_largest_day():
    assert chart([0, 0, 0]) == "▁▁▁"
    assert chart([0.0, 0.5, 1.0]) == "▁▅█"
    assert len(chart([0.1] * 7)) == 7

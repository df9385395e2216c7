from datetime import UTC, datetime, timedelta, timezone

import pytest

from executive.dates import now_iso, parse_instant


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-03T04:00:00+00:00", datetime(2026, 12, 3, 4, tzinfo=UTC)),
        ("2026-12-03T04:00:00Z", datetime(2026, 12, 3, 4, tzinfo=UTC)),
        ("2026-12-03T04:00:00", datetime(2026, 12, 3, 4, tzinfo=UTC)),  # naive: UTC
        (
            "2026-12-03T05:00:00+01:00",
            datetime(2026, 12, 3, 5, tzinfo=timezone(timedelta(hours=1))),
        ),
        ("2026-12-03", datetime(2026, 12, 3, tzinfo=UTC)),
    ],
)
def test_every_spelling_we_meet_is_one_aware_instant(text, expected):
    assert parse_instant(text) == expected
    assert parse_instant(text).tzinfo is not None


@pytest.mark.parametrize("value", ["2026-99-99T99:99:99junk", "", "yesterday", None, 17, ["x"]])
def test_anything_else_is_none_not_an_exception(value):
    assert parse_instant(value) is None


def test_now_is_written_as_aware_utc_that_reads_back():
    when = parse_instant(now_iso())
    assert when is not None and when.utcoffset() == timedelta(0)

"""The transcript's timestamps: the fast path from a UTC datetime's fields writes what the
general path (``astimezone``, ``isoformat``) writes, for every field value and any order of calls
(its minute's text is kept between calls)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.transcript.stamps import iso_timestamp, iso_timestamp_general

_UTC_TIMES = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999_999),
                          timezones=st.just(UTC))


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.lists(_UTC_TIMES, min_size=1, max_size=8), st.integers(0, 3))
def test_utc_fast_path_writes_what_the_general_path_writes(stamps, whole_millis):
    # mostly the same minute after the first (what the kept minute's text serves), whole
    # milliseconds or not
    for ts in stamps + [stamps[0].replace(second=s, microsecond=(s * 1000 if whole_millis else s * 7))
                        for s in range(0, 60, 13)]:
        assert iso_timestamp(ts) == iso_timestamp_general(ts)


@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9000, 1, 1),
                    timezones=st.sampled_from([timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(0), "Z0"),
                                               timezone(timedelta(hours=-8))])))
def test_other_offsets_take_the_general_path(ts):
    assert iso_timestamp(ts) == iso_timestamp_general(ts)
    assert iso_timestamp(ts).endswith("Z")


def test_examples():
    assert iso_timestamp(datetime(2026, 1, 5, 9, 0, 20, tzinfo=UTC)) == "2026-01-05T09:00:20.000Z"
    assert iso_timestamp(datetime(2026, 1, 5, 9, 0, 20, 1500, tzinfo=UTC)) == "2026-01-05T09:00:20.001500Z"
    assert iso_timestamp(datetime(999, 1, 5, 9, 0, 20, tzinfo=UTC)) == "0999-01-05T09:00:20.000Z"
    # a naive datetime (local time) is never read as UTC by the fast path
    naive = datetime(2026, 1, 5, 9, 0, 20)
    assert iso_timestamp(naive) == iso_timestamp_general(naive)

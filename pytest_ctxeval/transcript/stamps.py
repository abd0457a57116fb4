"""A transcript record's ``timestamp``: ISO 8601 in UTC, ``Z``-suffixed, as Claude Code writes it.

Every record the writer appends carries one (19,000 in the long session), and the general path
(``astimezone`` then ``isoformat`` then a replace) costs a few microseconds each. A timestamp
already in UTC (``datetime.UTC``, what the runner's clock and ``utcnow`` carry) is written from
its fields, with its minute's text (``2026-01-05T09:00:``) kept for the next records, which
mostly fall in the same minute; any other timestamp takes the general path.
``tests/test_transcript_stamps.py`` checks both agree (Hypothesis, every field range).
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["iso_timestamp", "iso_timestamp_general"]

_minute: tuple[tuple[int, ...] | None, str] = (None, "")  # (year, month, day, hour, minute), its text


def iso_timestamp_general(ts: datetime) -> str:
    """The timestamp as written: milliseconds, or microseconds when there are any (nothing lost)."""
    spec = "milliseconds" if ts.microsecond % 1000 == 0 else "microseconds"
    return ts.astimezone(UTC).isoformat(timespec=spec).replace("+00:00", "Z")


def iso_timestamp(ts: datetime) -> str:
    """:func:`iso_timestamp_general`, from the fields when ``ts`` is already in UTC.

    >>> iso_timestamp(datetime(2026, 1, 5, 9, 0, 20, tzinfo=UTC))
    '2026-01-05T09:00:20.000Z'
    """
    if ts.tzinfo is not UTC:
        return iso_timestamp_general(ts)
    global _minute
    key = (ts.year, ts.month, ts.day, ts.hour, ts.minute)
    last, head = _minute  # one tuple: another thread may replace it, never change it
    if last != key:
        head = f"{key[0]:04d}-{key[1]:02d}-{key[2]:02d}T{key[3]:02d}:{key[4]:02d}:"
        _minute = (key, head)
    micro = ts.microsecond
    if micro % 1000 == 0:
        return f"{head}{ts.second:02d}.{micro // 1000:03d}Z"
    return f"{head}{ts.second:02d}.{micro:06d}Z"

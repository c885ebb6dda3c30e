"""Writes cases.json: expected time-zone conversions computed with Python's zoneinfo.

The Go tests of core/tz and core/schema check the library against this table, so
the expected values come from an implementation independent of Go's time package.
zoneinfo with fold=0 resolves a wall-clock time as java.time (and so Spark) does:
in a gap with the offset before the transition (the time moves forward by the
gap's length), in an overlap with the earlier offset.

Run from the repository root with the project's virtualenv:

    .venv/bin/python core/tz/testdata/gen_cases.py

The values depend on the tz database zoneinfo reads (the system's first); the
file records its version. Regenerate when a tz database release changes the
rules of a zone listed here.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import zoneinfo
from pathlib import Path

OUT = Path(__file__).with_name("cases.json")
EPOCH = dt.datetime(1970, 1, 1)
US = dt.timedelta(microseconds=1)

# Region zones and why each is here.
REGIONS = {
    "America/New_York": "DST gap and overlap; LMT before 1883",
    "Europe/Paris": "DST; Paris mean time before 1911; double summer time in the 1940s",
    "Australia/Lord_Howe": "30-minute DST",
    "Asia/Kolkata": "+05:30, no DST since 1945",
    "Pacific/Apia": "skipped 2011-12-30 entirely (a 24-hour gap)",
    "America/Santiago": "transitions at midnight",
    "Europe/Dublin": "negative DST in the tz database",
    "Antarctica/Troll": "a 2-hour DST gap",
    "America/St_Johns": "-03:30 with DST",
    "Asia/Tokyo": "no DST; far-future values",
    "America/Havana": "transitions at midnight (00:00 -> 01:00)",
}
# Fixed offsets: Spark's spelling and the offset in seconds.
FIXED = {"+05:30": 19800, "UTC-8": -28800, "GMT-08:00": -28800, "-13:33:33": -48813, "+14": 50400}


def micros(d: dt.datetime) -> int:
    """Microseconds of a naive datetime since 1970-01-01 00:00 (no range limit)."""
    return (d - EPOCH) // US


def wall_of(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=us)


def tzinfo(zone: str) -> dt.tzinfo:
    if zone in FIXED:
        return dt.timezone(dt.timedelta(seconds=FIXED[zone]))
    return zoneinfo.ZoneInfo(zone)


def to_instant(zone: str, wall: dt.datetime) -> int:
    """The instant (us) java.time's LocalDateTime.atZone gives for a wall-clock time."""
    off = wall.replace(tzinfo=tzinfo(zone), fold=0).utcoffset()
    return micros(wall) - off // US


def to_wall(zone: str, us: int) -> int:
    """The wall-clock time (us) of an instant, by zoneinfo's own UTC -> local conversion."""
    t = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)
    return micros(t.astimezone(tzinfo(zone)).replace(tzinfo=None))


def local_of(zone: str, sec: int) -> int:
    """Wall-clock second of instant sec, through datetime.astimezone (in range only)."""
    t = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=sec)
    return micros(t.astimezone(tzinfo(zone)).replace(tzinfo=None)) // 1_000_000


def start_of_day(zone: str, day: dt.date) -> int:
    """LocalDate.atStartOfDay(zone): midnight, or the end of the gap midnight falls in (us)."""
    midnight = dt.datetime(day.year, day.month, day.day)
    t = to_instant(zone, midnight) // 1_000_000
    if local_of(zone, t) == micros(midnight) // 1_000_000:
        return t * 1_000_000
    # In a gap: the transition is the first instant whose wall time is past midnight.
    lo, hi = t - 2 * 86400, t
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if local_of(zone, mid) >= micros(midnight) // 1_000_000:
            hi = mid
        else:
            lo = mid
    return hi * 1_000_000


def transitions(zone: str, start: int, end: int) -> list[int]:
    """Instants (s) in [start, end) where the zone's offset changes, found by scanning hours."""
    tz = zoneinfo.ZoneInfo(zone)
    out = []
    step = 3600

    def off(s: int) -> dt.timedelta:
        return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=s)).astimezone(tz).utcoffset()

    s = start
    prev = off(s)
    while s < end:
        n = s + step
        cur = off(n)
        if cur != prev:
            lo, hi = s, n
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if off(mid) == prev:
                    lo = mid
                else:
                    hi = mid
            out.append(hi)
            prev = cur
        s = n
    return out


def year_secs(y: int) -> int:
    return micros(dt.datetime(y, 1, 1)) // 1_000_000


def main() -> None:
    rng = random.Random(20261202)
    walls: list[dict] = []
    instants: list[dict] = []
    days: list[dict] = []

    def add_wall(zone: str, wall: dt.datetime, why: str) -> None:
        walls.append({"zone": zone, "wall": micros(wall), "instant": to_instant(zone, wall), "text": wall.isoformat(), "why": why})

    def add_instant(zone: str, us: int, why: str) -> None:
        instants.append({"zone": zone, "instant": us, "wall": to_wall(zone, us), "why": why})

    hand = [
        ("America/New_York", dt.datetime(2024, 3, 10, 2, 30), "spring-forward gap"),
        ("America/New_York", dt.datetime(2024, 3, 10, 2, 0), "gap start"),
        ("America/New_York", dt.datetime(2024, 3, 10, 2, 59, 59, 999999), "gap end"),
        ("America/New_York", dt.datetime(2024, 3, 10, 3, 0), "after the gap"),
        ("America/New_York", dt.datetime(2024, 3, 10, 1, 59, 59, 999999), "before the gap"),
        ("America/New_York", dt.datetime(2024, 11, 3, 1, 30), "fall-back overlap"),
        ("America/New_York", dt.datetime(2024, 11, 3, 1, 0), "overlap start"),
        ("America/New_York", dt.datetime(2024, 11, 3, 1, 59, 59, 999999), "overlap end"),
        ("America/New_York", dt.datetime(2024, 11, 3, 2, 0), "after the overlap"),
        ("America/New_York", dt.datetime(2024, 11, 3, 0, 59, 59), "before the overlap"),
        ("America/New_York", dt.datetime(1800, 6, 1), "local mean time"),
        ("America/New_York", dt.datetime(1, 1, 1), "year 1"),
        ("America/New_York", dt.datetime(1883, 11, 18, 12, 2), "LMT to EST: an overlap of 3m58s"),
        ("America/New_York", dt.datetime(1918, 3, 31, 2, 30), "first US DST gap"),
        ("America/New_York", dt.datetime(1969, 12, 31, 23, 59, 59, 999999), "just before the epoch"),
        ("America/New_York", dt.datetime(2200, 3, 9, 2, 30), "far-future gap (rule from the TZ string)"),
        ("America/New_York", dt.datetime(2200, 11, 2, 1, 30), "far-future overlap"),
        ("Europe/Paris", dt.datetime(2024, 3, 31, 2, 30), "gap"),
        ("Europe/Paris", dt.datetime(2024, 10, 27, 2, 30), "overlap"),
        ("Europe/Paris", dt.datetime(1900, 1, 1), "Paris mean time"),
        ("Europe/Paris", dt.datetime(1944, 7, 1, 12), "double summer time"),
        ("Australia/Lord_Howe", dt.datetime(2024, 10, 6, 2, 15), "30-minute gap"),
        ("Australia/Lord_Howe", dt.datetime(2024, 4, 7, 1, 45), "30-minute overlap"),
        ("Asia/Kolkata", dt.datetime(1943, 6, 1), "war time"),
        ("Asia/Kolkata", dt.datetime(2500, 1, 1), "far future"),
        ("Pacific/Apia", dt.datetime(2011, 12, 30, 12), "inside the skipped day"),
        ("Pacific/Apia", dt.datetime(2011, 12, 29, 23, 59, 59), "before the skipped day"),
        ("Pacific/Apia", dt.datetime(2011, 12, 31, 0, 0), "after the skipped day"),
        ("America/Santiago", dt.datetime(2024, 9, 8, 0, 30), "gap at midnight"),
        ("America/Santiago", dt.datetime(2024, 4, 6, 23, 30), "overlap before midnight"),
        ("Europe/Dublin", dt.datetime(2024, 3, 31, 1, 30), "gap (negative DST in winter)"),
        ("Europe/Dublin", dt.datetime(2024, 10, 27, 1, 30), "overlap (negative DST in winter)"),
        ("Antarctica/Troll", dt.datetime(2024, 3, 31, 1, 30), "2-hour gap"),
        ("Antarctica/Troll", dt.datetime(2024, 10, 27, 2, 30), "2-hour overlap"),
        ("America/St_Johns", dt.datetime(2024, 3, 10, 2, 30), "gap at -03:30"),
        ("Asia/Tokyo", dt.datetime(9999, 12, 31, 23, 59, 59, 999999), "last microsecond of year 9999"),
        ("America/Havana", dt.datetime(2024, 3, 10, 0, 30), "gap at midnight"),
    ]
    for zone, wall, why in hand:
        add_wall(zone, wall, why)
    for zone in FIXED:
        for wall in (dt.datetime(2024, 3, 10, 2, 30), dt.datetime(1, 1, 1, 12), dt.datetime(1969, 12, 31, 23, 59, 59, 999999)):
            add_wall(zone, wall, "fixed offset")

    # Around every transition of 2023-2025 (and a few historical ones): the
    # seconds just before, at and after both ends of each gap or overlap.
    for zone in REGIONS:
        spans = [(2023, 2026), (1940, 1946)] if zone != "Asia/Tokyo" else [(1948, 1952)]
        for a, b in spans:
            for t in transitions(zone, year_secs(a), year_secs(b)):
                before = local_of(zone, t - 1) + 1  # wall time the transition leaves
                after = local_of(zone, t)  # wall time it lands on
                for w in {before, after}:
                    for d in (-1, 0, 1):
                        wall = wall_of((w + d) * 1_000_000)
                        add_wall(zone, wall, f"around the transition at {t}")
                for d in (-1, 0):
                    add_instant(zone, (t + d) * 1_000_000, f"around the transition at {t}")
                add_instant(zone, (t - 1) * 1_000_000 + 999_999, "last microsecond before a transition")

    # Random wall times and instants from 1700 to 2300, microsecond precision.
    lo, hi = micros(dt.datetime(1700, 1, 1)), micros(dt.datetime(2300, 1, 1))
    for zone in ["America/New_York", "Europe/Paris", "Australia/Lord_Howe", "+05:30"]:
        for _ in range(60):
            add_wall(zone, wall_of(rng.randrange(lo, hi)), "random")
            add_instant(zone, rng.randrange(lo, hi), "random")
    for zone, us in [("America/New_York", micros(dt.datetime(1, 1, 2))), ("Asia/Tokyo", micros(dt.datetime(9999, 12, 30))),
                     ("-13:33:33", -62135596800 * 1_000_000 + 86400 * 1_000_000)]:
        add_instant(zone, us, "range edge")

    for zone, day, why in [
        ("America/New_York", dt.date(2024, 3, 10), "a DST day, midnight is fine"),
        ("America/Santiago", dt.date(2024, 9, 8), "midnight falls in the gap"),
        ("America/Havana", dt.date(2024, 3, 10), "midnight falls in the gap"),
        ("Pacific/Apia", dt.date(2011, 12, 30), "the skipped day"),
        ("America/Santiago", dt.date(2024, 4, 7), "day after an overlap before midnight"),
        ("Europe/Paris", dt.date(1800, 1, 1), "Paris mean time"),
        ("+05:30", dt.date(1969, 12, 31), "fixed offset"),
    ]:
        days.append({"zone": zone, "day": (day - dt.date(1970, 1, 1)).days, "instant": start_of_day(zone, day), "why": why})

    doc = {
        "generator": "core/tz/testdata/gen_cases.py",
        "tzdata": tzdata_version(),
        "walls": walls,
        "instants": instants,
        "days": days,
    }
    # One case a line, so a diff after regenerating shows which ones changed.
    lines = ["{", f'"generator": {json.dumps(doc["generator"])},', f'"tzdata": {json.dumps(doc["tzdata"])},']
    for i, key in enumerate(["walls", "instants", "days"]):
        rows = [json.dumps(c, separators=(",", ":")) for c in doc[key]]
        lines.append(f'"{key}": [\n' + ",\n".join(rows) + "\n]" + ("," if i < 2 else ""))
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}: {len(walls)} wall times, {len(instants)} instants, {len(days)} days (tzdata {doc['tzdata']})")


def tzdata_version() -> str:
    for folder in zoneinfo.TZPATH:
        p = Path(folder) / "tzdata.zi"
        if p.exists():
            return p.read_text().split("\n", 1)[0].removeprefix("# version ").strip()
    return "unknown"


if __name__ == "__main__":
    main()

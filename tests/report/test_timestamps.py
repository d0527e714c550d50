"""Timestamps in the artifacts (`report.base.now`): RFC 3339 with the offset the machine's zone has at that moment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json
from datetime import datetime
from agenttest.report.base import now
stamp = now()
print(json.dumps([stamp, datetime.fromisoformat(stamp).utcoffset().total_seconds(),
                  datetime.now().astimezone().utcoffset().total_seconds()]))
"""


@pytest.mark.parametrize(("zone", "offset"), [("UTC0", 0), ("IST-5:30", 19800), ("EST5EDT,M3.2.0,M11.1.0", None),
                                              ("XYZ+3:15", -11700)])
def test_a_timestamp_has_the_zones_offset_then(zone: str, offset: int | None) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TZ": zone})
    assert proc.returncode == 0, proc.stderr
    stamp, seen, local = json.loads(proc.stdout)
    assert seen == local                                 # what astimezone() says the offset is
    if offset is not None:
        assert seen == offset
    sign, hours, minutes = ("-" if seen < 0 else "+"), int(abs(seen)) // 3600, int(abs(seen)) % 3600 // 60
    assert stamp.endswith(f"{sign}{hours:02d}:{minutes:02d}")


SEQUENCE = """
import json, time
from datetime import datetime, timedelta, timezone
from agenttest.report import base
stamps = [int(s) for s in json.loads(input())]
out = []
for ns in stamps:
    time.time_ns = lambda ns=ns: ns
    second, micro = divmod(ns // 1000, 1_000_000)
    zone = timezone(timedelta(seconds=time.localtime(second).tm_gmtoff))
    out.append([base.now(), (datetime.fromtimestamp(second, zone) + timedelta(microseconds=micro)).isoformat()])
print(json.dumps(out))
"""


def test_a_timestamp_is_what_datetime_writes_across_a_change_of_summer_time() -> None:
    """`now` works the text of each second out once: every stamp is still `datetime.isoformat()`'s for its instant
    (microseconds dropped when 0, rounded down as datetime.now rounds), and a run that crosses a change of summer
    time stamps each side with its offset (US Eastern, 2026-03-08 07:00:00 UTC)."""
    change = 1772953200 * 10**9
    stamps = [change - 500_000_000, change - 1_000, change, change + 999, change + 1_000, change + 250_000_000,
              change + 250_000_999, change + 7 * 3600 * 10**9 + 123_456_789]
    proc = subprocess.run([sys.executable, "-c", SEQUENCE], input=json.dumps([str(s) for s in stamps]),
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TZ": "EST5EDT,M3.2.0,M11.1.0"})
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads(proc.stdout)
    assert [ours for ours, _ in pairs] == [theirs for _, theirs in pairs]
    assert [ours for ours, _ in pairs][:4] == ["2026-03-08T01:59:59.500000-05:00", "2026-03-08T01:59:59.999999-05:00",
                                               "2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00-04:00"]

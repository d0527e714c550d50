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

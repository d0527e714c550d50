"""`agenttest calibrate`: a judge measured against labelled examples (`command`), read from a labels file
(`labels`), its agreement told as a table and as JSON (`outcome`); the statistics are `agenttest.statistics`."""

from .command import calibrate_command

__all__ = ["calibrate_command"]

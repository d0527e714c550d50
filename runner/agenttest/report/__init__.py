"""Reporters: every artifact (console, report.json, events.jsonl, JUnit, summary, …) listens to the engine's events.

The reporters of a run are built by `reporters.build_reporters`; this package imports nothing itself, so a command
that needs one helper (`report.escape`, `report.verdicts`) does not load every reporter."""

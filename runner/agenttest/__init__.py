"""agenttest: test AI agents in CI."""

__version__ = "0.1.0"

"""`python -m agenttest` is the `agenttest` command."""

from .cli import main

main()

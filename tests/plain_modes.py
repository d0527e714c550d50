"""The CLI in a child interpreter, as a user runs it (`COMMAND`), and the same with the plain reading of options,
config and suite entries turned off (`MODELS_ONLY`: everything read by the pydantic models): the tests of the plain
readers (validate's and run's) compare the two."""

COMMAND = """
import sys
sys.argv = ["agenttest", *sys.argv[1:]]
from agenttest.cli import main
main()
"""
MODELS_ONLY = """
import agenttest.cases.loader as loader
import agenttest.options as options
import agenttest.project as project
project.plain_config = lambda expanded: False
loader.plain_case = lambda value: None
loader.plain_assertion = lambda item: None
options.plain_options = lambda values: None
""" + COMMAND

"""Where agenttest is published — the one place that names it: the GitHub repository that holds the action and the
package (installed from it with pip; `agenttest-ci` is not on PyPI yet). The workflow `agenttest init` writes is
filled in from here; the workflows of the README and docs/, their pip lines and the pre-commit example name the same
coordinates, and tests/test_hosting.py checks that they agree with this file."""

REPOSITORY = "org/agenttest-action"    # owner/name on GitHub
VERSION = "v1"                         # the release tag workflows follow
ACTION = f"{REPOSITORY}@{VERSION}"
PIP_REQUIREMENT = f"agenttest-ci @ git+https://github.com/{ACTION}"

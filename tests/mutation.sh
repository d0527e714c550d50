#!/usr/bin/env bash
# Mutation testing of some modules against their own tests, with mutmut 3 (`.venv/bin/pip install mutmut==3.8.1`):
#
#   tests/mutation.sh WORKDIR 'agenttest/secrets.py agenttest/report/escape.py' tests/test_secrets.py tests/report
#
# MUTANTS='agenttest.secrets.x_mask__mutmut_5 …' runs only those mutants (the survivors of a run, after new tests).
#
# mutmut names a mutated module by its path from where it runs and knows only ./, src/ and source/ as roots, so the
# package is laid out flat in WORKDIR (agenttest/ beside tests/); the tests run in one process (-n 0), as mutmut
# forks a warmed pytest per mutant and runs only the tests that reach the mutated function. Prints the survivors.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work=$1 mutate=$2
shift 2
rm -rf "$work"
mkdir -p "$work/mutants"
cp -r "$repo/runner/agenttest" "$repo/tests" "$repo/examples" "$repo/pyproject.toml" "$repo/README.md" "$work/"
quoted() { printf '"%s", ' "$@"; }
# shellcheck disable=SC2086  # the modules to mutate are one word each
cat >> "$work/pyproject.toml" <<TOML

[tool.mutmut]
source_paths = ["agenttest"]
only_mutate = [$(quoted $mutate)]
pytest_add_cli_args = ["-n", "0", "-p", "no:cacheprovider"]
pytest_add_cli_args_test_selection = [$(quoted "$@")]
TOML
cd "$work"
ulimit -v 3000000     # a mutant that loops appending (find(form, start + 0)) dies of MemoryError, not the machine
# shellcheck disable=SC2086  # mutant names are one word each
"$repo/.venv/bin/mutmut" run --max-children 2 ${MUTANTS:-} >mutmut.log 2>&1 || { tail -30 mutmut.log; exit 1; }
"$repo/.venv/bin/mutmut" results --all true | grep -v ': killed$' || true

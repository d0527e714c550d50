# agenttest's image (the distribution agenttest-ci, the command agenttest):
# `docker run --rm -v "$PWD:/work" -w /work ghcr.io/<owner>/agenttest-ci -i tests.jsonl`, and the GitHub Action
# (action.yml runs it with the argument `action`).
# No USER: docker actions run as root (the runner's workspace and file-command files need it; agenttest hands the
# files it writes back to the workspace owner). No WORKDIR: the runner sets --workdir /github/workspace.

FROM python:3.12-slim AS build
COPY pyproject.toml README.md /src/
COPY runner /src/runner
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels /src

FROM python:3.12-slim
LABEL org.opencontainers.image.title="agenttest-ci" \
      org.opencontainers.image.description="Test AI agents from CI: JSONL suites, JUnit XML, job summaries, annotations" \
      org.opencontainers.image.licenses="MIT"
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels /wheels
# System-wide (not --user): HOME is /github/home at run time, so a user site would be invisible.
RUN pip install --no-cache-dir /wheels/agenttest_ci-*.whl && rm -rf /wheels
ENTRYPOINT ["agenttest"]

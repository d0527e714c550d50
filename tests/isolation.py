"""The process-wide registries emptied for a block and put back after it: the secrets to mask and the URLs as shown
(remembered until the next secret), which a test registering a secret would otherwise change for every later one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agenttest import secrets
from agenttest.agents import urls


@contextmanager
def fresh_registries(*secret_values: str) -> Iterator[None]:
    """Inside the block only `secret_values` are registered, and no URL was shown before."""
    saved = (secrets._SECRETS, secrets._FORMS, secrets._JSON_FORMS, secrets._JSON_FORMS_UTF8, secrets._LONGEST,
             secrets._NUMBERS, urls._shown)
    secrets._SECRETS, secrets._FORMS, secrets._JSON_FORMS, secrets._JSON_FORMS_UTF8, secrets._LONGEST, \
        secrets._NUMBERS = set(), (), (), (), 0, frozenset()
    urls._shown = {}
    try:
        for value in secret_values:
            secrets.register_secret(value)
        yield
    finally:
        (secrets._SECRETS, secrets._FORMS, secrets._JSON_FORMS, secrets._JSON_FORMS_UTF8, secrets._LONGEST,
         secrets._NUMBERS, urls._shown) = saved

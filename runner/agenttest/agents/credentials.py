"""Which setting names hold credentials, and registering the credentials written in request headers as secrets."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..secrets import register_secret

# A header (`Authorization`, `X-Api-Key`, `Cookie`) or environment variable (`OPENAI_API_KEY`, `DB_PASSWORD`) whose
# value is a credential. One pattern for both, so a value is a secret however it reached the config.
CREDENTIAL_NAME = re.compile(r"authorization|cookie|key|token|secret|passw(?:or)?d|credential", re.IGNORECASE)


def register_header_secrets(headers: Mapping[str, str]) -> None:
    """Treat values of credential-looking headers as secrets even when written literally in the config. Of
    `<scheme> <credential>` (`Bearer …`, `Basic …`) the credential is the secret."""
    for name, value in headers.items():
        if CREDENTIAL_NAME.search(name):
            scheme, _, credential = value.partition(" ")
            register_secret(credential if credential and scheme.isalpha() else value)

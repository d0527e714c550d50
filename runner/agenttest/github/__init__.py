"""GitHub: the Actions protocol, the REST client, the pull-request comment and the baseline artifact."""

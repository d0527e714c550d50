"""The GitHub Actions protocol: the log guard, workflow commands, annotations, step outputs, the step summary, the
runner's environment and the Action's entrypoint.

Next to come here: the REST client, the pull-request comment and the artifact baseline. The package imports nothing
itself, so a module that needs one piece (`log.write_line`, `environment.in_github_actions`) loads only that piece.
"""

"""The GitHub Actions protocol: the log guard, workflow commands, annotations, step outputs, the step summary, the
runner's environment and the Action's entrypoint; the REST client (`rest`), the pull-request comment (`comment`,
`comment_markdown`) and the base branch's report fetched from its artifact (`baseline`). The package imports nothing
itself, so a module that needs one piece (`log.write_line`, `environment.in_github_actions`) loads only that piece.
"""

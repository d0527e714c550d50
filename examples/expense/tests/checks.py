"""Script assertions for the example suite: any Python callable taking (output, input, value, response)."""


def mentions_reference(output, input, value, response):
    """Passes when the reply quotes an expense reference like EXP-1001."""
    text = output if isinstance(output, str) else ""
    if "EXP-" in text:
        return True
    return {"pass": False, "message": f"no expense reference in {text[:60]!r}"}

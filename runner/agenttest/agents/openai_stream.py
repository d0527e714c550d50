"""A streamed chat completion (server-sent chunks) reassembled into the reply the non-streaming API gives."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from ..errors import AgentCallError
from .openai_chat import raise_error_object
from .replies import snippet
from .sse import SSEEvent, iter_sse

if TYPE_CHECKING:
    import aiohttp


class StreamAssembler:
    """Rebuilds one chat completion from its chunks: content pieces appended, tool calls gathered by `index` with
    their arguments concatenated, the last finish_reason, model and usage kept."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.model: str | None = None
        self.usage: Any = None

    def add(self, chunk: dict[str, Any]) -> None:
        """Take one `chat.completion.chunk`."""
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        if isinstance(delta.get("content"), str):
            self.content.append(delta["content"])
        if isinstance(delta.get("refusal"), str):
            self.refusal.append(delta["refusal"])
        for position, piece in enumerate(delta.get("tool_calls") or []):
            if isinstance(piece, dict):
                self._add_call_piece(piece, position)

    def _add_call_piece(self, piece: dict[str, Any], position: int) -> None:
        index = piece.get("index") if isinstance(piece.get("index"), int) else self._unindexed(piece, position)
        call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        function = piece.get("function") if isinstance(piece.get("function"), dict) else {}
        # Ids and names arrive whole in the first piece (some servers repeat them); arguments arrive in pieces.
        if piece.get("id") and not call["id"]:
            call["id"] = str(piece["id"])
        if function.get("name") and not call["name"]:
            call["name"] = str(function["name"])
        if isinstance(function.get("arguments"), str):
            call["arguments"] += function["arguments"]

    def _unindexed(self, piece: dict[str, Any], position: int) -> int:
        """Where a piece without `index` goes (Gemini's OpenAI-compatible API sends each call whole, in chunks of
        its own, with no index): a piece with an id is the call of that id, or a new call; one without continues
        the last call (the first: the position-th)."""
        ident = piece.get("id")
        if ident:
            for index, call in self.calls.items():
                if call["id"] == str(ident):
                    return index
            return max(self.calls, default=-1) + 1
        return max(self.calls) if self.calls else position

    def completion(self) -> dict[str, Any]:
        """The assembled reply in the non-streaming shape."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) if self.content else None}
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [
                {"id": call["id"] or f"call_{index}", "type": "function",
                 "function": {"name": call["name"], "arguments": call["arguments"]}}
                for index, call in sorted(self.calls.items())]
        reply: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
                                 "usage": self.usage}
        if self.model:
            reply["model"] = self.model
        return reply


FINISHED_GRACE = 2.0     # seconds a stream is read after its finish_reason: for the usage chunk and `[DONE]`


async def read_stream(response: aiohttp.ClientResponse, shown: str) -> dict[str, Any]:
    """The completion a text/event-stream reply carries, up to `[DONE]` (or the end of the stream once a
    finish_reason came; a server that then holds the stream open is waited for FINISHED_GRACE seconds at most).
    Raises AgentCallError for a bad chunk, an error event or a stream cut short."""
    assembler = StreamAssembler()
    done = False
    events = iter_sse(response)
    try:
        while True:
            try:
                if assembler.finish_reason is None:
                    event = await anext(events)
                else:
                    event = await asyncio.wait_for(anext(events), FINISHED_GRACE)
            except (StopAsyncIteration, asyncio.TimeoutError):
                break
            if _take(event, assembler, shown):
                done = True
                break
    finally:
        await events.aclose()
    if not done and assembler.finish_reason is None:
        raise AgentCallError(f"the event stream from {shown} ended before the reply was complete "
                             "(no finish_reason, no [DONE])")
    return assembler.completion()


def _take(event: SSEEvent, assembler: StreamAssembler, shown: str) -> bool:
    """Add one event to the completion; True when it is `[DONE]`."""
    if event.event == "error":
        raise AgentCallError(f"error event in the stream from {shown}: {snippet(event.data)}")
    if event.data.strip() == "[DONE]":
        return True
    try:
        chunk = json.loads(event.data)
    except ValueError:
        raise AgentCallError(f"invalid JSON in the event stream from {shown}: {snippet(event.data)}") from None
    if not isinstance(chunk, dict):
        raise AgentCallError(f"unexpected event in the stream from {shown}: {snippet(event.data)}")
    raise_error_object(chunk, shown)
    assembler.add(chunk)
    return False

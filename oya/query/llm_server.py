"""Answers from an OpenAI-compatible server (llama.cpp's llama-server, vLLM, Ollama ...).

The same answering loop as a local model (``oya.query.llm._ModelAnswerer``: fenced prompt,
guarded stream, citation checks, extractive fallback); only the transport differs: a streamed
``POST URL/v1/chat/completions`` with the standard library, the answer schema sent as
``response_format``. A server that ignores the schema's order (answer before citations) has
its text held back until the citations are checked.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

from oya.errors import ModelError
from oya.query.llm import ANSWER_SCHEMA, DEFAULT_TIME_LIMIT, MAX_TOKENS, TEMPERATURE, _ModelAnswerer


class OpenAIServerAnswerer(_ModelAnswerer):
    """Answers through ``URL/v1/chat/completions`` with the standard library only (streamed SSE)."""

    name = "openai-server"

    def __init__(
        self,
        url: str,
        *,
        model: str = "default",
        time_limit: float = DEFAULT_TIME_LIMIT,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        super().__init__(time_limit=time_limit, max_tokens=max_tokens)
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--llm-server needs an http:// or https:// URL, not {url!r}")
        base = url.rstrip("/")
        self.endpoint = (
            base
            if base.endswith("/chat/completions")
            else (base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions"))
        )
        self.model = model

    def _stream(self, messages: list[dict[str, str]], deadline: float) -> Iterator[str]:
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": TEMPERATURE,
            "max_tokens": self.max_tokens,
            "stream": True,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": ANSWER_SCHEMA},
            },
        }
        request = urllib.request.Request(
            self.endpoint,
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
        )
        timeout = max(1.0, deadline - time.monotonic())
        try:
            response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - user-given URL
        except urllib.error.URLError as exc:
            raise ModelError(f"cannot reach {self.endpoint}: {exc.reason}") from exc
        with response:
            content_type = response.headers.get("Content-Type", "")
            if "text/event-stream" not in content_type:  # a server that ignored stream=True
                data = json.loads(response.read().decode("utf-8"))
                yield data["choices"][0]["message"]["content"] or ""
                return
            for raw in response:
                line = raw.decode("utf-8").strip()
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    return
                choice = json.loads(payload)["choices"][0]
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    yield piece

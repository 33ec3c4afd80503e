"""The `openai` backend: any OpenAI-compatible chat-completions endpoint, sent on aiohttp (`direct`) or through the
official SDK (`sdk`)."""

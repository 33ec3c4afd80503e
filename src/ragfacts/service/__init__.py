"""`ragfacts serve`: check, recall and evaluate over HTTP, one shared model, gates in every response.

Needs the `serve` extra (FastAPI, uvicorn, prometheus-client): pip install 'ragfacts[serve]'.

    from ragfacts.service import ServiceSettings, create_app
    app = create_app(ServiceSettings(runtime=Settings(model="openai:gpt-4o-mini"), max_concurrent=16))
"""

from ragfacts.service.app import create_app
from ragfacts.service.server import serve
from ragfacts.service.settings import DEFAULT_TOKEN_ENV, ServiceSettings

__all__ = ["DEFAULT_TOKEN_ENV", "ServiceSettings", "create_app", "serve"]

"""The Anthropic Messages API adapter (Claude, and local servers that speak the API).

Importing this package does not import the SDK; ``load_sdk`` does, off the event loop."""

from core.agent.providers.anthropic.client import AnthropicProvider, load_sdk
from core.agent.providers.anthropic.errors import map_error

__all__ = ["AnthropicProvider", "load_sdk", "map_error"]

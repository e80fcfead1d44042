"""jubensha: LLM agents that play murder-mystery games, and benchmarks that measure them."""

__version__ = "0.1.0"

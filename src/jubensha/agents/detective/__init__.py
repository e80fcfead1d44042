"""Internal.

The detective agent (architecture ``detective``): an evidence ledger chooses what to say
and whom to suspect; the seat's model writes every word (``docs/agents/detective.md``)."""

from jubensha.agents.detective.agent import DetectiveAgent
from jubensha.agents.detective.config import DetectiveConfig

__all__ = ["DetectiveAgent", "DetectiveConfig"]

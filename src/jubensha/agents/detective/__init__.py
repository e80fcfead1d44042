"""Internal.

The detective agent (architecture ``detective``): the seat's model reads each text with
narrow questions, the framework adds the readings up into whom it suspects, and the model
writes every word; ``ledger`` is the same agent voting by a model-free evidence ledger
(``docs/agents/detective.md``)."""

from jubensha.agents.detective.agent import DetectiveAgent, LedgerAgent
from jubensha.agents.detective.config import DetectiveConfig

__all__ = ["DetectiveAgent", "DetectiveConfig", "LedgerAgent"]

"""Internal.

ThinkThrice (Wu et al., "Deciphering Digital Detectives"): an agent that answers with
Memory Retrieval, Self-Refinement and Self-Verification; see ``docs/agents/thinkthrice.md``."""

from jubensha.agents.thinkthrice.agent import ThinkThriceAgent
from jubensha.agents.thinkthrice.config import ABLATIONS, ThinkThriceConfig

__all__ = ["ABLATIONS", "ThinkThriceAgent", "ThinkThriceConfig"]

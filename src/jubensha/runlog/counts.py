"""Internal.

A run's cost counted as MPIRD-LLMA's table 2 does: environment tokens and requests, agent
output tokens and requests, and output-parsing failures.

The paper (section 4) counts as *environment* every request made during the game and its
input tokens ("Env Tokens / Envs"), and as *user* the agents' own completions and their
output tokens, leaving out summarisation and clue investigation ("User Tokens / Users").
Here every call record of the run is a request; a call whose purpose starts with one of
``ENVIRONMENT_PREFIXES`` (the summaries) is environment work only. A parsing failure is a
structured reply that did not validate (each failed attempt counts) or a free-text reply
that had to be asked again (purposes ending in ``.retry``).
"""

from __future__ import annotations

from pydantic import BaseModel

from jubensha.llm.calls import CallRecord

ENVIRONMENT_PREFIXES = ("summarise.",)
RETRY_SUFFIX = ".retry"


class CallCounts(BaseModel):
    env_tokens: int = 0
    env_requests: int = 0
    user_tokens: int = 0
    user_requests: int = 0
    parse_failures: int = 0

    def add(self, record: CallRecord) -> None:
        self.env_tokens += record.usage.prompt_tokens
        self.env_requests += 1
        purpose = record.purpose or ""
        if not purpose.startswith(ENVIRONMENT_PREFIXES) and record.error is None:
            self.user_tokens += record.usage.completion_tokens
            self.user_requests += 1
        if record.parse_error is not None or purpose.endswith(RETRY_SUFFIX):
            self.parse_failures += 1

    @classmethod
    def of(cls, records: list[CallRecord]) -> CallCounts:
        counts = cls()
        for record in records:
            counts.add(record)
        return counts

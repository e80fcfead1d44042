"""The table: seats, the host's procedure, events and who sees them, voting, the outcome.

What an agent author needs (the agent interface, the decisions it is asked and the actions
it answers with, the events it observes) and what a stage author needs (``StageSpec``,
``register_stage``, ``register_decision`` for a new kind of move, the ``Table``, the
``check_*`` corrections) come from here;
docs/architecture.md shows how they fit. The other modules are internal: the game runner
and the procedures are driven through ``jubensha.runs`` and the CLI.
"""

from jubensha.engine.agent import (
    Agent,
    CharacterSheet,
    DecisionRoutes,
    PersonAgent,
    PublicCharacter,
    SeatContext,
    UnsupportedDecision,
)
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    Action,
    AskQuestions,
    BaseAction,
    BaseDecision,
    CastVote,
    Decision,
    DecisionKind,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    Speak,
    Speech,
    TakeTurn,
    Vote,
    register_decision,
)
from jubensha.engine.drafts import Draft, DraftHook, DraftSink, draft_sink, drafting
from jubensha.engine.events import (
    Accused,
    ActStarted,
    Audience,
    ClueRevealed,
    Event,
    Failure,
    GameEnded,
    HostSpoke,
    Investigated,
    Rated,
    SpeechKind,
    Spoke,
    StageStarted,
    VictimOutcome,
    VoteCast,
)
from jubensha.engine.registry import StageSpec, register_stage
from jubensha.engine.stages import check_choice, check_questions, check_speech
from jubensha.engine.table import Table
from jubensha.engine.voting import NOBODY

__all__ = [
    "NOBODY",
    "Accusation",
    "Accuse",
    "Accused",
    "ActStarted",
    "Action",
    "Agent",
    "AskQuestions",
    "Audience",
    "BaseAction",
    "BaseDecision",
    "CastVote",
    "CharacterSheet",
    "ClueRevealed",
    "Decision",
    "DecisionKind",
    "DecisionRoutes",
    "Draft",
    "DraftHook",
    "DraftSink",
    "Event",
    "Failure",
    "GameEnded",
    "HostSpoke",
    "Investigate",
    "Investigated",
    "PersonAgent",
    "PublicCharacter",
    "Questions",
    "RateStatement",
    "Rated",
    "Rating",
    "SeatContext",
    "Speak",
    "Speech",
    "SpeechKind",
    "Spoke",
    "StageSpec",
    "StageStarted",
    "Table",
    "TakeTurn",
    "UnsupportedDecision",
    "VictimOutcome",
    "Vote",
    "VoteCast",
    "check_choice",
    "check_questions",
    "check_speech",
    "draft_sink",
    "drafting",
    "register_decision",
    "register_stage",
]

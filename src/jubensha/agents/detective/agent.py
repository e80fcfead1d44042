"""Internal.

The detective agent (architecture ``detective``): the model reads, the framework asks and
adds up; the model writes every word.

Small models answer narrow questions far better than open ones, and left with a whole
sheet they read it out or lose the thread. So each decision is split into small steps:

- **readings**: the seat's model reads each text it has seen with narrow questions
  (``Inquiry``, ``Reader``) and the framework adds them up by motive, means and opportunity
  (``Case``); votes and accusations go to the top of the case, with the reading that
  weighs most as the reason; questions go to the most suspicious seat asked least, about
  where it was or what points at it. ``ledger`` (``LedgerAgent``) ranks by the model-free
  evidence ledger (``Ledger``) instead, which also breaks the case's ties.
- **what to say**: chosen here, without a model. Speech is written from a few *notes*,
  facts of the seat's own sheet picked for the decision (``Knowledge``): for an
  introduction, who the seat is to the victim and where it was; for an answer, the facts
  that match the question. A civilian never volunteers a listed secret; a murderer never
  says anything about its kill and tells its *cover*, its day up to the crime.
- **words**: one short call of the seat's model per public text (a speech, a question, a
  reason), from a short prompt holding the notes; speeches stream to the live views as
  they are written (``engine.drafts``).

Each seat writes its case (or ledger) at every vote, and a murderer its plan at the start,
to the run's call log (purposes ``detective.ledger`` and ``detective.plan``, no model call), so
a spectator reading the log sees why each seat voted as it did.
``docs/agents/detective.md`` describes it whole.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from jubensha.agents.detective.case import Point, Weighed, overlap
from jubensha.agents.detective.config import DetectiveConfig
from jubensha.agents.detective.inquiry import Inquiry
from jubensha.agents.detective.knowledge import Knowledge, name_forms
from jubensha.agents.detective.ledger import Ledger
from jubensha.agents.detective.reading import (
    company,
    death_minute,
    near,
    owner,
    place_owners,
)
from jubensha.agents.detective.readings import Reader
from jubensha.agents.detective.relevance import Relevance
from jubensha.agents.extractive_text import kill_words, sentences
from jubensha.agents.toolkit import Caller, chat, nonempty, speak
from jubensha.engine import (
    NOBODY,
    Accusation,
    Accuse,
    Accused,
    ActStarted,
    Agent,
    AskQuestions,
    CastVote,
    ClueRevealed,
    Event,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    SeatContext,
    Speak,
    Speech,
    Spoke,
    TakeTurn,
    Vote,
)
from jubensha.llm import declare
from jubensha.prompts import render

TESTIMONY = ("introduction", "answer", "clue_share")
NOTHING = Point("", 0.0, "", "")
"""What decided a choice when no reading and no ledger entry did."""
"""What a seat says of what it knows. A question tells only what the asker wonders, and a
statement or reasoning what the speaker concludes: taken as evidence, a table's
suspicions feed on themselves (measured: votes on the murderer fell from 0.13 to 0.10 on
the imported scripts the weights were checked on, docs/agents/detective.md)."""
OWN_WINDOW = 90
"""Minutes around the death within which a sentence of the own sheet that names another
seat is worth a reading (untimed ones are not read: they cost a call each, and what they
tell of others, a grudge or a key, the clue cards tell the whole table)."""
PLAN = declare("detective.plan", "seat")
LEDGER = declare("detective.ledger", "seat")


class DetectiveAgent(Agent):
    architecture = "detective"

    def __init__(self, config: DetectiveConfig | None = None) -> None:
        self.config = config or DetectiveConfig()
        self.uses_model = self.config.phrase or self.config.votes == "readings"
        self.inquiry: Inquiry | None = None
        self.asked: Counter[str] = Counter()
        self.clues: list[str] = []
        self.turns = 0

    @classmethod
    def from_option(cls, option: str) -> DetectiveAgent:
        return cls(DetectiveConfig.parse(option))


    # -- the start ---------------------------------------------------------------------------
    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.victims = [v.name for v in sheet.victims]
        self.names = name_forms(sheet)
        self.deaths = self.death_texts()
        self.knowledge = Knowledge(sheet, self.names, crime=" ".join(self.deaths))
        profiles = {o.name: o.description for o in sheet.others}
        profiles[self.name] = sheet.me.description
        self.relevance = Relevance(seat.embedder, self.knowledge.tokens, self.config.threshold)
        self.relevance.set_evidence(self.deaths)
        self.death = death_minute(self.deaths)
        self.ledger = Ledger(self.name, sheet.seat_names, profiles, self.relevance,
                             self.config)
        if self.config.votes == "readings" and seat.model is not None:
            self.inquiry = Inquiry(Reader.of(Caller.for_seat(seat)), self.names, self.name,
                                   self.victims, self.config.read_limit,
                                   self.config.weights())
            for text in self.deaths:
                self.inquiry.death(text, known=True)
        self.note_own(range(len(self.knowledge.facts)))
        if self.knowledge.murderer:
            self.write_plan()

    def death_texts(self) -> list[str]:
        """What the table knows of the death before any clue: the background's sentences
        about a victim or a killing, and the victims' descriptions."""
        sheet = self.seat.sheet
        about = [s for s in sentences(sheet.background)
                 if self.names.mentioned(s, self.victims) or kill_words(s)]
        return [*about, *(f"{v.name}: {v.description}" for v in sheet.victims)]

    def note_own(self, numbers: Any) -> None:
        for number in numbers:
            text = self.knowledge.facts[number].text
            named = self.names.mentioned(text, self.seats())
            self.ledger.add("own", text, named, "own")
            if self.inquiry is not None and near(text, self.death, OWN_WINDOW):
                self.inquiry.text(text, named, "own")
                self.inquiry.death(text)
            if near(text, self.death):
                self.ledger.add("alibi", text, company(text, named, self.names), "own")

    def seats(self) -> list[str]:
        return self.seat.sheet.seat_names

    def write_plan(self) -> None:
        cover = [self.knowledge.voice(i) for i in
                 self.knowledge.introduction(self.victims, self.config.notes)]
        withheld = Counter(self.knowledge.withheld.values())
        self.seat.note(purpose=PLAN, shown="\n".join(cover),
                       said=render("detective", "plan", self.lang, cover=cover,
                                   withheld=sum(withheld.values())),
                       notes=[f"{why}: {count}" for why, count in withheld.items()])

    # -- observing ---------------------------------------------------------------------------
    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted):
            await self.observe_act(event)
        elif isinstance(event, ClueRevealed):
            await self.observe_clue(event)
        elif isinstance(event, Spoke) and event.speaker != self.name \
                and event.kind in TESTIMONY:
            others = [s for s in self.seats() if s != event.speaker]
            self.ledger.add("heard", event.text, self.names.mentioned(event.text, others),
                            event.speaker)
            self.ledger.add("told", event.text, [event.speaker], event.speaker)
            if self.inquiry is not None:
                self.read_testimony(event.text, event.speaker, others)
        elif isinstance(event, Accused) and event.accused and event.accuser != self.name:
            self.ledger.add("accused", event.reason or event.accused, [event.accused],
                            event.accuser)

    def read_testimony(self, text: str, speaker: str, others: list[str]) -> None:
        """Queue a speech sentence by sentence: each about the seats it names, or about
        the speaker when it names none (what the speaker says of itself). A whole speech
        read at once was read as a motive of everyone it named (measured: every suspect
        of a Chinese game had "motive" from the introductions)."""
        assert self.inquiry is not None
        for sentence in sentences(text):
            named = self.names.mentioned(sentence, others)
            self.inquiry.text(sentence, named or [speaker], speaker)

    async def observe_act(self, event: ActStarted) -> None:
        if event.sheet is not None:
            known = len(self.knowledge.facts)
            self.knowledge.learn_act(event.sheet)
            self.note_own(range(known, len(self.knowledge.facts)))
        elif event.public_text:
            self.relevance.set_evidence([*self.relevance.evidence, event.public_text])

    async def observe_clue(self, event: ClueRevealed) -> None:
        text = f"{event.text} {event.caption}" if event.caption else event.text
        labelled = " ".join(x for x in (event.location, event.title, text) if x)
        if event.audience != "public":
            self.clues.append(event.text)
        clues = [t for t in self.relevance.evidence if t not in self.deaths]
        self.relevance.set_evidence([*clues, labelled])
        source = event.title or "clue"
        if self.inquiry is not None:
            self.inquiry.text(text, self.names.mentioned(labelled, self.seats()), "clue")
            self.inquiry.death(text)
        places = place_owners(event.location or "", self.ledger.profiles, self.names)
        for seat in dict.fromkeys([*self.names.mentioned(labelled, self.seats()), *places]):
            owned = seat in places or owner(event.text, seat, self.names)
            self.ledger.add("clue_name", text, [seat], source,
                            1.0 if owned else self.config.mention)
        await self.ledger.add_clue_links(labelled, source)

    # -- deciding ------------------------------------------------------------------------------
    async def on_speak(self, decision: Speak) -> Speech:
        if decision.kind == "introduction":
            notes = self.knowledge.tell(self.knowledge.introduction(self.victims,
                                                                    self.config.notes))
            return await self.speech(decision.kind, "introduce", notes)
        if decision.kind == "answer" and decision.question is not None:
            return await self.answer(decision)
        if decision.kind == "clue_share":
            notes = self.held_clues()
            return await self.speech(decision.kind, "speak", notes, prompt=decision.prompt,
                                     suspect=None, reason="")
        suspect, decided = await self.top_suspect(self.seats())
        reason = decided.text
        query = " ".join([*self.victims, reason])
        seen = self.witnessed()[:self.config.notes - 1]
        found = self.knowledge.best(query, self.config.notes - 1 - len(seen))
        notes = [*self.held_clues()[:1], *self.knowledge.tell([*seen, *found])]
        return await self.speech(decision.kind, "speak", notes[:self.config.notes],
                                 prompt=decision.prompt, suspect=suspect, reason=reason)

    def witnessed(self) -> list[int]:
        """A civilian's own sayable facts that place another seat in the window of the
        death (an alibi, a sighting): what the table needs from it most when it states
        its case, since nobody else can tell it."""
        if self.inquiry is None or self.knowledge.murderer:
            return []
        window = self.inquiry.case.window(self.victims[0])
        texts = {f.text for f in self.inquiry.case.findings if f.source == "own"
                 and f.fact == "whereabouts" and overlap(f, window) > 0}
        return [i for i in self.knowledge.sayable() if self.knowledge.facts[i].text in texts
                and i not in self.knowledge.said]

    def held_clues(self) -> list[str]:
        """The clue cards only this seat holds that it may show: a civilian's all, a
        murderer's those that tell nothing of its kill."""
        return [c for c in self.clues if not self.knowledge.murderer
                or self.knowledge.guard.direct(c) is None]

    async def answer(self, decision: Speak) -> Speech:
        question = decision.question
        assert question is not None
        query = self.names.strip(question.text, [self.name])
        found = self.knowledge.best(query, self.config.notes - 1)
        if self.knowledge.murderer:  # its cover first, whatever it is asked
            cover = self.knowledge.introduction(self.victims, self.config.notes)
            found = [*[i for i in cover if i not in found][-1:], *found][:self.config.notes - 1]
        return await self.speech("answer", "answer", self.knowledge.tell(found),
                                 asker=question.speaker, question=question.text)

    async def on_ask(self, decision: AskQuestions) -> Questions:
        target, topics = await self.question_plan(decision.candidates, decision.count)
        questions = [await self.question(target, topic) for topic in topics]
        return Questions(target=target, questions=questions)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        """Every other turn searches the next place not searched yet (in the listed order),
        while places remain; the others question the most suspicious seat."""
        self.turns += 1
        if decision.locations and self.turns % 2 == 0:
            place = decision.locations[(self.turns // 2 - 1) % len(decision.locations)]
            return Investigate(location=place)
        target, topics = await self.question_plan(decision.candidates, 1)
        return Questions(target=target, questions=[await self.question(target, topics[0])])

    async def on_rate(self, decision: RateStatement) -> Rating:
        """Doubt 2 for the most suspicious seat, 1 for one in the upper half of the ledger,
        else 0; trust is the rest of 2."""
        ranking = [w.name for w in await self.ranking(self.seats())]
        speaker = decision.statement.speaker
        place = ranking.index(speaker) if speaker in ranking else len(ranking)
        doubt = 2 if place == 0 else 1 if place < len(ranking) / 2 else 0
        return Rating(trust=2 - doubt, doubt=doubt)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        suspect, decided = await self.top_suspect(decision.candidates)
        said = await self.write("accuse", "accuse", self.config.reason_tokens,
                                suspect=suspect, victims=self.victims,
                                fallback=self.deciding(suspect, decided),
                                kind=decided.kind, reason=decided.text)
        return Accusation(target=suspect, reason=said)

    async def on_vote(self, decision: CastVote) -> Vote:
        """The ballot, and as its reason the reading that decided it, quoted: a ballot is
        private, so no model words it (a 1.5B model's words strayed from the reading)."""
        seats = [c for c in decision.candidates if c != NOBODY]
        if not seats:
            return Vote(target=NOBODY if NOBODY in decision.candidates else None)
        suspect, decided = await self.top_suspect(seats, decision.victim)
        self.write_ledger(seats, decision.victim)
        return Vote(target=suspect, reason=self.deciding(suspect, decided))

    def deciding(self, suspect: str, decided: Point) -> str:
        """What decided a choice, in the seat's language: the kind of reading, who told
        it, and its text."""
        return render("detective", "deciding", self.lang, suspect=suspect,
                      victims=self.victims, kind=decided.kind, source=decided.source,
                      text=decided.text).strip()

    # -- choosing ------------------------------------------------------------------------------
    async def ranking(self, candidates: list[str], victim: str | None = None
                      ) -> list[Weighed]:
        """The candidates, most suspicious first: by the readings added up (the ledger
        breaks ties), or by the ledger alone when the seat takes no readings."""
        await self.ledger.refresh()
        ledger = dict(self.ledger.suspicion(candidates))
        if self.inquiry is not None:
            return await self.inquiry.rank(candidates, victim, ledger)
        by_ledger = sorted(candidates, key=lambda name: -ledger.get(name, 0.0))
        return [Weighed(name, tiebreak=ledger.get(name, 0.0)) for name in by_ledger]

    async def top_suspect(self, candidates: list[str], victim: str | None = None
                          ) -> tuple[str, Point]:
        """The most suspicious candidate and what weighs most against it: the reading
        that decided it, else the ledger's strongest entry (kind ``evidence``), else
        ``NOTHING``."""
        ranked = await self.ranking(candidates, victim)
        if not ranked:
            return candidates[0], NOTHING
        suspect = ranked[0]
        if suspect.reasons:
            return suspect.name, suspect.reasons[0]
        entries = self.ledger.reasons(suspect.name)
        if not entries:
            return suspect.name, NOTHING
        return suspect.name, Point("evidence", entries[0].points(self.config), entries[0].text,
                                   entries[0].source)

    async def question_plan(self, candidates: list[str], count: int) -> tuple[str, list[str]]:
        """Whom to ask (the most suspicious seat asked least so far) and about what: what
        weighs most against it; "" asks where it was, first of all when no reading yet
        says where it was at the time of the death."""
        ranked = [w.name for w in await self.ranking(candidates)] or list(candidates)
        target = min(ranked, key=lambda name: (self.asked[name], ranked.index(name)))
        self.asked[target] += 1
        topics = [self.topic(text, target) for text in self.against(target, count)]
        return target, (topics + [""] * count)[:count]

    def against(self, target: str, count: int) -> list[str]:
        """The texts to ask ``target`` about: its strongest readings (none while nothing
        places it at the time), else the ledger's entries."""
        if self.inquiry is not None:
            weighed = self.inquiry.case.weigh([target], self.victims[0])[0]
            placed = any(p.kind in ("scene", "alibi", "claimed alibi")
                         for p in weighed.points)
            return [p.text for p in weighed.reasons[:count]] if placed else []
        entries = self.ledger.reasons(target, count, ("clue_name", "clue_link", "own",
                                                      "heard"))
        return [e.text for e in entries]

    def topic(self, text: str, target: str) -> str:
        """The sentence of an entry to ask about: the first that names ``target`` (a whole
        one before a scrap quoted with "..."), else the first."""
        found = list(sentences(text))
        named = [s for s in found if self.names.mentioned(s, [target])]
        whole = [s for s in named if "..." not in s and "…" not in s]  # no quoted scraps
        return (whole or named or found or [text])[0]

    def write_ledger(self, candidates: list[str], victim: str | None = None) -> None:
        """The seat's standing of each candidate at a vote, for the run's log."""
        if self.inquiry is not None:
            ranked = self.inquiry.case.weigh(candidates, victim or self.victims[0])
            lines = [f"{w.name}: {w.score:.2f}" + (" (cleared)" if w.cleared else "") + "".join(
                f"\n  {p.kind} {p.points:+.2f} ({p.source}): {p.text[:160]}" for p in w.points)
                for w in ranked]
            if self.inquiry.unread:
                lines.append(f"unread: {self.inquiry.unread}")
            self.seat.note(purpose=LEDGER,
                           shown="\n".join(lines), said=ranked[0].name if ranked else "")
            return
        ledger = self.ledger.suspicion(candidates)
        lines = [f"{name}: {score:.2f}" + "".join(
            f"\n  {e.kind} {e.points(self.config):.2f}: {e.text[:160]}"
            for e in self.ledger.reasons(name, 3)) for name, score in ledger]
        self.seat.note(purpose=LEDGER, shown="\n".join(lines),
                       said=ledger[0][0] if ledger else "")

    # -- words ---------------------------------------------------------------------------------
    def system(self) -> str:
        sheet = self.seat.sheet
        return render("detective", "system", self.lang, me=self.name, title=sheet.title,
                      description=sheet.me.description, victims=self.victims,
                      others=[o.name for o in sheet.others], sentences=self.config.sentences,
                      murderer=self.knowledge.murderer)

    async def speech(self, kind: str, template: str, notes: list[str],
                     **values: Any) -> Speech:
        text = await self.write(kind, template, self.config.max_tokens, notes=notes,
                                victims=self.victims, murderer=self.knowledge.murderer,
                                fallback=" ".join(notes), **values)
        return Speech(text=nonempty(text, kind))

    async def question(self, target: str, topic: str) -> str:
        dry = render("detective", "dry_question", self.lang, target=target, topic=topic,
                     victims=self.victims)
        text = await self.write("question", "ask", self.config.question_tokens,
                                target=target, topic=topic, victims=self.victims,
                                fallback=dry)
        return text or dry

    async def write(self, purpose: str, template: str, max_tokens: int, *, fallback: str,
                    **values: Any) -> str:
        """The model's words for a prompt (``fallback`` as it is in a dry run), as one
        line of this seat's speech; speeches stream to the live views."""
        if not self.config.phrase:
            return fallback
        asked = render("detective", template, self.lang, me=self.name,
                       sentences=self.config.sentences, **values)
        caller = Caller.for_seat(self.seat, temperature=self.config.temperature)
        return await speak(self, caller, purpose, chat(asked, self.system()),
                           names=self.seats(), limit=self.config.speech_chars,
                           max_tokens=max_tokens)


class LedgerAgent(DetectiveAgent):
    """The model-free baseline ``ledger``: the detective whose suspicion is its evidence
    ledger, with no readings (``ledger:phrase=false`` uses no model at all)."""

    architecture = "ledger"

    @classmethod
    def from_option(cls, option: str) -> LedgerAgent:
        return cls(DetectiveConfig.parse(option).model_copy(update={"votes": "ledger"}))

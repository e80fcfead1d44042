"""Internal.

The extractive agent (architecture ``extractive``): a player that uses no language model.

It says only sentences of its own script, picked by BM25 (``memory.lexical``), inside
template lines (``prompts/extractive``); it questions, accuses and votes for the seat that its
lexical evidence makes most suspicious. It is deterministic and fast: the floor of every
benchmark table, the quickest smoke test of a procedure, the offline player for large
batches. A civilian answers truthfully from everything it knows; a murderer never says a
sentence about its kill or its secrets (``Guard``). ``docs/agents/baselines.md`` gives the
withholding rules and the evidence score.
"""

from __future__ import annotations

from collections import Counter

from jubensha.agents.extractive_knowledge import (
    Evidence,
    ExtractiveConfig,
    Fact,
    Guard,
    sheet_facts,
)
from jubensha.agents.extractive_text import (
    HAN,
    WORD,
    CachedTokenizer,
    NameForms,
    clock_times,
    first_person,
    kill_words,
    lexicon,
    sentences,
)
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
from jubensha.memory.lexical import BM25Index
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet

QUOTABLE = ("answer", "statement", "reasoning", "clue_share")
"""Speech kinds whose sentences a question may quote back (not questions or introductions)."""


class ExtractiveAgent(Agent):
    architecture = "extractive"
    uses_model = False

    def __init__(self, config: ExtractiveConfig | None = None):
        self.config = config or ExtractiveConfig()

    @classmethod
    def from_option(cls, option: str) -> ExtractiveAgent:
        return cls(ExtractiveConfig.parse(option))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.victims = [v.name for v in sheet.victims]
        seats = {self.name: sheet.me.all_names, **{o.name: [o.name] for o in sheet.others}}
        victims = dict.fromkeys([*self.victims, *sheet.me.killed])
        self.names = NameForms({**{v: [v] for v in victims}, **seats})
        self.tokens = CachedTokenizer(keep_words=self.names.keep_words)
        self.guard = Guard(sheet, self.names, self.config) if sheet.is_murderer else None
        self.facts: list[Fact] = []
        self.sayable: list[int] = []
        self.blocked: set[int] = set()
        self.acts = {1} if sheet.me.act_sheet(1) else set()
        self.answers = BM25Index(self.tokens)
        self.evidence = Evidence(self.tokens)
        self.bonus: dict[str, float] = {}
        self.asked: Counter[str] = Counter()
        self.said: set[int] = set()
        self.queries: dict[str | None, str] = {}
        self.extended: dict[tuple[str | None, int], str] = {}
        self.clues: list[str] = []
        self.scene = BM25Index(self.tokens)
        self.scene_texts: list[str] = []
        self.turns = 0
        self.background = sentences(sheet.background)
        self.learn(sheet_facts(sheet.me, self.lang, include_secrets=not sheet.is_murderer))

    def learn(self, facts: list[Fact]) -> None:
        """Remember new sentences of the own sheet. A murderer's guard judges them together
        with everything learned before (a new act can reveal new words of the scene), so a
        sentence once sayable may become blocked, and a withheld one never becomes sayable."""
        first = len(self.facts)
        self.facts.extend(facts)
        if self.guard is not None:
            self.blocked = set(self.guard.withheld(self.facts))
        for number in range(first, len(self.facts)):
            text = self.facts[number].text
            self.evidence.add(text, self.others_in(text, self.config.own_weight))
            if number not in self.blocked:
                self.sayable.append(number)
                self.answers.add([text])

    def others_in(self, text: str, weight: float) -> dict[str, float]:
        return {n: weight for n in self.names.mentioned(text, self.seat_names())
                if n != self.name}

    def seat_names(self) -> list[str]:
        return self.seat.sheet.seat_names

    # -- observing ---------------------------------------------------------------------------
    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted):
            if event.sheet is not None:
                self.learn_act(event.sheet)
            elif event.public_text:
                self.add_scene(event.public_text)
                self.evidence.add(event.public_text,
                                  self.others_in(event.public_text, self.config.clue_weight))
        elif isinstance(event, ClueRevealed):
            self.add_scene(event.text)
            self.evidence.add(event.text, self.others_in(event.text, self.config.clue_weight),
                              place=event.location)
            if event.audience != "public":
                self.clues.append(event.text)
        elif isinstance(event, Spoke) and event.speaker != self.name:
            self.hear(event)
        elif isinstance(event, Accused) and event.accused and event.accuser != self.name:
            self.bonus[event.accused] = (self.bonus.get(event.accused, 0)
                                         + self.config.accused_weight)

    def add_scene(self, text: str) -> None:
        """A clue or an act's public text: what the table knows of the crime scene."""
        self.scene.add([text])
        self.scene_texts.append(text)

    def learn_act(self, sheet: ActSheet) -> None:
        if sheet.act in self.acts:
            return
        self.acts.add(sheet.act)
        doc = max((f.doc for f in self.facts), default=-1) + 1
        facts = [Fact(text, "act", doc, i) for i, text in enumerate(sentences(sheet.text))]
        self.learn(facts)

    def hear(self, event: Spoke) -> None:
        about = self.others_in(event.text, self.config.heard_weight)
        about[event.speaker] = about.get(event.speaker, 0.0) + self.config.said_weight
        about.pop(self.name, None)
        self.evidence.add(event.text, about, (event.speaker, event.kind))
        self.bonus[event.speaker] = self.bonus.get(event.speaker, 0) + (
            self.config.contradiction_weight * self.contradictions(event.speaker, event.text))

    def contradictions(self, speaker: str, text: str) -> int:
        """Clock times at which ``speaker``'s account shares no content word with what the
        own script says about ``speaker`` at that time."""
        count = 0
        words = set(self.names.content_tokens.tokenize(text))
        for time in clock_times(text):
            mine = [f.text for f in self.facts if time in clock_times(f.text)
                    and speaker in self.names.mentioned(f.text, [speaker])]
            own = {t for m in mine for t in self.names.content_tokens.tokenize(m)}
            forms = {f.lower() for f in self.names.forms[speaker]}
            if mine and not (words & own) - forms - {time}:
                count += 1
        return count

    # -- judging -------------------------------------------------------------------------------
    def death_query(self, victim: str | None) -> str:
        """Victim names, the killing words of the languages in play and the background's
        sentences about the victim (where and when it happened, as far as anyone knows)."""
        if victim not in self.queries:
            victims = [victim] if victim else self.victims
            about = [s for s in self.background if self.names.mentioned(s, victims)]
            sheet = self.seat.sheet
            text = sheet.background + sheet.me.story
            words = lexicon()
            english = sorted(words.kill_words_en) if (
                self.lang == "en" or WORD.search(text)) else []
            chinese = list(words.kill_words_zh) if self.lang == "zh" or HAN.search(text) else []
            self.queries[victim] = " ".join([*victims, *about, *english, *chinese])
        return self.queries[victim]

    def crime_query(self, victim: str | None) -> str:
        """The death query extended by the scene: the words most frequent in the clue and
        act texts that best match it (the flour on the collar, the scrubbed rolling pin), so
        that what points at the weapon and the place counts, not only what names the dead."""
        key = (victim, len(self.scene_texts))
        if key not in self.extended:
            death = self.death_query(victim)
            found = self.scene.search(death, self.config.scene_texts)
            words: Counter[str] = Counter()
            for row, _ in found:
                words.update(dict.fromkeys(self.scene_words(self.scene_texts[row]), 1))
            extra = [w for w, _ in words.most_common(self.config.scene_words)]
            self.extended[key] = " ".join([death, *extra])
        return self.extended[key]

    def scene_words(self, text: str) -> list[str]:
        """The content words of a scene text: no names, function words or numbers."""
        function = lexicon().function_words
        names = {form.lower() for forms in self.names.forms.values() for form in forms}
        return [t for t in self.names.content_tokens.tokenize(self.names.strip(
            text, self.names.forms)) if t not in function and t not in names
            and not t.isdigit() and not kill_words(t)]

    def suspicion(self, candidates: list[str], victim: str | None) -> list[tuple[str, float]]:
        """Candidates (never this seat) from most to least suspicious; ties go to the seat
        questioned less so far, then to the candidates' order. A seat's suspicion is its
        evidence as a share of the most any candidate has, plus ``evasion_weight`` times how
        far its answers fall short of the others' in speaking to the crime."""
        query = self.crime_query(victim)
        totals = self.evidence.totals(query)
        pool = [c for c in candidates if c != self.name] or list(candidates)
        raw = {name: totals.get(name, 0) + self.bonus.get(name, 0) for name in pool}
        top = max(raw.values(), default=0.0)
        evasion = self.evasion(query)
        score = {name: (raw[name] / top if top > 0 else 0.0)
                 + self.config.evasion_weight * evasion.get(name, 0.0) for name in pool}
        ranked = sorted(enumerate(pool), key=lambda item: (
            -score[item[1]], self.asked[item[1]], item[0]))
        return [(name, round(score[name], 3)) for _, name in ranked]

    def tied(self, victim: str | None, seats: list[str]) -> bool:
        """Whether a text it holds names ``victim`` and concerns one of ``seats``."""
        if victim is None:
            return True
        return any(self.names.mentioned(text, [victim]) and any(about.get(s) for s in seats)
                   for text, about in zip(self.evidence.texts, self.evidence.about,
                                          strict=True))

    def evasion(self, query: str) -> dict[str, float]:
        """How far each seat's answers fall short of the others' in speaking to the crime:
        1 - its mean score for the crime query over the mean of every answering seat (0 for
        a seat that says as much as the rest, or more)."""
        scores = self.evidence.row_scores(query)
        per_seat: dict[str, list[float]] = {}
        for row, said in enumerate(self.evidence.said):
            if said is not None and said[1] == "answer":
                per_seat.setdefault(said[0], []).append(scores[row])
        means = {seat: sum(v) / len(v) for seat, v in per_seat.items()}
        overall = sum(means.values()) / len(means) if means else 0.0
        if overall <= 0:
            return {}
        return {seat: max(0.0, 1 - mean / overall) for seat, mean in means.items()}

    def reason_about(self, suspect: str, victim: str | None) -> str:
        """The sayable own sentence naming ``suspect`` most related to the crime."""
        rows = [n for n in self.sayable if n not in self.blocked
                and self.names.mentioned(self.facts[n].text, [suspect])]
        if not rows:
            return ""
        scores = self.answers.scores(self.crime_query(victim)).tolist()
        position = {n: i for i, n in enumerate(self.sayable)}
        best = max(rows, key=lambda n: (scores[position[n]], -n))
        return self.voice(self.facts[best].text)

    # -- deciding ------------------------------------------------------------------------------
    async def on_speak(self, decision: Speak) -> Speech:
        return Speech(text=self.speak(decision))

    async def on_ask(self, decision: AskQuestions) -> Questions:
        return self.ask(decision.candidates, decision.count, decision.victim)

    async def on_vote(self, decision: CastVote) -> Vote:
        seats = [c for c in decision.candidates if c != NOBODY]
        suspect, score = self.suspicion(seats, decision.victim)[0]
        if NOBODY in decision.candidates and not self.tied(decision.victim, seats):
            suspect = NOBODY  # nothing it heard ties anyone present to this death
        return Vote(target=suspect, reason=render(
            "extractive", "vote_reason", self.lang, suspect=suspect, score=score))

    async def on_accuse(self, decision: Accuse) -> Accusation:
        suspect, _ = self.suspicion(decision.candidates, None)[0]
        return Accusation(target=suspect, reason=self.reason_about(suspect, None))

    async def on_rate(self, decision: RateStatement) -> Rating:
        return self.rate(decision.statement.speaker)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        return self.turn(decision)

    def speak(self, decision: Speak) -> str:
        if decision.kind == "answer" and decision.question is not None:
            return self.answer(decision.question.text)
        if decision.kind == "introduction":
            intro = [self.voice(self.facts[n].text) for n in self.sayable
                     if self.facts[n].doc == 0 and n not in self.blocked
                     ][:self.config.intro_sentences]
            return render("extractive", "introduce", self.lang, me=self.name,
                          description=self.seat.sheet.me.description, facts=intro)
        if decision.kind == "clue_share":
            clues = [c for c in self.clues if self.guard is None or not self.guard.direct(c)]
            return render("extractive", "clues", self.lang, clues=clues)
        suspect, _ = self.suspicion(self.seat.sheet.seat_names, None)[0]
        if decision.kind == "reasoning":
            return self.reasoning(suspect)
        facts = []
        if decision.kind == "statement" and self.config.statement_sentences:
            facts = self.retrieve(self.crime_query(None), self.config.statement_sentences)
        return render("extractive", "suspect", self.lang, suspect=suspect, facts=facts,
                      reason=self.reason_about(suspect, None), victims=self.victims)

    def reasoning(self, suspect: str) -> str:
        """The suspect, how (the sayable sentence most related to the crime) and why (the
        one most related to motives), as "Modus operandi: ... Motive: ..."."""
        method = self.retrieve(self.crime_query(None), 1)
        motive = self.retrieve(" ".join([*self.names.forms[suspect],
                                         *lexicon().motive_words]), 1)
        return render("extractive", "reasoning", self.lang, suspect=suspect,
                      victims=self.victims, method=" ".join(method), motive=" ".join(motive))

    def answer(self, question: str) -> str:
        query = self.names.strip(question, [self.name])
        return render("extractive", "answer", self.lang,
                      facts=self.retrieve(query, self.config.answer_sentences))

    def retrieve(self, query: str, count: int) -> list[str]:
        """The ``count`` sayable sentences that best match ``query``, preferring ones not
        said yet; in the first person."""
        scores = self.answers.scores(query).tolist() if self.sayable else []
        ranked = sorted((i for i, s in enumerate(scores)
                         if s > 0 and self.sayable[i] not in self.blocked),
                        key=lambda i: (self.sayable[i] in self.said, -scores[i], i))
        chosen = [self.sayable[i] for i in ranked[:count]]
        self.said.update(chosen)
        return [self.voice(self.facts[n].text) for n in chosen]

    def voice(self, text: str) -> str:
        return first_person(text) if self.config.voice == "first" else text

    def ask(self, candidates: list[str], count: int, victim: str | None) -> Questions:
        """Questions to the candidate this seat has asked least so far, the most suspicious
        among equals: it hears every seat on the crime before it votes."""
        ranked = [name for name, _ in self.suspicion(candidates, victim)]
        target = min(ranked, key=lambda name: (self.asked[name], ranked.index(name)))
        victim_name = victim or (self.victims[0] if self.victims else "")
        lines = render("extractive", "questions", self.lang, target=target, victim=victim_name,
                       quote=self.quote(target, victim)).splitlines()
        lines = [line.strip() for line in lines if line.strip()]
        start = self.asked.total() + self.seat.seed
        questions = [lines[(start + i) % len(lines)] for i in range(count)]
        self.asked[target] += 1
        return Questions(target=target, questions=questions)

    def quote(self, speaker: str, victim: str | None) -> str:
        """The start of ``speaker``'s most crime-related sentence in an answer or statement
        so far (empty if none)."""
        text = self.evidence.best_said(speaker, QUOTABLE, self.crime_query(victim))
        if not text:
            return ""
        parts = sentences(text)
        sentence = next((p for p in parts if kill_words(p) or self.names.mentioned(
            p, self.victims)), parts[0])
        words = sentence.rstrip(".!?。！？").split()
        return " ".join(words[:14]) if len(words) > 1 else sentence[:30]

    def rate(self, speaker: str) -> Rating:
        """Doubt 2 for the top suspect, 1 for a seat with any evidence, else 0; trust is the
        rest of 2."""
        ranking = self.suspicion(self.seat.sheet.seat_names, None)
        doubt = 2 if ranking and ranking[0][0] == speaker and ranking[0][1] > 0 else (
            1 if dict(ranking).get(speaker, 0) > 0 else 0)
        return Rating(trust=2 - doubt, doubt=doubt)

    def turn(self, decision: TakeTurn) -> Questions | Investigate:
        """Every other turn searches the next location (in the listed order); the rest ask
        the top suspect."""
        self.turns += 1
        if decision.locations and self.turns % 2 == 0:
            return Investigate(location=decision.locations[(self.turns // 2 - 1)
                                                           % len(decision.locations)])
        return self.ask(decision.candidates, 1, None)

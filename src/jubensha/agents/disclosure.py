"""Internal.

Does a seat's speech give its own sheet away, confess, or fail as speech?

Shared by the speech guard (``agents.guard``), which checks a draft before it is said, and
the self-disclosure metric (``eval.self_disclosure``), which checks what was said. Both
cut texts the way retrieval does (``memory.text.tokenize``: words, numbers and clock times;
Chinese as jieba words) and compare windows of consecutive units, as the isolation audit
does for prompts. Before cutting, the second and first person are made one
(you/your/yours/yourself and I/me/my/mine/myself; 你/您 and 我), so that a seat saying
"the owners paid me nothing" reproduces a sheet that says "the owners paid you nothing".

What a speech is checked for:

- **disclosure**: windows of the seat's private text (story, secrets, timeline, relations,
  act sheets, goals; not its public description) that are not public text and were not said
  or shown to the seat before; its share of the speech's units;
- **confession** (murderers): a sentence in the first person with a killing verb and no
  negation ("I killed him", 是我杀了他), or a window of the seat's own account of the kill
  (a sentence of its sheet with a killing verb) that holds that verb; and a murderer's own
  motive or preparations told in the first person, in any words ("I had enough money and
  friends to avenge that bloody hatred", 我和死者有血海深仇, 案发当天我做了偷窃宝石的准备);
- **degenerate** speech: empty, cut off (no closing punctuation, where the reply ran out of
  tokens), a loop (a window of four units repeated over much of the speech), a label instead
  of speech ("Tom Hale asks", "Host:"), a copy of another seat's earlier speech (most of it),
  the seat saying it is another, an assistant's refusal. Each sentence is judged too, for
  echoes of the questions and the prompt templates among other things
  (``agents.sentences``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.engine import ActStarted, ClueRevealed, Event, HostSpoke, OwnCharacter, Spoke
from jubensha.memory.text import split_sentences, tokenize
from jubensha.scripts.model import Character, Script

Degenerate = Literal["empty", "cut off", "loop", "label", "prompt echo", "copy", "impersonation",
                     "refusal", "question echo", "assistant", "to the dead", "fallback",
                     "canned"]

_PERSON = {
    "i": "1p", "me": "1p", "you": "1p", "ye": "1p", "my": "1p's", "your": "1p's",
    "mine": "1p-own", "yours": "1p-own", "myself": "1p-self", "yourself": "1p-self",
    "am": "be", "are": "be", "was": "was", "were": "was",
}
_CONTRACTED = {"'m": "be", "'re": "be", "'ve": "have", "'ll": "will", "'d": "would"}
_ZH_PERSON = str.maketrans({"你": "我", "您": "我"})

KILL_EN = frozenset({"kill", "killed", "killing", "murder", "murdered", "murdering"})
"""Words that tell a killing whatever follows them."""
HARM_EN = frozenset({
    "strike", "strikes", "struck", "stab", "stabbed", "poison", "poisoned", "strangle",
    "strangled", "smother", "smothered", "shot", "shoot", "bludgeoned", "drowned",
    "suffocated", "throttled", "choked", "slit", "clubbed", "knifed", "pushed",
})
"""Words that tell a killing when a victim (or him, her) follows ("I struck a match" is no
killing); "hit" and "beat" are left out ("I beat Elias at cribbage")."""
KILL_ZH = ("杀了", "杀死", "杀害", "杀的", "害死", "毒死", "下毒", "投毒", "刺死", "捅死",
           "捅了", "勒死", "掐死", "推下", "砸死", "打死", "闷死", "淹死", "击杀", "动的手",
           "下的手")
_OBJECTS_EN = frozenset({"him", "her", "them", "he", "she"})
_NEGATION_EN = re.compile(r"\b(?:not|never|no|didn't|don't|wouldn't|couldn't|won't|"
                          r"if|would|could|might|whether)\b|n't\b")
_NEGATION_ZH = re.compile("没|不|未|非|无|如果|要是|假如|是否|谁")
_SUBJECT_EN = re.compile(r"\b(?:i|i've|i'd|it was me|it was i)\b")
CLOSERS = "\"'”’」』）)】》*"
TERMINATORS = ".!?。！？…~～"
_LABEL_WORDS = ("asks", "answers", "says", "replies", "introduction", "→", "->",
                "提问", "回答", "问", "答", "说", "自我介绍")
LOOP_WINDOW = 4
"""Units in a window whose repetition makes a loop."""
LOOP_SHARE = 0.4
"""Share of a speech's units inside repeated windows that makes it a loop."""
COPY_SHARE = 0.5
"""Share of a speech's units found in another seat's earlier speech that makes a copy..."""
COPY_UNITS = 8
"""...when that is this many units or more (an answer repeating the question's words, "No,
I never read his letter", is an answer)."""


class DisclosureSettings(BaseModel):
    """Window lengths and thresholds (the ``self-disclosure`` metric's options and the
    guard's; docs/evaluation.md)."""

    model_config = ConfigDict(extra="forbid")

    words: int = Field(6, ge=3, le=50, description="Window length in words.")
    zh_words: int = Field(4, ge=2, le=50, description="Window length in Chinese (jieba) "
                                                      "words.")
    echo_words: int = Field(5, ge=3, le=50, description="Window length for prompt echoes.")
    recite_share: float = Field(0.4, ge=0, le=1, description="A speech this share or more "
                                "of which is the speaker's private text recites its sheet...")
    recite_units: int = Field(30, ge=1, description="...when that is this many words or "
                              "more.")

    def window(self, language: str) -> int:
        return self.zh_words if language.startswith("zh") else self.words


# -- units and windows ----------------------------------------------------------------------
def units(text: str) -> list[str]:
    """Words (Chinese: jieba words) with the first and second person made one."""
    found: list[str] = []
    for token in tokenize(text.translate(_ZH_PERSON), zh_mode="jieba"):
        head, mark, tail = token.partition("'")
        if mark and f"'{tail}" in _CONTRACTED and head in _PERSON:
            found += [_PERSON[head], _CONTRACTED[f"'{tail}"]]
        else:
            found.append(_PERSON.get(token, token))
    return found


def windows(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def window_set(texts: Iterable[str], n: int) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for text in texts:
        if text:
            found.update(windows(units(text), n))
    return found


def covered(hits: Sequence[bool], n: int) -> int:
    """Units inside at least one hit window."""
    marks = [False] * (len(hits) + n - 1 if hits else 0)
    for start, hit in enumerate(hits):
        if hit:
            marks[start:start + n] = [True] * n
    return sum(marks)


# -- what a seat holds ------------------------------------------------------------------------
def private_parts(character: Character | OwnCharacter) -> Iterator[tuple[str, str]]:
    """(part, text) of a character's own sheet that its public description is not."""
    yield "story", character.story
    for secret in character.secrets:
        yield "secret", secret
    for entry in character.timeline:
        yield "timeline", entry.text
    for relation in character.relationships:
        yield "relationships", " ".join([*relation.labels, relation.description])
    for sheet in character.acts:
        for text in (sheet.text, *sheet.goals, *sheet.notes.values()):
            yield f"act {sheet.act}", text
    for text in (character.mission, *character.final_goals, *character.needs_to_know):
        yield "goals", text


def public_parts(script: Script) -> list[str]:
    """What every seat may say: title, background, rules, victims, public descriptions,
    clues that are public from the start, and each act's public text."""
    return [script.title, script.background, script.rules,
            *(f"{v.name} {v.description}" for v in script.victims),
            *(f"{c.name} {c.description}" for c in script.characters),
            *(act.public_text for act in script.acts),
            *(c.text for c in script.clues if c.holder == "public" and not c.location)]


def _has_kill_word(text: str) -> bool:
    """Whether ``text`` tells a killing: a Chinese killing word (not 自杀, suicide), or an
    English killing or harming word."""
    if any(word in text.replace("自杀", "") for word in KILL_ZH):
        return True
    return any(word in KILL_EN | HARM_EN for word in tokenize(text))


@dataclass
class SeatText:
    """One seat's private windows (with the part each comes from), its account of a kill
    when it is a murderer, and the windows it may say (public, or said before)."""

    name: str
    murderer: bool
    n: int
    private: dict[tuple[str, ...], str] = field(default_factory=dict)
    deeds: set[tuple[str, ...]] = field(default_factory=set)
    secrets: set[tuple[str, ...]] = field(default_factory=set)
    """Windows of the items the sheet lists as secrets."""
    known: set[tuple[str, ...]] = field(default_factory=set)
    victims: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, character: Character | OwnCharacter, public: Iterable[str], n: int, *,
           murderer: bool, victims: Sequence[str] = ()) -> SeatText:
        seat = cls(character.name, murderer, n, known=window_set(public, n),
                   victims=list(victims), secrets=window_set(character.secrets, n))
        for part, text in private_parts(character):
            for window in window_set([text], n):
                seat.private.setdefault(window, part)
        if murderer:
            seat.deeds = deed_windows(character, victims, n)
        return seat

    def learn(self, text: str) -> None:
        """Text the seat heard or was shown: saying it again discloses nothing."""
        self.known |= window_set([text], self.n)

    def add_private(self, part: str, text: str) -> None:
        for window in window_set([text], self.n):
            self.private.setdefault(window, part)


def deed_windows(character: Character | OwnCharacter, victims: Sequence[str], n: int
                 ) -> set[tuple[str, ...]]:
    """Windows of the murderer's own account of the kill: sentences of its sheet that
    name a victim and hold a killing word, each window holding that word (the weapon or
    the place alone is not a confession)."""
    texts = [t for _, t in private_parts(character)]
    found: set[tuple[str, ...]] = set()
    for sentence in (s for text in texts if text for s in split_sentences(text)):
        if not (_has_kill_word(sentence) and names_victim(sentence, victims)):
            continue
        for window in windows(units(sentence), n):
            if _has_kill_word(" ".join(window)) or _has_kill_word("".join(window)):
                found.add(window)
    return found


def names_victim(text: str, victims: Sequence[str]) -> bool:
    """Whether ``text`` names a victim (a Chinese name whole, else any part of two letters
    or more: "Elias" for Elias Thorne)."""
    lowered = text.casefold()
    words = set(tokenize(text))
    for victim in victims:
        parts = [p for p in tokenize(victim, zh_mode="chars") if len(p) > 1]
        if victim.casefold() in lowered or words & set(parts):
            return True
    return False


# -- one speech -------------------------------------------------------------------------------
class SpeechCheck(BaseModel):
    """What one speech gives away and how it fails, with the passages that show it."""

    units: int = 0
    disclosed: int = 0
    """Units of the speech inside a window of the seat's private text."""
    passages: list[str] = Field(default_factory=list)
    """The sentences that hold disclosed windows."""
    parts: list[str] = Field(default_factory=list)
    """The private part most of each passage comes from (story, secret, timeline, ...)."""
    secret: str | None = None
    """A sentence that says one of the seat's listed secrets in the sheet's words."""
    confession: str | None = None
    degenerate: list[Degenerate] = Field(default_factory=list)
    evidence: dict[str, str] = Field(default_factory=dict)
    """Degenerate kind → the text that shows it."""

    @property
    def share(self) -> float:
        return self.disclosed / self.units if self.units else 0.0

    def recites(self, settings: DisclosureSettings) -> bool:
        """Whether the speech reads the sheet out rather than telling a fact of it."""
        return (self.disclosed >= settings.recite_units
                and self.share >= settings.recite_share)


def screen_speech(text: str, seat: SeatText, *, names: Sequence[str] = (),
                  cut: bool = False, others: Iterable[tuple[str, str]] = (),
                  asked: str | None = None, own: Sequence[str] = ()) -> SpeechCheck:
    """Screen one speech of ``seat`` for its own secrets, a confession, echoes and
    degenerate text (the engine's ``check_speech`` is another thing: a stage's correction
    of an empty speech). ``names``: every seat's name (labels); ``cut``: the
    reply ran out of tokens; ``others``: (speaker, speech) said before by other seats;
    ``asked``: the question the speech answers, whose words are free to say again;
    ``own``: the speaker's names (a speech that says it is another seat fails)."""
    words = units(text)
    check = SpeechCheck(units=len(words))
    _disclosure(text, words, seat, check)
    if seat.murderer:
        check.confession = confession(text, words, seat)
    for kind, evidence in degenerate(text, words, names=names, cut=cut, others=others,
                                     asked=asked, n=seat.n, own=own):
        check.degenerate.append(kind)
        check.evidence[kind] = evidence
    return check


def _disclosure(text: str, words: list[str], seat: SeatText, check: SpeechCheck) -> None:
    spans = windows(words, seat.n)
    hits = [w in seat.private and w not in seat.known for w in spans]
    check.disclosed = covered(hits, seat.n)
    if not any(hits):
        return
    for sentence in split_sentences(text):
        told = [w for w in windows(units(sentence), seat.n)
                if w in seat.private and w not in seat.known]
        if told:
            check.passages.append(sentence)
            check.parts.append(Counter(seat.private[w] for w in told).most_common(1)[0][0])
        if check.secret is None and any(w in seat.secrets for w in told):
            check.secret = sentence


def confession(text: str, words: list[str], seat: SeatText) -> str | None:
    """The sentence in which a murderer tells what it did, or None."""
    for sentence in split_sentences(text):
        if (any(w in seat.deeds for w in windows(units(sentence), seat.n))
                or _first_person_kill(sentence, seat.victims)):
            return sentence
    if any(w in seat.deeds for w in windows(words, seat.n)):  # across two sentences
        return text
    return None


_NOT_THE_DOER_EN = frozenset({"was", "were", "been", "being", "got", "of", "about", "the",
                              "a", "an"})
"""Words just before a killing word that make the seat its object or its topic, not its
doer (passive voice, a noun: "accused of murder", "the killing")."""


def _first_person_kill(sentence: str, victims: Sequence[str]) -> bool:
    """A first-person statement of a kill, its motive or its preparation, not denied,
    asked or supposed."""
    if sentence.rstrip(CLOSERS).endswith(("?", "？", "吗", "呢")):
        return False
    lowered = sentence.casefold()
    return (_kill_zh(lowered.replace("自杀", "")) or _kill_en(lowered, victims)
            or states_motive(lowered))


_HATRED_EN = re.compile(r"\b(?:revenge|avenge[ds]?|vengeance|hat(?:e|ed|red)|grudge|"
                        r"pay (?:him|her|them) back)\b")
_PREPARED_EN = re.compile(r"\b(?:prepared|planned|plotted|made ready|got ready)\b")
_CRIME_EN = re.compile(r"\b(?:kill\w*|murder\w*|poison\w*|steal\w*|stole|stolen|"
                       r"theft|rob\w*|weapon|knife|rope)\b")
_MOTIVE_ZH = re.compile("(?:血海深仇|深仇大恨|仇恨|报仇|报复|恨之入骨|恨透)")
_PREPARED_ZH = re.compile("(?:准备|预谋|谋划|策划|计划)")
_CRIME_ZH = re.compile("(?:杀|毒|偷|窃|盗|凶器|刀|绳)")


def states_motive(sentence: str) -> bool:
    """A murderer's motive or preparation in the first person, not denied: hatred or
    revenge it owns ("I hated him", 我和死者有血海深仇), or a crime it prepared ("I had
    planned to steal", 我做了偷窃宝石的准备)."""
    zh = "我" in sentence and not _NEGATION_ZH.search(sentence)
    if zh and (_MOTIVE_ZH.search(sentence)
               or (_PREPARED_ZH.search(sentence) and _CRIME_ZH.search(sentence))):
        return True
    first = re.search(r"\b(?:i|i'm|i've|i'd|my|me)\b", sentence)
    if first is None or _NEGATION_EN.search(sentence):
        return False
    return bool(_HATRED_EN.search(sentence)
                or (_PREPARED_EN.search(sentence) and _CRIME_EN.search(sentence)))


def _kill_zh(sentence: str) -> bool:
    for match in re.finditer("我", sentence):
        rest = sentence[match.end():match.end() + 8]
        verb = min((rest.find(w) for w in KILL_ZH if w in rest), default=-1)
        before = sentence[:match.start()][-4:]
        if verb >= 0 and "被" not in rest[:verb] and not _NEGATION_ZH.search(before + rest[:verb]):
            return True
    return bool(re.search("(?:是我|我就是)(?:杀|凶手|干的|下的手|动的手)|凶手(?:就)?是我",
                          sentence))


def _kill_en(sentence: str, victims: Sequence[str]) -> bool:
    objects = _OBJECTS_EN | {p for v in victims for p in tokenize(v) if len(p) > 1}
    for match in _SUBJECT_EN.finditer(sentence):
        following = [w.strip(".,;:!\"'") for w in sentence[match.end():].split()[:8]]
        for number, word in enumerate(following[:5]):
            killing = word in KILL_EN or (word in HARM_EN and objects & set(
                following[number + 1:number + 4]))
            if killing and number and following[number - 1] in _NOT_THE_DOER_EN:
                break  # "I was murdered", "I was accused of murder", "I heard of the killing"
            if killing:
                before = sentence[:match.start()][-12:]
                return not _NEGATION_EN.search(f"{' '.join(following[:number])} {before}")
    return bool(re.search(r"\bi (?:am|'m) the (?:murderer|killer)\b|\bi did it\b|"
                          r"\bi (?:am|'m|was) the (?:one|person) who (?:killed|murdered)\b|"
                          r"\bi (?:am|'m|was) (?:the one )?(?:responsible|to blame) for "
                          r"(?:his|her|their|\w+'s) death\b",
                          sentence.replace("i'm", "i 'm")))


# -- degenerate speech ------------------------------------------------------------------------
def degenerate(text: str, words: list[str], *, names: Sequence[str], cut: bool,
               others: Iterable[tuple[str, str]], n: int, asked: str | None = None,
               own: Sequence[str] = ()) -> Iterator[tuple[Degenerate, str]]:
    """Each way the whole speech fails as speech, with the text that shows it (the ways a
    sentence of it fails, echoes among them, are ``agents.sentences``')."""
    if not words:
        yield "empty", text
        return
    if cut and not text.rstrip().rstrip(CLOSERS).endswith(tuple(TERMINATORS)):
        yield "cut off", text[-60:]
    if loops(words):
        yield "loop", text[:120]
    if (label := label_of(text, names)) is not None:
        yield "label", label
    copied = copy_of(words, others, n, free=window_set([asked], n) if asked else set())
    if copied is not None:
        yield "copy", copied
    if own and (other := impersonated(text, [x for x in names if x not in own])):
        yield "impersonation", other
    if (refused := REFUSAL.search(text)) is not None:
        yield "refusal", refused.group()


REFUSAL = re.compile(
    r"\bI (?:can(?:'|’|no)t|cannot|am unable to|won(?:'|’)t) (?:assist|help)(?: you)? with"
    r"|\b(?:as an AI|as a (?:large )?language model|AI assistant)\b"
    r"|\bI (?:can(?:'|’|no)t|cannot) (?:continue|participate in) this conversation"
    r"|作为(?:一个|一名)?(?:AI|人工智能|语言模型|AI助手)"
    r"|我(?:无法|不能)(?:协助|为你提供帮助|为您提供帮助|提供帮助|帮助你|帮助您)",
    re.IGNORECASE)
"""An assistant's refusal or disclaimer where a character should speak ("I'm sorry, but I
can't assist with that."): a small model's habit that stops the scene."""

_SELF = re.compile(r"\b(?:I am|I'm|I’m|my name is|this is)\s+(?:(?:dr|mr|mrs|miss|ms)\.?\s+)?"
                   r"|(?:我是|我叫|我就是|本人是)", re.IGNORECASE)


def impersonated(text: str, others: Sequence[str]) -> str | None:
    """The sentence in which the speaker calls itself one of ``others`` ("I am Nora Vance"
    said by Agnes Pike), or None."""
    for found in _SELF.finditer(text):
        after = text[found.end():found.end() + 40]
        for name in sorted(others, key=len, reverse=True):
            if name and after.lower().startswith(name.lower()):
                return text[found.start():found.end() + len(name)]
    return None


def loops(words: list[str], n: int = LOOP_WINDOW, share: float = LOOP_SHARE) -> bool:
    """Whether windows said more than once cover ``share`` of the speech or more."""
    spans = windows(words, n)
    counts = Counter(spans)
    hits = [counts[w] > 1 for w in spans]
    return any(hits) and covered(hits, n) >= share * len(words)


def label_of(text: str, names: Sequence[str]) -> str | None:
    """A transcript label where speech should be: "Tom Hale asks", "Host:", "周妈 →"."""
    who = "|".join(re.escape(n) for n in sorted({*names, "Host", "主持人"}, key=len,
                                                  reverse=True) if n)
    labels = "|".join(re.escape(w) for w in _LABEL_WORDS)
    head = re.match(rf"\W*(?:{who})\W*(?:{labels}|[:：])", text, re.IGNORECASE)
    if head:
        return head.group()
    inner = re.search(rf"(?:{who})\s+(?:asks|answers)\s+(?:{who})\s*[:：]", text,
                      re.IGNORECASE)
    return inner.group() if inner else None


def copy_of(words: list[str], others: Iterable[tuple[str, str]], n: int,
            share: float = COPY_SHARE, free: Container[tuple[str, ...]] = (),
            least: int = COPY_UNITS) -> str | None:
    """``speaker: speech`` of the other seats' speeches this one mostly repeats (one, or
    several taken together: an introduction made of two others' lines; ``least`` units or
    more), or None. Windows
    in ``free`` (the question answered: "I never left the kitchen at ten" answers "Did
    you leave the kitchen at ten?", whoever else said so) are no copy."""
    spans = windows(words, n)
    if not spans:
        return None
    hits = [False] * len(spans)
    sources: list[str] = []
    for speaker, other in others:
        theirs = set(windows(units(other), n))
        taken = [w in theirs and w not in free for w in spans]
        if any(taken):
            sources.append(f"{speaker}: {other}")
        hits = [h or t for h, t in zip(hits, taken, strict=True)]
    copied = covered(hits, n)
    if copied >= least and copied >= share * len(words):
        return " / ".join(sources)
    return None


def heard_text(event: Event) -> str:
    """What an event tells the seats that see it: speech, host lines, clue cards, an
    act's public text."""
    if isinstance(event, Spoke | HostSpoke | ClueRevealed):
        return event.text
    if isinstance(event, ActStarted):
        return event.public_text
    return ""

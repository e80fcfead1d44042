"""Internal.

A character sheet in the first person, for prompts to small models.

Sheets are written to the player ("You are Tom Hale… you raised your boy on scraps"); a
small model asked to speak as the character copies such sentences as they are, in the
second person, and mixes persons within one speech. Told "I am Tom Hale… I raised my boy
on scraps" it speaks as the character. Quoted speech is left as it is ("I found your
crates, boy" is what someone said to the character).

English "you" is "I" as a subject (at the start of a clause, after a conjunction, or before
a verb) and "me" otherwise; "you are/were" become "I am/was". Chinese 你/您 become 我.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_FIXED = {
    "you're": "I'm", "you’re": "I’m", "you've": "I've", "you’ve": "I’ve", "you'll": "I'll",
    "you’ll": "I’ll", "you'd": "I'd", "you’d": "I’d", "your": "my", "yours": "mine",
    "yourself": "myself", "yourselves": "ourselves",
}
_AFTER_SUBJECT = {"are": "am", "were": "was", "aren't": "am not", "weren't": "wasn't"}
_CLAUSE_START = frozenset({
    "and", "but", "so", "or", "nor", "then", "when", "while", "because", "since", "if",
    "that", "as", "until", "before", "after", "though", "although", "unless", "where",
    "whether", "which", "who", "once", "than", "how", "why", "what", "now", "also",
    "still", "never", "always", "just", "only", "soon", "afterwards", "later",
})
_VERBS = frozenset({
    "are", "were", "have", "had", "will", "would", "can", "could", "do", "did", "must",
    "shall", "should", "may", "might", "need", "know", "love", "hate", "want", "think",
    "saw", "see", "say", "said", "went", "go", "come", "came", "took", "take", "find",
    "found", "felt", "feel", "heard", "hear", "told", "tell", "gave", "give", "got", "get",
    "made", "make", "left", "leave", "kept", "keep", "met", "meet", "ran", "run", "sat",
    "sit", "stood", "stand", "thought", "owe", "owed", "lost", "lose", "hid", "hide",
    "knew", "let", "put", "began", "begin", "bought", "brought", "slept", "spent", "wrote",
    "read", "cannot", "won't", "don't", "didn't",
})
_ZH = str.maketrans({"你": "我", "您": "我"})
_ASKED = (
    (re.compile(r"\b([Aa])re you\b"), r"\1m I"),
    (re.compile(r"\b([Ww])ere you\b"), r"\1as I"),
    (re.compile(r"\b(do|did|have|had|will|would|can|could|should|must|may|might) you\b",
                re.IGNORECASE), r"\1 I"),
)
"""Questions: "are you" is "am I", and "you" after an auxiliary is its subject."""


def first_person(text: str, language: str = "en") -> str:
    """``text`` with the second person turned into the first, quotes left alone."""
    out, last = [], 0
    for quoted in _QUOTED.finditer(text):
        out += [_convert(text[last:quoted.start()], language), quoted.group()]
        last = quoted.end()
    out.append(_convert(text[last:], language))
    return "".join(out)


def _convert(text: str, language: str) -> str:
    if language.startswith("zh"):
        return text.translate(_ZH)
    for pattern, replacement in _ASKED:
        text = pattern.sub(replacement, text)
    words = list(_WORD.finditer(text))
    out, last, subject = [], 0, False
    for i, match in enumerate(words):
        word = match.group()
        lowered = word.casefold()
        replaced = word
        if subject and lowered in _AFTER_SUBJECT:
            replaced = _AFTER_SUBJECT[lowered]
        subject = False
        if lowered in _FIXED:
            replaced = _FIXED[lowered]
            subject = lowered.startswith(("you'", "you’"))
        elif lowered == "you":
            subject = _is_subject(text, words, i)
            replaced = "I" if subject else "me"
        if replaced != word and word[0].isupper() and not replaced.startswith("I"):
            replaced = replaced[0].upper() + replaced[1:]
        out += [text[last:match.start()], replaced]
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _is_subject(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Whether "you" at word ``i`` is a subject: it opens a clause or a verb follows."""
    if i + 1 < len(words) and words[i + 1].group().casefold() in _VERBS:
        return True
    if i + 1 < len(words) and words[i + 1].group().casefold().endswith("ed"):
        return True
    if i == 0:
        return True
    between = text[words[i - 1].end():words[i].start()]
    return (any(mark in between for mark in ".;:!?,\n")
            or words[i - 1].group().casefold() in _CLAUSE_START)

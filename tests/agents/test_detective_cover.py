"""A murderer's cover (what the ``detective`` agent says it was doing, up to the crime)
tells nothing of why or how it killed: no sentence of it shares two content words (names,
numbers and times aside) with the truth's motive or method, on every bundled mystery and
on generated ones in both languages. The agent never reads the truth: it withholds every
sentence of its sheet that shares such words with a sentence it already keeps back."""

from __future__ import annotations

import pytest

from jubensha.agents.detective.knowledge import Knowledge, name_forms
from jubensha.engine import CharacterSheet
from jubensha.scripts.bundled import bundled_scripts, find_script
from jubensha.scripts.generate.build import Request, generate
from jubensha.scripts.model import Script

SHARED = 2


def mysteries() -> list[Script]:
    found = [find_script(name) for name in bundled_scripts()]
    for seed in range(4):
        for level in ("easy", "medium", "hard"):
            found += generate(Request(seed=seed, players=4 + seed % 3, level=level,
                                      acts=1 + seed % 2), ("en", "zh"))
    return found


def shared_words(script: Script, murderer: str) -> list[tuple[str, set[str]]]:
    """Each sentence of the murderer's cover with the words it shares with the truth."""
    sheet = CharacterSheet.for_seat(script, murderer)
    knowledge = Knowledge(sheet, name_forms(sheet))
    names = {part.casefold() for forms in knowledge.names.forms.values() for form in forms
             for part in (form, *knowledge.names.content_tokens.tokenize(form))}
    kills = [k for k in script.truth.kills if murderer in k.killers]
    truth = [t for k in kills for t in (k.motive, k.method)] or [script.truth.motive,
                                                                  script.truth.method]

    def words(text: str) -> set[str]:
        return {w for w in knowledge.guard.content(text)
                if w not in names and not any(c.isdigit() for c in w)}
    told = set().union(*(words(t) for t in truth if t))
    cover = knowledge.introduction([v.name for v in sheet.victims], 4)
    return [(knowledge.voice(i), words(knowledge.voice(i)) & told) for i in cover]


@pytest.mark.parametrize("script", mysteries(), ids=lambda s: s.id)
def test_no_cover_sentence_shares_words_with_the_motive_or_method(script: Script) -> None:
    for murderer in script.murderers:
        for sentence, shared in shared_words(script, murderer):
            assert len(shared) < SHARED, (murderer, sentence, shared)


def test_the_tea_estates_cover_keeps_the_ledger_and_the_fallen_road() -> None:
    """钱守仁 told 「被沈墨山叫进账房…拿账本和收据来对账」 and 「山路塌了，无路可逃」 as his
    day: his motive (the books he had cooked) and the reason he killed that night."""
    script = find_script("tingsong-tea-estate")
    said = " ".join(sentence for sentence, _ in shared_words(script, "钱守仁"))
    assert "账本" not in said and "无路可逃" not in said

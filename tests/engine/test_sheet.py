"""A seat's sheet is a whitelist: its own character's readable fields, the public text, an
opaque game id; never the script's id, a source's ``extra`` fields, another character's
private text or the truth."""

from __future__ import annotations

from jubensha.engine.agent import CharacterSheet, OwnCharacter
from jubensha.scripts import find_script


def test_the_sheet_holds_the_seat_s_own_and_public_text_and_nothing_else() -> None:
    script = find_script("lighthouse-keeper")
    me, other = script.characters[0], script.characters[1]
    me.extra = {"relationship_text": "Brother of the keeper.", "source_row": "zq-own-extra"}
    script.victims[0].extra = {"found_by": "zq-victim-extra"}
    sheet = CharacterSheet.for_seat(script, me.name, game="g1")
    data = sheet.model_dump_json()
    assert sheet.game == "g1" and "script_id" not in sheet.model_dump()
    assert script.id not in data
    assert "zq-own-extra" not in data and "zq-victim-extra" not in data
    assert sheet.me.relationship_text == "Brother of the keeper."
    assert sheet.me.story == me.story and sheet.me.secrets == me.secrets
    assert all(part not in data for part in (other.story, *other.secrets) if part)
    assert script.truth is not None and script.truth.narrative not in data
    assert set(OwnCharacter.model_fields) == set(type(me).model_fields) - {"extra"} | {
        "relationship_text"}


def test_the_sheet_holds_act_one_unless_every_act_is_asked_for() -> None:
    script = find_script("halvard-observatory")
    phased = next(c for c in script.characters if len(c.acts) > 1)
    assert [a.act for a in CharacterSheet.for_seat(script, phased.name).me.acts] == [1]
    every = CharacterSheet.for_seat(script, phased.name, every_act=True).me.acts
    assert [a.act for a in every] == [a.act for a in phased.acts]

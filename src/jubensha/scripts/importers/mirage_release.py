"""The six part texts against which the MIRAGE release's ROUGE-L scores each reconstruction.

``BaseEnv.rouge_eval`` compares a reconstruction with ``script_summary[name][part]``: the
character's parts as the last stage left them. They are built here as the release builds
them, from the raw texts (nothing stripped):

- a one-stage script: the character's six parts as written;
- a phased script: the first stage's parts with every later stage's parts appended, with no
  separator. ``BaseEnv.add_script`` means to append Story and Script only, but its test
  ``if k == 'Story' or 'Script':`` is always true, so every part is appended;
- a person renamed in a later stage keeps one entry (``MUO.add_script`` matches a new name
  that contains an old one; the importer's ``same_people`` reads names the same way);
- a ``show`` text beside the stages starts every first-stage Script, and a plain-text clue
  handed to a character ends that character's first-stage Script, each joined by a
  newline (``MUO.run``).

Not reproduced: the release's model summary of a part over 500 tokens in a long script,
and the three public clues that ``MOC.run`` writes into the parts of one script by its
stage titles. docs/evaluation.md lists both.
"""

from __future__ import annotations

from collections.abc import Mapping

RELEASE_PART_KEY = "mirage_release_parts"
"""Where ``metadata.extra`` keeps them: ``{character: {part: text}}``, the six parts in
the release's order under the names ``eval.mirage_reading.PARTS`` uses."""
PART_NAMES = {"Story": "story", "Script": "script", "Relationship": "relationships",
              "Performance": "performance", "Purpose": "purpose", "Ability": "ability"}


def release_parts(stages: Mapping[str, Mapping[str, Mapping[str, object]]],
                  people: Mapping[str, list[str]], shows: list[str],
                  given: Mapping[str, list[str]], keys: Mapping[str, str]
                  ) -> dict[str, dict[str, str]]:
    """``{character: {part: text}}`` for each person (``people``: first name → every
    name). ``stages``: the raw stage dicts; ``shows``: the raw show texts; ``given``: per
    character, the raw plain-text clues it was handed; ``keys``: source part key (English
    or Chinese) → release part name."""
    parts: dict[str, dict[str, str]] = {}
    for number, cast in enumerate(stages.values()):
        for person, names in people.items():
            raw = next((cast[n] for n in names if n in cast), None)
            if raw is None:
                continue
            texts = _texts(raw, keys)
            if number == 0:
                texts["Script"] = ("".join(show + "\n" for show in shows) + texts["Script"]
                                   + "".join("\n" + clue for clue in given.get(person, [])))
            found = parts.setdefault(person, dict.fromkeys(PART_NAMES, ""))
            for part, text in texts.items():
                found[part] += text
    return {person: {PART_NAMES[p]: text for p, text in found.items()}
            for person, found in parts.items()}


def _texts(raw: Mapping[str, object], keys: Mapping[str, str]) -> dict[str, str]:
    texts = {part: "" for part in PART_NAMES}
    for key, value in raw.items():
        part = keys.get(key)
        if part in texts and isinstance(value, str | int | float):
            texts[part] += str(value)
    return texts

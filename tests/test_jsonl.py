"""One reader of JSON Lines logs (``safeload.parse_jsonl``) for the call log and the run
folder alike: a last line cut off while it was being written, even inside a character,
is skipped and said so; any other bad line is an error naming its number."""

from __future__ import annotations

import json

import pytest

from jubensha.safeload import LineError, parse_jsonl

WHOLE = [json.dumps({"n": n, "text": "雨夜"}, ensure_ascii=False) for n in range(3)]


def data(*lines: str, tail: bytes = b"") -> bytes:
    return "\n".join(lines).encode("utf-8") + b"\n" + tail


def test_whole_lines_are_every_record() -> None:
    assert parse_jsonl(data(*WHOLE), json.loads) == ([{"n": 0, "text": "雨夜"},
                                                      {"n": 1, "text": "雨夜"},
                                                      {"n": 2, "text": "雨夜"}], False)


@pytest.mark.parametrize("cut", [5, len(WHOLE[2].encode()) - 4, len(WHOLE[2].encode()) - 3])
def test_a_last_line_cut_off_anywhere_is_skipped_and_said(cut: int) -> None:
    torn = data(*WHOLE[:2], tail=WHOLE[2].encode("utf-8")[:cut])  # also inside 夜's bytes
    records, was_torn = parse_jsonl(torn, json.loads)
    assert [r["n"] for r in records] == [0, 1] and was_torn


def test_a_bad_line_before_the_last_is_an_error_with_its_number() -> None:
    with pytest.raises(LineError, match="line 2: ") as raised:
        parse_jsonl(data(WHOLE[0], WHOLE[1][:9], WHOLE[2]), json.loads)
    assert raised.value.number == 2
    with pytest.raises(LineError, match="line 1: not UTF-8 text"):
        parse_jsonl(b"\xff\xfe\n" + data(WHOLE[0]), json.loads)


def test_a_whole_last_line_that_is_no_record_is_an_error_too() -> None:
    def record(line: str) -> dict[str, int]:
        value = json.loads(line)
        if "n" not in value:
            raise ValueError("no n")
        return value

    with pytest.raises(LineError, match="line 2: no n"):
        parse_jsonl(data(WHOLE[0], json.dumps({"m": 1})), record)

"""How much of each prompt a prefix cache can reuse, per architecture and procedure; and
what a KV-cache slot per seat buys the embedded model.

Prefix share: each architecture plays its procedures with the scripted model (instant,
deterministic); every seat's prompts are rendered as one chat text (``role`` header, then
content, per message, as chat templates do) and cut into tokens (words, punctuation marks,
single CJK characters). For each call after a seat's first, the reused tokens are the
longest common prefix with the seat's previous call (``prev``), with its previous call in
the same local-model KV slot (``slot``: same seat and prompt family, see
``jubensha.llm.local.slot_key``) or with any earlier call of that seat (``any``); the
share is reused tokens over prompt tokens, summed over calls. A server that caches prefixes (llama.cpp slots, vLLM, SGLang, OpenAI) reads only the rest.

    python bench/prefix.py [--architectures naive,player,thinkthrice] [--seeds 2]
        [--by-purpose] [--local [MODEL] --procedure demo --max-tokens 48
         --settings off,slots,off-exact,slots-exact]

``--local`` plays one game per setting on the embedded model (temperature 0, naive agents)
and prints seconds, prompt tokens the server read and whether each seat's replies match:
``off`` (no cache: every call reads its whole prompt), ``slots`` (a KV-cache slot per seat,
the default), and ``off-exact`` / ``slots-exact`` reading prompts one token at a time,
where replies cannot depend on the cache. Run it with ``nice``: it takes minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from common import figure

from jubensha.agents.registry import make_agent
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import Procedure, find_procedure
from jubensha.llm.base import Message, Model, Request
from jubensha.llm.calls import CallLog, CallRecord
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.local import slot_key
from jubensha.scripts.bundled import find_script

PLAYS = {"naive": ["demo", "thinkthrice", "player"], "player": ["player"],
         "thinkthrice": ["thinkthrice"], "werewolf": ["player"], "ocot": ["player"]}
"""Each architecture on its paper's procedure (and the naive agent on every one)."""
TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|\w+|[^\w\s]|\s+")


def tokens(messages: Iterable[Message]) -> list[str]:
    """The prompt as a chat template lays it out, in rough tokens."""
    text = "".join(f"<|{m.role}|>\n{m.text}<|end|>\n" for m in messages)
    return TOKEN.findall(text)


def common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Share:
    """Reused and total prompt tokens, summed over calls (first calls of seats excluded)."""

    prev: int = 0
    slot: int = 0
    any: int = 0
    total: int = 0
    calls: int = 0
    by_purpose: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def add(self, purpose: str, prev: int, slot: int, best: int, total: int) -> None:
        self.prev += prev
        self.slot += slot
        self.any += best
        self.total += total
        self.calls += 1
        self.by_purpose[purpose][0] += prev
        self.by_purpose[purpose][1] += total


def measure(records: list[CallRecord], share: Share) -> None:
    """Add each seat's calls after its first to ``share``."""
    earlier: dict[str | None, list[tuple[tuple[str | None, str], list[str]]]] = defaultdict(list)
    for record in records:
        if record.seat is None or record.error:
            continue
        now = tokens(record.messages)
        key = slot_key(Request(messages=record.messages, purpose=record.purpose,
                               seat=record.seat))
        seen = earlier[record.seat]
        if seen:
            best = max(common_prefix(now, old) for _, old in seen)
            slot = next((common_prefix(now, old) for family, old in reversed(seen)
                         if family == key), 0)
            share.add(record.purpose.split(".")[-1], common_prefix(now, seen[-1][1]), slot,
                      best, len(now))
        seen.append((key, now))


async def play(script_id: str, procedure: Procedure, architecture: str, model: Model,
               seed: int) -> list[CallRecord]:
    """One game's seat calls."""
    script = find_script(script_id)
    log = CallLog()
    seats = {name: Seat(make_agent(architecture), model=log.seat(model, name, access="seat"))
             for name in script.names}
    await Game(script, procedure, seats, seed=seed).run()
    return list(log.sink.records)


async def shares(architectures: list[str], script_id: str, seeds: int,
                 by_purpose: bool) -> None:
    print(f"prefix share of prompt tokens ({script_id}, scripted model, {seeds} seeds; "
          "first call of each seat excluded)")
    print(f"{'architecture':<13}{'procedure':<13}{'calls':>6}{'tokens/call':>12}"
          f"{'prev':>7}{'slot':>7}{'any':>7}")
    slots: dict[str, float] = {}
    for architecture in architectures:
        for procedure_name in PLAYS.get(architecture, ["demo"]):
            share = Share()
            for seed in range(seeds):
                records = await play(script_id, find_procedure(procedure_name),
                                        architecture, ScriptedModel(seed=seed), seed)
                measure(records, share)
            total = share.total or 1
            slots[f"{architecture} {procedure_name}"] = share.slot / total
            print(f"{architecture:<13}{procedure_name:<13}{share.calls:>6}"
                  f"{share.total / max(share.calls, 1):>12.0f}{share.prev / total:>7.2f}"
                  f"{share.slot / total:>7.2f}{share.any / total:>7.2f}")
            if by_purpose:
                for purpose, (reused, count) in sorted(share.by_purpose.items()):
                    print(f"{'':<26}{purpose:<24}{count:>8}{reused / (count or 1):>7.2f}")
    least = min(slots, key=slots.__getitem__)
    figure("prefix", f"a seat's KV slot reuses at least {slots[least]:.2f} of a prompt "
           f"({least})")


SETTINGS = {"off": (False, False), "slots": (True, False), "off-exact": (False, True),
            "slots-exact": (True, True)}
"""Label → (cache, exact) of the local model."""


async def local_games(spec: str, script_id: str, procedure_name: str, max_tokens: int,
                      settings: list[str], language: str | None) -> None:
    from jubensha.agents.naive import NaiveAgent, NaiveConfig
    from jubensha.llm.local import LocalModel

    procedure = find_procedure(procedure_name)
    replies: dict[str, dict[str | None, list[str]]] = {}
    print(f"{spec or 'local'} · {script_id} · {procedure_name} · naive, temperature 0, "
          f"max {max_tokens} tokens")
    for label in settings:
        cache, precise = SETTINGS[label]
        model = LocalModel.named(spec, cache=cache, exact=precise)
        await model.load()
        config = NaiveConfig(temperature=0.0, max_tokens=max_tokens,
                             object_tokens=max(max_tokens, 64))
        script = find_script(script_id)
        log = CallLog()
        seats = {name: Seat(NaiveAgent(config), model=log.seat(model, name, access="seat"))
                 for name in script.names}
        game = Game(script, procedure, seats, seed=0, language=language or script.language)
        started = time.perf_counter()
        await game.run()
        seconds = time.perf_counter() - started
        records = list(log.sink.records)
        prompt = sum(r.usage.prompt_tokens for r in records)
        cached = sum(r.usage.cached_tokens or 0 for r in records)
        replies[label] = by_seat(records)
        base = "off-exact" if precise else "off"
        same = f"  same replies as {base}: {replies[label] == replies[base]}" \
            if base in replies and base != label else ""
        print(f"{label:<12} {seconds:7.1f} s  {len(records)} calls  prompt {prompt} tokens, "
              f"read {prompt - cached}{same}")


def by_seat(records: list[CallRecord]) -> dict[str | None, list[str]]:
    """Each seat's replies in order (seats deciding at once may reach the model in either
    order, so the log's order is not compared)."""
    replies: dict[str | None, list[str]] = defaultdict(list)
    for record in records:
        replies[record.seat].append(record.raw or "")
    return dict(replies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--architectures", default="naive,player,thinkthrice")
    parser.add_argument("--script", default="lighthouse-keeper")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--by-purpose", action="store_true")
    parser.add_argument("--local", nargs="?", const="", default=None,
                        help="time demo games on a local model (local:<this>)")
    parser.add_argument("--procedure", default="demo")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--settings", default="off,slots",
                        help=f"local-model settings to play, of {', '.join(SETTINGS)}")
    parser.add_argument("--lang", default=None)
    args = parser.parse_args()
    if args.local is not None:
        asyncio.run(local_games(args.local, args.script, args.procedure, args.max_tokens,
                                args.settings.split(","), args.lang))
        return
    asyncio.run(shares(args.architectures.split(","), args.script, args.seeds,
                       args.by_purpose))


if __name__ == "__main__":
    main()

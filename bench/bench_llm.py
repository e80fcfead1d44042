"""Model-layer speed, as figures and ratios from one run.

- the embedded local model (SmolLM2-135M via xllamacpp): load time, prompt reading speed,
  free-text generation speed and schema-constrained generation speed, and the ratio
  constrained / free measured on the same prompts in this run;
- the scripted fake: time per text call and per schema call, and the overhead of the
  usual wrapper stack plus a logging seat model around it.

    python bench/bench_llm.py [--rounds 3] [--threads N] [--fake-calls 2000] [--skip-local]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from jubensha.llm.base import GenerateConfig, Message, Model, Request
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.structured import choice_schema, generate_object
from jubensha.llm.wrappers import Budget, MemoryCache, Meter, stack

SHEET = ("You are Dr. Ling, the family physician. You arrived at the manor at nine, "
         "argued with the host about money, and saw Mary near the study at ten. "
         "You must not reveal that you borrowed the host's car.")
QUESTIONS = ["Introduce yourself to the other guests.",
             "Where were you when the scream was heard?",
             "Who do you think had a reason to harm the host?"]
SEATS = ["Dr. Ling", "Mary", "Tom", "Mrs. Chen"]


def _request(question: str, max_tokens: int, sample: int = 0) -> Request:
    return Request(messages=[Message(role="system", content=SHEET),
                             Message(role="user", content=question)],
                   config=GenerateConfig(max_tokens=max_tokens, temperature=0.7, seed=sample),
                   purpose="bench", sample=sample)


async def _rate(model: Model, requests: list[Request], structured: bool) -> float:
    """Completion tokens per second of wall time over ``requests``."""
    schema = choice_schema(SEATS, field_name="suspect", name="Suspicion")
    tokens = 0
    start = time.perf_counter()
    for request in requests:
        if structured:
            result = await generate_object(model, request, schema, attempts=1)
            tokens += result.usage.completion_tokens
        else:
            tokens += (await model.generate(request)).usage.completion_tokens
    return tokens / (time.perf_counter() - start)


async def bench_local(rounds: int, threads: int | None) -> float:
    from jubensha.llm.local import LocalModel

    model = LocalModel(context_tokens=2048, threads=threads)
    print(f"local: {model.threads} thread(s), load {await model.load():.2f} s")
    reading = _request("Summarise what you know. " + SHEET * 30, max_tokens=1)
    reply = await model.generate(reading)
    print(f"local: prompt reading {reply.usage.prompt_tokens / reply.usage.latency_s:.0f} "
          f"tokens/s ({reply.usage.prompt_tokens} tokens)")
    free, constrained = [], []
    for round_ in range(rounds):
        requests = [_request(q, 96, round_) for q in QUESTIONS]
        free.append(await _rate(model, requests, structured=False))
        constrained.append(await _rate(model, requests, structured=True))
    free_rate, constrained_rate = statistics.median(free), statistics.median(constrained)
    print(f"local: free text {free_rate:.1f} tokens/s (median of {rounds} rounds, "
          f"prompt included)")
    print(f"local: schema-constrained {constrained_rate:.1f} tokens/s")
    print(f"local: ratio constrained / free {constrained_rate / free_rate:.2f}")
    return free_rate


async def _per_call(model: Model, calls: int, structured: bool) -> float:
    """Microseconds per call."""
    schema = choice_schema(SEATS, field_name="suspect", name="Suspicion")
    start = time.perf_counter()
    for index in range(calls):
        request = _request(QUESTIONS[index % 3], 96, index)
        if structured:
            await generate_object(model, request, schema)
        else:
            await model.generate(request)
    return (time.perf_counter() - start) / calls * 1e6


async def bench_fake(calls: int) -> float:
    bare = ScriptedModel()
    text = await _per_call(bare, calls, structured=False)
    schema = await _per_call(bare, calls, structured=True)
    built = stack(ScriptedModel(), cache=MemoryCache(), meters=[Meter(Budget(), "run")])
    seated = CallLog().seat(built, "Dr. Ling")
    wrapped = await _per_call(seated, calls, structured=False)
    print(f"fake: text call {text:.0f} µs, schema call {schema:.0f} µs")
    print(f"fake: with cache+accounting+budget+call log {wrapped:.0f} µs per text call "
          f"(overhead ratio {wrapped / text:.2f})")
    return wrapped / text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fake-calls", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=None,
                        help="local model threads (default: all cores but one)")
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()
    local = None if args.skip_local else asyncio.run(bench_local(args.rounds, args.threads))
    ratio = asyncio.run(bench_fake(args.fake_calls))
    speed = f"local {local:.1f} tokens/s free text; " if local else ""
    print(f"llm: {speed}wrapper stack {ratio:.2f}x a bare fake call")


if __name__ == "__main__":
    main()

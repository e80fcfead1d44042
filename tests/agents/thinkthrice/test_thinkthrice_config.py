"""ThinkThrice configurations: the paper's ablation rows by name, overrides, clear errors."""

from __future__ import annotations

import pytest

from jubensha.agents.registry import AgentSpecError, architectures, make_agent
from jubensha.agents.thinkthrice import ABLATIONS, ThinkThriceAgent, ThinkThriceConfig


@pytest.mark.parametrize(("option", "memory", "refine", "attempts"), [
    ("none", False, False, 0),
    ("mr", True, False, 0),
    ("mr+sr", True, True, 0),
    ("mr+sr+sv1", True, True, 1),
    ("mr+sr+sv3", True, True, 3),
    ("", True, True, 3),
])
def test_each_ablation_row_switches_its_modules(option: str, memory: bool, refine: bool,
                                                 attempts: int) -> None:
    agent = make_agent(f"thinkthrice:{option}" if option else "thinkthrice")
    assert isinstance(agent, ThinkThriceAgent)
    config = agent.config
    assert (config.memory, config.refine, config.verify_attempts) == (memory, refine, attempts)
    assert config.name == (option or "mr+sr+sv3")


def test_the_ablation_names_are_the_papers_rows() -> None:
    assert ABLATIONS == ("none", "mr", "mr+sr", "mr+sr+sv1", "mr+sr+sv3")
    assert "thinkthrice" in architectures()
    assert [ThinkThriceConfig.parse(name).name for name in ABLATIONS] == list(ABLATIONS)


def test_options_override_any_setting() -> None:
    config = ThinkThriceConfig.parse("mr+sr+sv3+k=3+retrieval=hybrid+host_length=200")
    assert (config.k, config.retrieval, config.host_length) == (3, "hybrid", 200)
    assert config.threshold(from_host=True).length == 200
    assert ThinkThriceConfig.parse("k=2").name == "mr+sr+sv3"


def test_appendix_g_thresholds_are_the_defaults() -> None:
    config = ThinkThriceConfig()
    host, player = config.threshold(from_host=True), config.threshold(from_host=False)
    assert (host.accuracy, host.facts, host.length) == (0.7, 4, 350)
    assert (player.accuracy, player.facts, player.length) == (0.6, 1, 30)


@pytest.mark.parametrize(("spec", "words"), [
    ("thinkthrice:mr+xx", "'xx': not a module"),
    ("thinkthrice:sv0", "'sv0': not a module"),
    ("thinkthrice:none+mr", "'none' cannot be combined"),
    ("thinkthrice:k=0", "k: Input should be greater than or equal to 1"),
    ("thinkthrice:retrieval=vector", "retrieval"),
    ("thinkthrice:colour=red", "colour"),
])
def test_bad_options_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(AgentSpecError, match=words):
        make_agent(spec)

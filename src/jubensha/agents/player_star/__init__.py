"""Internal.

PLAYER* (Zhu et al.): sensors, suspect state, questioning, pruner, answering; see
``docs/agents/player_star.md``."""

from jubensha.agents.player_star.agent import PlayerStarAgent
from jubensha.agents.player_star.config import PlayerConfig
from jubensha.agents.player_star.sensors import Sensor, SensorChoice, default_sensors, load_sensors

__all__ = ["PlayerConfig", "PlayerStarAgent", "Sensor", "SensorChoice", "default_sensors",
           "load_sensors"]

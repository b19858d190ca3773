# An axis that no mesh declared in [tool.shardcheck] has (the test declares data, model).
import jax
from sharding_types import Sharded


def f(x: Sharded[jax.Array, "float32[8@data,4@modle]"]) -> None: ...  # E: names axis "modle", which no mesh in [tool.shardcheck] has

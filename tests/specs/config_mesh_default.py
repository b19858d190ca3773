"""A config whose mesh defaults to None until the run sets it (jax-llm-examples'
`mesh: jax.sharding.Mesh | None = None`): the map reads the config as its defaults, and
`NamedSharding(None, ...)` would raise; the spec written is still the site's."""
import dataclasses

import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

BATCH_AXIS_NAME = "data"
TENSOR_AXIS_NAME = ("y", "z")


@dataclasses.dataclass
class Config:
    embed: int = 16
    mesh: jax.sharding.Mesh | None = None


def logits_sharding(cfg: Config):
    return NamedSharding(cfg.mesh, P(BATCH_AXIS_NAME, None, TENSOR_AXIS_NAME))


cfg = dataclasses.replace(Config(), mesh=jax.make_mesh((2, 2, 2), ("data", "y", "z")))
SPEC = repr(logits_sharding(cfg).spec)

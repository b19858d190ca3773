"""What each JAX API means to the analyzer, one module per API family.

Importing this package registers every family's handlers (see ``registry``)."""

from . import arrays as arrays  # noqa: F401  (registers its handlers)
from . import collectives as collectives
from . import configs as configs
from . import constructors as constructors
from . import control_flow as control_flow
from . import filter_tables as filter_tables
from . import flax_linen as flax_linen
from . import initializers as initializers
from . import flax_nnx as flax_nnx
from . import flax_optimizers as flax_optimizers
from . import jit as jit
from . import logical as logical
from . import mesh as mesh
from . import optax as optax
from . import optax_losses as optax_losses
from . import placement as placement
from . import pytrees as pytrees
from . import runtime_layer as runtime_layer
from . import serialization as serialization
from . import shard_map as shard_map
from . import sites as sites  # after the handlers: it observes their calls
from . import specs as specs
from . import transforms as transforms
from ..api import modelled_names as modelled_names

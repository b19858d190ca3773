"""shardcheck's sharding types: one model, JAX's syntax, runtime assertions.

    import sharding_types as st
    t = st.parse("float32[8@data,16@(x,y)]{V:x}")
    st.assert_sharding(x, "float32[B@data,D]")

Importing this package does not import JAX; the runtime checks import it when they run.
"""

from typing import TYPE_CHECKING

# one version for the distribution, kept where the CLI reads it without importing this package
from shardcheck._version import __version__ as __version__

from ._dtypes import DTYPES as DTYPES
from ._dtypes import TypePromotionError as TypePromotionError
from ._dtypes import canonicalize_dtype as canonicalize_dtype
from ._dtypes import default_dtype as default_dtype
from ._dtypes import dtype_kind as dtype_kind
from ._dtypes import promote_types as promote_types
from ._dtypes import python_scalar_dtype as python_scalar_dtype
from ._dtypes import result_type as result_type
from ._dtypes import to_inexact_dtype as to_inexact_dtype
from ._errors import GRAMMAR as GRAMMAR
from ._errors import ShardingError as ShardingError
from ._errors import ShardingMismatchError as ShardingMismatchError
from ._errors import ShardingSyntaxError as ShardingSyntaxError
from ._match import mismatch_reasons as mismatch_reasons
from ._model import AxisType as AxisType
from ._model import Dim as Dim
from ._model import MeshModel as MeshModel
from ._model import ShardingType as ShardingType
from ._partial import PartialMesh as PartialMesh
from ._partial import PartialType as PartialType
from ._record import Recorder as Recorder
from ._record import record as record
from ._runtime import ShardingAnnotation as ShardingAnnotation
from ._runtime import abstract_array as abstract_array
from ._runtime import assert_sharding as assert_sharding
from ._runtime import check_shardings as check_shardings
from ._runtime import from_aval as from_aval
from ._runtime import mesh_model as mesh_model
from ._runtime import typeof as typeof
from ._printing import format_entry as format_entry
from ._printing import format_partial as format_partial
from ._printing import format_spec as format_spec
from ._printing import format_type as format_type
from ._syntax import parse as parse

if TYPE_CHECKING:
    # Static checkers see Sharded[jax.Array, "..."] as Annotated[jax.Array, "..."]:
    # a plain array type, with or without shardcheck's mypy plugin.
    from typing import Annotated as Sharded
else:
    from ._runtime import Sharded as Sharded


__all__ = [
    "AxisType", "DTYPES", "Dim", "GRAMMAR", "MeshModel", "PartialMesh", "PartialType", "Recorder",
    "Sharded", "ShardingAnnotation", "ShardingError", "ShardingMismatchError",
    "ShardingSyntaxError", "ShardingType", "TypePromotionError", "abstract_array",
    "assert_sharding", "canonicalize_dtype", "check_shardings", "default_dtype", "dtype_kind",
    "format_entry", "format_partial", "format_spec", "format_type", "from_aval", "mesh_model",
    "mismatch_reasons", "parse", "promote_types", "python_scalar_dtype", "record", "result_type",
    "to_inexact_dtype", "typeof",
]

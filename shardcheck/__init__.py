"""shardcheck: an explicit-sharding type checker for JAX.

Import names: ``sharding_types`` (the model and runtime assertions),
``shardcheck.analyzer`` (static analysis), ``shardcheck.plugin`` (mypy plugin).
"""

import os

from ._version import __version__ as __version__

# The repository keeps analyzer/ and plugin/ beside this directory, and the editable
# install links them under an installed copy of it. When this directory is imported
# straight from a checkout (its root first on sys.path, as in `python -m pytest` there),
# the installed copy's subpackages must still be found: extend the search to it. (Only
# then: pkgutil costs a noticeable part of `shardcheck --version`'s start-up.)
if not os.path.isdir(os.path.join(os.path.dirname(__file__), "analyzer")):
    import pkgutil
    __path__ = pkgutil.extend_path(__path__, __name__)

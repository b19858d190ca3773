"""The codes of the findings shardcheck reports about a file itself rather than its
sharding (the meta rules), importable without the analysis: the runner and the cache
use them on runs where every result comes from the cache."""

SYNTAX_ERROR = "SC001"
INTERNAL_ERROR = "SC002"
SKIPPED_FILE = "SC003"
INVALID_SUPPRESSION = "SC004"
UNUSED_SUPPRESSION = "SC005"

# reported over the whole project once each file is analysed (``analyzer/project_axes``):
# a file's own analysis never reports them, so a suppression of one is never "unused"
# there
AXIS_IN_NO_PROJECT_MESH = "SC114"
PARALLELISM_ORDER = "SC115"
PROJECT_CODES = frozenset({AXIS_IN_NO_PROJECT_MESH, PARALLELISM_ORDER})

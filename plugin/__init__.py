"""shardcheck's mypy plugin (imported as ``shardcheck.plugin``).

Enable it with one line of mypy configuration::

    [tool.mypy]
    plugins = ["shardcheck.plugin"]

Nothing here imports mypy until mypy calls ``plugin()``, so the rest of shardcheck
never needs mypy installed.
"""


def plugin(version: str):
    """mypy's entry point: the plugin class for this mypy ``version``."""
    from ._mypy import ShardcheckPlugin
    return ShardcheckPlugin

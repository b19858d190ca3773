from ..ftypes import WARNING
from ..rule import ShardRule


class UnusedSuppression(ShardRule):
    """
    ## What it does
    With `--warn-unused-ignores` (or `warn-unused-ignores = true` in
    `[tool.shardcheck]`), reports a suppression comment that silences nothing: a
    `# shardcheck: ignore[...]` (or a `# noqa:` naming a shardcheck code) on a line where
    no finding it names is reported.

    ## Why is this bad?
    A suppression outlives the finding it was written for (the code was fixed, the rule
    got more precise), and then silences the next, unrelated finding on that line
    unseen. A bare `# noqa`, and `# noqa` codes of other tools, are left alone: other
    linters read the same comment. A code the configuration does not enable for the file
    is left alone too (another configuration may need it).

    ## Example
    ```python
    x = jax.device_put(x, NamedSharding(mesh, P("data")))  # shardcheck: ignore[SC101]
    ```

    Use instead:
    ```python
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    ```
    """

    CODE = "SC005"
    NAME = "unused-suppression"
    SEVERITY = WARNING
    META = True
    JAX_SINCE = None

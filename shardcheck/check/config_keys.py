"""Every key of ``[tool.shardcheck]``, with its type, default, an example and what it does:
the configuration reference (docs/configuration-reference.md) is generated from this
table, and a test fails when a key that ``config.from_table`` or
``logical_config`` reads is missing from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class Key:
    name: str  # as written in the table (``logical.file``: a key of [tool.shardcheck.logical])
    kind: str  # its TOML type, as a reader writes it
    default: str  # what applies when it is not given
    example: str  # a TOML line setting it
    doc: str  # what it does


KEYS: Tuple[Key, ...] = (
    Key("select", "list of strings", "every rule", 'select = ["SC1", "deprecated-api"]',
        "The rules to report: codes (`SC101`), code prefixes (`SC1`) or names "
        "(`unknown-mesh-axis`). `--select` replaces it; `--extend-select` adds to it."),
    Key("ignore", "list of strings", "none", 'ignore = ["SC107"]',
        "Rules not to report, as `select` names them. Wins over `select`."),
    Key("exclude", "list of strings", "none", 'exclude = ["build/", "third_party/**"]',
        "Paths not to check when a directory is walked (gitignore-style patterns, relative "
        "to the config). A file named on the command line is always checked, unless "
        "`--force-exclude` is given (as the pre-commit hooks give it)."),
    Key("extend-exclude", "list of strings", "none", 'extend-exclude = ["generated/"]',
        "More patterns for `exclude`, kept beside it."),
    Key("per-file-ignores", "table of pattern = list of strings", "none",
        'per-file-ignores = { "tests/**" = ["no-mesh-context"] }',
        "Rules not to report in the files a pattern matches."),
    Key("meshes", "table of name = table of axis = size", "none",
        "meshes.production = { data = 64, model = 8 }",
        "Meshes the source cannot state (sizes from the device count): each fills in the "
        "sizes of a mesh the source builds with the same axis names. Also written as "
        "`[tool.shardcheck.meshes.NAME]` tables; `axis_types = \"explicit\"` (or `auto`, "
        "`manual`, or a list, one per axis) sets the axis types. `--mesh NAME` checks "
        "as if every mesh had that shape."),
    Key("default-mesh", "string (a name of `meshes`)", "none", 'default-mesh = "production"',
        "The mesh assumed for code whose callers are not in view (library functions)."),
    Key("cache-dir", "string (a directory)",
        "`.shardcheck_cache` beside the pyproject.toml, else at the checkout's root, else "
        "the user's cache directory",
        'cache-dir = ".shardcheck_cache"',
        "Where results are cached, relative to the config. `shardcheck clean` removes it."),
    Key("respect-gitignore", "boolean", "true", "respect-gitignore = true",
        "Whether a directory walk skips what `.gitignore` files ignore."),
    Key("max-collective-bytes", "size (\"64MiB\", or bytes)", "no budget",
        'max-collective-bytes = "64MiB"',
        "confirm: the most bytes a jitted function's collectives may move in its compiled "
        "HLO."),
    Key("jax-version", "string", '"0.10"', 'jax-version = "0.12"',
        "The JAX the code targets: `deprecated-api` reports what that version deprecates "
        "or removed. Supported: 0.10, 0.11, 0.12."),
    Key("timeout-per-file", "seconds (number)", "60", "timeout-per-file = 60",
        "The longest one file's analysis may take; a file past it is `skipped-file`. 0: no "
        "limit (at most a week)."),
    Key("memory-per-file", "size", '"2GiB"', 'memory-per-file = "2GiB"',
        "The most memory one file's analysis may take; a file past it is `skipped-file`. "
        "0: no limit; else 16 MiB to 1 PiB."),
    Key("generated-size-limit", "size", '"512KiB"', 'generated-size-limit = "512KiB"',
        "Generated files (protobuf, ...) larger than this are skipped. 0: none are."),
    Key("confirm-timeout", "seconds (number)", "300", "confirm-timeout = 300",
        "confirm: the longest a program may run. 0: no limit."),
    Key("confirm-programs", "list of strings", "none", 'confirm-programs = ["scripts/train_*.py"]',
        "confirm DIR: files to run besides those with an `if __name__ == \"__main__\":` "
        "guard (glob patterns, relative to the config)."),
    Key("warn-unused-ignores", "boolean", "false", "warn-unused-ignores = true",
        "Report each suppression comment that silences nothing on its line "
        "(`unused-suppression`)."),
    Key("baseline", "string (a file)", "none", 'baseline = "shardcheck-baseline.json"',
        "Hide the findings recorded in this baseline file (relative to the config); "
        "`--write-baseline FILE` writes one."),
    Key("logical", "table", "rules discovered in the project's YAML/JSON configs",
        '[tool.shardcheck.logical]',
        "Flax logical axis names: where the rules that map them to mesh axes are, and the "
        "project's wrappers of `nn.with_logical_constraint` (the keys below)."),
    Key("logical.file", "string (a YAML or JSON file)", "discovered",
        'file = "configs/base.yml"',
        "The file holding the rule table (relative to the config); a file that cannot be "
        "read is a config error."),
    Key("logical.rules", "list of [name, axis or list of axes or null]", "none",
        'rules = [["batch", "data"], ["embed", ["fsdp", "tensor"]]]',
        "The rule table itself, written inline (instead of `file`)."),
    Key("logical.rules-key", "string (a dotted key)", '"logical_axis_rules"',
        'rules-key = "logical_axis_rules"', "Where the rule table is in `file`."),
    Key("logical.mesh-axes-key", "string (a dotted key)", '"mesh_axes"',
        'mesh-axes-key = "mesh_axes"',
        "Where the mesh axes are in `file` (optional there): a rule mapping to an axis "
        "not among them is `unknown-mesh-axis`."),
    Key("logical.mesh-axes", "list of strings", "none", 'mesh-axes = ["data", "fsdp", "tensor"]',
        "The mesh axes, written inline (with `rules`)."),
    Key("logical.wrappers", "table of function = { array = N, names = M }", "none",
        'wrappers = { "mylib.sharding.maybe_shard_with_logical" = { array = 0, names = 1 } }',
        "Project functions read as `nn.with_logical_constraint(array, names)`: the "
        "positions of their array and logical-names arguments."),
    Key("logical.discover", "boolean", "true", "discover = false",
        "With no `file` or `rules`: whether to look for a rule file in the project."),
)


def reference() -> str:
    """The configuration reference, as Markdown."""
    out = ["# Configuration reference", "",
           "Every key of `[tool.shardcheck]` in `pyproject.toml` (generated from "
           "`shardcheck/check/config_keys.py`; [Configuration](configuration.md) says how "
           "the keys work together). A key not listed here is a config error (exit 2), and "
           "so is a value of the wrong type.", ""]
    for key in KEYS:
        table = "[tool.shardcheck.logical]" if key.name.startswith("logical.") \
            else "[tool.shardcheck]"
        out += [f"## `{key.name}`", "", key.doc, "",
                f"- Type: {key.kind}", f"- Default: {key.default}", "",
                "```toml", table if not key.example.startswith("[") else key.example]
        if not key.example.startswith("["):
            out.append(key.example)
        out += ["```", ""]
    return "\n".join(out)

"""Generate the docs pages that come from shardcheck's own registries:

- ``docs/rules/index.md`` and one page per rule (``docs/rules/SC101.md``): the rule's code,
  name, severity, the JAX versions it applies to and how they differ, its docstring
  (what it does, why, an example, what to use instead, fix safety), and its VALID and
  INVALID examples, each run under JAX by ``tests/analyzer/test_rules.py``;
- ``docs/configuration-reference.md``: every ``[tool.shardcheck]`` key
  (``shardcheck/check/config_keys.py``);
- ``docs/changelog.md``: ``CHANGELOG.md``, and ``docs/index.md``: the README;
- the manifest, ``docs/manifest.json`` and ``analyzer/manifest.py`` (the table the
  analyzer's light paths read: rule codes and names, the pre-check's vocabulary): the
  rule codes, names and severities, the names each API family of the interpreter models
  and whether they make sharding values, and the pre-check's vocabulary derived from them
  (``analyzer/registry_manifest.py``).

    python docs/generate.py          # write them
    python docs/generate.py --check  # exit 1, naming each page that is out of date

``tests/test_docs.py`` runs the check: a rule or a key added without regenerating fails.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
from typing import Dict

DOCS = pathlib.Path(__file__).resolve().parent


def pages() -> Dict[str, str]:
    """Each generated page, by its path under docs/."""
    from shardcheck.analyzer.rules import all_rules
    from shardcheck.analyzer import registry_manifest
    from shardcheck.check.config_keys import reference
    rules = all_rules()
    table = manifest()
    changelog = (DOCS.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    out = {"index.md": _home(), "rules/index.md": _index(rules),
           "changelog.md": "<!-- generated from CHANGELOG.md by docs/generate.py -->\n" +
                           changelog.replace("](docs/", "]("),
           "configuration-reference.md": reference() + "\n",
           "manifest.json": json.dumps(table, indent=1, sort_keys=True) + "\n",
           # outside docs/: what the light paths of the analyzer read (catalog, precheck)
           "../analyzer/manifest.py": registry_manifest.python_module(table)}
    for code, rule in rules.items():
        out[f"rules/{code}.md"] = _rule_page(rule)
    return out


def _home() -> str:
    """The README, as the site's home page: its links into docs/ made relative to it."""
    text = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    text = text.replace("](docs/)", "](index.md)").replace("](docs/", "](")
    text = text.replace("](CONTRIBUTING.md)", "](contributing.md)")
    text = text.replace("](CHANGELOG.md)", "](changelog.md)")
    text = text.replace("The docs are in [`docs/`](index.md) (build them with `mkdocs serve`; "
                        "CI builds them strictly):", "The pages of this site:")
    return "<!-- generated from README.md by docs/generate.py -->\n" + lists_spaced(text) + "\n"


def manifest() -> dict:
    """What the registries hold (``analyzer/registry_manifest.py``)."""
    from shardcheck.analyzer import registry_manifest
    return registry_manifest.build()


def _index(rules) -> str:
    out = ["# Rules", "",
           "Every rule shardcheck reports, with its code and name (either selects it in "
           "`select`, `ignore`, `--select` and suppression comments). Generated from the "
           "rules themselves (`docs/generate.py`).", "",
           "| code | name | severity | what it reports |", "|---|---|---|---|"]
    for code, rule in rules.items():
        summary = rule.summary().replace("|", "\\|")
        out.append(f"| [{code}]({code}.md) | {rule.NAME} | {rule.SEVERITY} | {summary} |")
    return "\n".join(out) + "\n"


def _rule_page(rule) -> str:
    docs = rule.docs()
    out = [f"# {rule.CODE} {rule.NAME}", "",
           f"- Severity: {rule.SEVERITY}",
           f"- Applies to: {rule.jax_versions()}", ""]
    diffs = rule.jax_differences()
    if diffs:
        out += ["Where those versions differ, the analysis follows the default profile:", ""]
        out += [f"- {d[0].upper()}{d[1:]}." for d in diffs] + [""]
    out += [lists_spaced(docs), ""]
    if rule.VALID or rule.INVALID:
        out += ["## Examples, as they run", "",
                "Each runs under JAX on 8 CPU devices in shardcheck's tests: a VALID one "
                "runs cleanly and gets no error-level finding; an INVALID one is flagged "
                "at its line and fails under JAX as said.", ""]
    lang = "yaml" if rule.CONFIG else "python"
    for i, ex in enumerate(rule.INVALID, 1):
        outcome = {"error": "JAX raises" + (f" (matching `{ex.jax_error}`)" if ex.jax_error
                                            else ""),
                   "deprecation": "JAX warns (DeprecationWarning)",
                   "wrong-result": "it runs, with a wrong result"}[ex.jax_outcome]
        out += [f"### INVALID {i}: flagged at line {ex.line}; {outcome}", "",
                f"```{lang}", ex.code.rstrip("\n"), "```", ""]
        if ex.witness:
            out += ["The check that sees the wrong result:", "", "```python",
                    ex.witness.rstrip("\n"), "```", ""]
    for i, ex in enumerate(rule.VALID, 1):
        out += [f"### VALID {i}", "", f"```{lang}", ex.code.rstrip("\n"), "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def lists_spaced(text: str) -> str:
    """``text`` with a blank line before each list that follows a paragraph line, as
    Python-Markdown (mkdocs) needs one, where GitHub does not. (Code blocks are left
    alone.)"""
    out, fence, prev = [], False, ""
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and _LIST.match(line) and prev.strip() and not _LIST.match(prev) \
                and not prev.startswith((" ", "|", "#")):
            out.append("")
        out.append(line)
        prev = line if not fence else ""
    return "\n".join(out)


_LIST = re.compile(r"^(?:[-*]|\d+\.) ")


def main(argv) -> int:
    check = "--check" in argv
    stale = []
    for rel, text in pages().items():
        path = DOCS / rel
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if check:
        known = set(pages())
        stale += [str(p.relative_to(DOCS)) for p in (DOCS / "rules").glob("*.md")
                  if str(p.relative_to(DOCS)) not in known]
    if stale:
        print("out of date (run `python docs/generate.py`): " + ", ".join(sorted(stale)),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

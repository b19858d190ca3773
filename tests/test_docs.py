"""The docs: the generated pages (the rule pages and their index, the configuration
reference, the manifest, the home page from the README) are what ``docs/generate.py``
makes of the registries now, so a rule or a config key added without its docs fails here;
every rule has its page, every key of the config its entry; the README stays short and
its 20-second example is the real output."""

import importlib.util
import pathlib
import re
import subprocess
import sys

from shardcheck.analyzer.rules import all_rules

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_pages_are_current():
    for rel, text in _generator().pages().items():
        path = ROOT / "docs" / rel
        assert path.exists() and path.read_text(encoding="utf-8") == text, \
            f"docs/{rel} is out of date: run `python docs/generate.py`"


def test_every_rule_has_a_page_with_its_metadata_and_examples():
    index = (ROOT / "docs" / "rules" / "index.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(SC\d{3})\]\(SC\d{3}\.md\) \| ([a-z-]+) \| ([a-z]+) \|", index, re.M)
    rules = all_rules()
    assert [code for code, _, _ in rows] == list(rules)
    for code, name, severity in rows:
        rule = rules[code]
        assert (name, severity) == (rule.NAME, rule.SEVERITY), code
        page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {code} {rule.NAME}\n") and "## What it does" in page
        assert page.count("### INVALID") == len(rule.INVALID), code
        assert page.count("### VALID") == len(rule.VALID), code


def test_every_config_key_has_its_reference_entry():
    from shardcheck.analyzer.logical_config import KNOWN_KEYS as LOGICAL
    from shardcheck.check.config import KNOWN_KEYS
    from shardcheck.check.config_keys import KEYS
    documented = [k.name for k in KEYS]
    assert len(documented) == len(set(documented))
    assert set(documented) == set(KNOWN_KEYS) | {f"logical.{k}" for k in LOGICAL}
    reference = (ROOT / "docs" / "configuration-reference.md").read_text(encoding="utf-8")
    assert all(f"## `{name}`" in reference for name in documented)


def test_the_readme_counts_the_rules_the_manifest_has():
    from shardcheck.analyzer import manifest
    counts = re.findall(r"(\d+) rules", README.read_text(encoding="utf-8"))
    assert counts and all(int(n) == len(manifest.RULES) == len(all_rules()) for n in counts)


def test_the_readme_is_short_and_its_example_is_the_real_output(tmp_path):
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 10_000
    section = text[text.index("## In 20 seconds"):]
    program = section[section.index("```python\n") + 10:section.index("\n```\n")]
    shown = section[section.index("$ shardcheck train.py\n") + 22:]
    shown = shown[:shown.index("```")].rstrip("\n")
    (tmp_path / "train.py").write_text(program + "\n")
    r = subprocess.run([sys.executable, "-m", "shardcheck", "train.py", "--no-cache"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout.rstrip("\n") == shown, r.stdout

"""Tag a release: ``python tools/release.py`` (``--dry-run`` to see what it would do).

The tag scheme, which the README names and pre-commit's ``rev:`` and the GitHub
Action's ``uses:`` read:

- ``vX.Y.Z`` for each release, on the commit whose ``shardcheck/_version.py`` says
  ``X.Y.Z`` (pyproject.toml reads its version from there), never moved;
- ``vX`` for the newest release of major version ``X``, moved to each new one, for
  Action users who take fixes without editing their workflow (as ``actions/checkout@v4``).
  For ``0.y`` releases the moving tag is ``v0.Y``: before 1.0 a minor release may break.

It refuses a working tree with changes, a version tagged already, and a version the
changelog has no section for (``## X.Y.Z``). It creates annotated tags locally and
prints the ``git push`` that publishes them; it pushes nothing itself.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

_VERSION = re.compile(r'^__version__ = "(\d+)\.(\d+)\.(\d+)"$', re.M)


class ReleaseError(Exception):
    """Why no tag was made."""


def version_of(root: Path) -> str:
    found = _VERSION.search((root / "shardcheck" / "_version.py").read_text(encoding="utf-8"))
    if found is None:
        raise ReleaseError("shardcheck/_version.py holds no `__version__ = \"X.Y.Z\"`")
    return ".".join(found.groups())


def moving_tag(version: str) -> str:
    """``v1`` for 1.4.2; ``v0.3`` for 0.3.1 (before 1.0 a minor release may break)."""
    major, minor, _ = version.split(".")
    return f"v{major}" if major != "0" else f"v0.{minor}"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def plan(root: Path) -> List[List[str]]:
    """The git commands that tag ``root``'s HEAD as its version's release."""
    version = version_of(root)
    if _git(root, "status", "--porcelain", "--untracked-files=no"):
        raise ReleaseError("the working tree has changes: commit them first")
    tag = f"v{version}"
    if tag in _git(root, "tag", "--list", tag).splitlines():
        raise ReleaseError(f"{tag} is tagged already; raise shardcheck/_version.py first")
    changelog = root / "CHANGELOG.md"
    if not changelog.is_file() or not re.search(
            rf"^## {re.escape(version)}\b", changelog.read_text(encoding="utf-8"), re.M):
        raise ReleaseError(f"CHANGELOG.md has no `## {version}` section")
    moving = moving_tag(version)
    return [["git", "tag", "-a", tag, "-m", f"shardcheck {version}"],
            ["git", "tag", "-f", "-a", moving, "-m", f"shardcheck {version} (newest {moving})"]]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    try:
        commands = plan(args.root)
    except (ReleaseError, OSError, subprocess.CalledProcessError) as e:
        print(f"release: {e}", file=sys.stderr)
        return 1
    for cmd in commands:
        print(" ".join(cmd))
        if not args.dry_run:
            subprocess.run(cmd, cwd=args.root, check=True)
    tags = " ".join(cmd[3] for cmd in commands)
    print(f"publish with: git push origin {tags.split()[0]} && git push -f origin {tags.split()[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

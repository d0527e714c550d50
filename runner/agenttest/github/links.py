"""Suite paths as GitHub wants them, and links to their lines in the commit under test.

Annotations, JUnit `file`, CTRF `filePath` and the summary's links all need the suite file relative to the
repository root, with forward slashes and no `./` (GitHub ignores annotations on `./x` and `../x` paths).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from ..workspace import repository_root
from . import environment


@dataclass(frozen=True)
class SourceLinks:
    """Turns a suite path into its repository-relative form and, when the repository is known, a URL of a line."""

    root: Path
    cwd: Path
    blob_url: str | None = None   # https://github.com/OWNER/REPO/blob/SHA
    # Every result of a file names the same path: each is worked out once (10,000 cases made 40,000 path parses).
    _relative: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_environment(cls, cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> SourceLinks:
        cwd = (cwd or Path.cwd()).resolve()
        return cls(root=repository_root(cwd, environ), cwd=cwd, blob_url=environment.blob_url(environ))

    def relative(self, path: str | None) -> str | None:
        """`path` (as the user named it, relative to the working directory) relative to the repository root, with
        forward slashes; None when there is no path or it lies outside the repository."""
        if not path:
            return None
        if path not in self._relative:
            self._relative[path] = self._repository_relative(path)
        return self._relative[path]

    def _repository_relative(self, path: str) -> str | None:
        absolute = Path(os.path.normpath(self.cwd / path))
        try:
            relative = absolute.relative_to(self.root)
        except ValueError:
            return None
        return PurePosixPath(*relative.parts).as_posix() if relative.parts else None

    def display(self, path: str | None) -> str:
        """The repository-relative path when there is one, else the path as given (`./` and `\\` tidied)."""
        if not path:
            return ""
        return self.relative(path) or PurePosixPath(Path(os.path.normpath(path)).as_posix()).as_posix()

    def url(self, path: str | None, line: int | None = None) -> str | None:
        """`…/blob/SHA/path#L12` for a file in the repository, or None when the repository is not known."""
        relative = self.relative(path)
        if not self.blob_url or not relative:
            return None
        anchor = f"#L{line}" if line else ""
        return f"{self.blob_url}/{quote(relative)}{anchor}"

"""Problems found in an input, each tied to the place it concerns.

A path follows SNAPSHOT.md: `tournament.fee`, `players[3].chips`, `$` for a whole document,
`--decision` / `--policy.KEY` / `--policy` for the command-line options. The same paths are
shown by the web wizard and the API, so a user sees one vocabulary everywhere.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    message: str
    # The id of the player a `players[i]...` path points at, when the document names one: an
    # index alone sends the reader counting rows.
    player: str | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    @property
    def described(self) -> str:
        """The problem in one line, naming the player beside the row's index."""
        if self.player is None:
            return str(self)
        return f"{self.path} (player {self.player}): {self.message}"


class InvalidInput(Exception):
    """Raised for anything the engine refuses to settle; carries every problem it found."""

    def __init__(self, problems: list[Problem]):
        if not problems:
            raise ValueError("InvalidInput needs at least one problem")
        self.problems = list(problems)
        super().__init__("\n".join(map(str, self.problems)))

    @classmethod
    def at(cls, path: str, message: str) -> "InvalidInput":
        return cls([Problem(path, message)])

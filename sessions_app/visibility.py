"""Which messages a transcript shows: *live*, *compacted* (archived by a compaction),
*rewound* (undone by the user) or *hidden* (model-only scaffolding); on files without these
columns every row is live.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

LIVE = "live"
KINDS = ("compacted", "rewound", "hidden")


def kind_of(active, compacted, display_kind) -> str:
    """live, compacted, rewound or hidden, from a row's three columns (None where absent)."""
    if display_kind == "hidden":
        return "hidden"
    if active == 0:
        return "compacted" if compacted else "rewound"
    return LIVE


@dataclass(frozen=True)
class Visibility:
    """What a reader asked to see besides the live transcript (``?show=``)."""

    compacted: bool = True
    rewound: bool = False
    hidden: bool = False

    @classmethod
    def from_params(cls, values: list[str]) -> Visibility:
        """From ``?show=`` values (repeated or comma-separated; none is the default; the form
        always sends ``show=live``, so unticking every box means "live only")."""
        if not values:
            return cls()
        wanted = {part.strip() for value in values for part in value.split(",")}
        return cls(**{kind: kind in wanted for kind in KINDS})

    def as_param(self) -> str:
        return ",".join(kind for kind in KINDS if getattr(self, kind)) or LIVE

    def with_kind(self, kind: str) -> Visibility:
        return replace(self, **{kind: True}) if kind in KINDS else self

    @property
    def label(self) -> str:
        """``live + compacted`` for ``?show=compacted``: live messages are always shown."""
        return " + ".join([LIVE, *(kind for kind in KINDS if getattr(self, kind))])

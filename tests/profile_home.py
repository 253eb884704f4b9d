"""A ``HERMES_HOME`` of several profiles, each store of a different Hermes layout.

``build_home`` writes ``<home>/state.db`` (profile ``default``) and
``<home>/profiles/<name>/state.db`` for the other profiles, with sessions whose start times
interleave across profiles (so a merged list really has to merge), one session id present in
two profiles, a word every profile says (``common``) and one word per profile
(``only<name>``).  ``serve_home`` points the explorer at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.builders import DAY, HOUR, NASTY_NOW, StateDB

# profile -> layout
PROFILES = {"default": "current", "support": "v10", "coder": "v20", "cron": "v5"}
SHARED_ID = "20260101_shared"


@dataclass
class HomeFacts:
    home: Path
    # profile -> [(session id, started_at)]
    sessions: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    # profile -> number of messages
    messages: dict[str, int] = field(default_factory=dict)

    def path(self, profile: str) -> Path:
        if profile == "default":
            return self.home / "state.db"
        return self.home / "profiles" / profile / "state.db"


def write_store(path: Path, profile: str, layout: str, index: int, per: int) -> tuple[list, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    made, count = [], 0
    with StateDB.create(path, layout) as db:
        for i in range(per):
            # Profiles interleave: profile k's i-th session starts at i hours + k minutes.
            started = NASTY_NOW - 3 * DAY + i * HOUR + index * 60
            sid = f"2025122{index}_{i:03d}_{profile}"
            db.session(
                sid,
                source=["cli", "telegram", "cron"][i % 3],
                started_at=started,
                title=f"{profile} session {i}",
                model=f"model-{profile}",
                input_tokens=100 * (i + 1),
                output_tokens=10 * (i + 1),
                estimated_cost_usd=0.01 * (i + 1),
            )
            db.message(sid, "user", f"common question {i} from only{profile}")
            db.message(sid, "assistant", f"common answer {i}")
            count += 2
            made.append((sid, started))
        if profile in ("default", "support"):
            started = NASTY_NOW - 10 * DAY + index
            db.session(SHARED_ID, started_at=started, title=f"shared in {profile}")
            db.message(SHARED_ID, "user", f"shared hello from {profile}")
            count += 1
            made.append((SHARED_ID, started))
        db.refresh_counters()
    return made, count


def build_home(home: Path, per: int = 7, profiles: dict[str, str] | None = None) -> HomeFacts:
    facts = HomeFacts(home=home)
    for index, (profile, layout) in enumerate((profiles or PROFILES).items()):
        made, count = write_store(facts.path(profile), profile, layout, index, per)
        facts.sessions[profile] = made
        facts.messages[profile] = count
    return facts


def serve_home(settings, home: Path, request) -> None:
    """Point the explorer at ``home`` (the ``settings`` fixture restores it after the test);
    ``request`` is the test's pytest request."""
    from hermes_explorer.stores import REGISTRY

    allow_new_aliases(
        request.getfixturevalue("monkeypatch"), request.getfixturevalue("django_db_blocker")
    )

    settings.HERMES_HOME = str(home)
    settings.HERMES_SINGLE_FILE = False
    settings.HERMES_STORES = ""
    REGISTRY.rescan()


# Django's test cases refuse connections to aliases they did not know when the test class
# was set up; the registry makes one per profile as it finds them.
PROFILE_DBS = "__all__"


def allow_new_aliases(monkeypatch, blocker) -> None:
    """Let the test connect to aliases made during it (Django's own connect, unpatched);
    ``blocker`` is pytest-django's ``django_db_blocker`` fixture."""
    from django.db.backends.base.base import BaseDatabaseWrapper

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", blocker._real_ensure_connection)

"""Full-text search on a profile kept in PostgreSQL: the same hits as on the SQLite file the
schema was loaded from, decided on the redacted text there too.

Each nasty layout (and a demo store) is served twice, as its file (``/p/file/``) and as its
schema (``/p/team/``); the same search on both must list the same messages, in every mode and
sort, page after page.
"""

from __future__ import annotations

import io
import sqlite3
import time
from urllib.parse import urlencode

import psycopg
import pytest
from django.core.management import call_command

from hermes_explorer import stores
from hermes_fixtures.demo import build_demo_db
from sessions_app.search import engine, local_index, pg
from tests.builders import StateDB
from tests.hermes_pg import hermes_pg  # noqa: F401
from tests.roles_helpers import client_for
from tests.test_pg_door import serve  # noqa: F401

pytestmark = [pytest.mark.django_db(databases="__all__"), pytest.mark.render_context]


@pytest.fixture(autouse=True)
def _own_search_index(settings, tmp_path):
    """Each test's own local word indexes: one built by a test is not another's."""
    settings.HERMES_SEARCH_INDEX_DIR = tmp_path / "search-index"


def index_words() -> str:
    """``manage.py search_index`` as the warm-up timer runs it; what it printed."""
    out = io.StringIO()
    call_command("search_index", stdout=out, stderr=out)
    return out.getvalue()


def indexed_high(profile: str) -> int | None:
    """Up to which message id the profile's local index serves its search (None: no index)."""
    (one,) = [s for s in stores.all_stores() if s.name == profile]
    with stores.using(one):
        index = local_index.current(2.0)
    return None if index is None else index.high


def search(client, profile: str, **params):
    response = client.get(f"/p/{profile}/search/?" + urlencode(params, doseq=True))
    assert response.status_code == 200, response.status_code
    return response.context["result"]


def every_hit(client, profile: str, **params) -> tuple[list[int], list[str]]:
    """The ids of every hit, page after page (and the hits apart), and the first page's
    error, if any."""
    ids: list[int] = []
    for _ in range(100):
        result = search(client, profile, **params)
        ids += [hit.id for hit in result.hits] + [hit.id for hit in result.unindexed_hits]
        if result.error:
            return ids, [result.error]
        if result.next_page:
            params = dict(params, page=result.next_page)
        elif result.next_before:
            params = dict(params, before=result.next_before, sort=result.sort)
        else:
            return ids, []
    raise AssertionError("search pages did not end")


def corpus(facts) -> list[dict]:
    """Searches of every kind: words, AND/OR/NOT, prefixes, phrases, column filters, CJK,
    substrings, filters; each in both orders."""
    rare, common = facts.rare_word, facts.common_word
    asked = [
        {"q": rare},
        {"q": common},
        {"q": f"{common} {rare}"},
        {"q": "backup disk"},
        {"q": "scan sessions"},
        {"q": "東京"},
        {"q": "review", "role": "user"},
        {"q": "turn", "session_id": facts.big_session_id},
        {"q": common, "source": "telegram", "date_from": "2000-01-01"},
        {"q": "System note", "show": "hidden"},
        {"q": "export", "role": "tool"},
        {"q": "select"},
        {"q": "photo sent"},  # multimodal content, decoded before it is matched
        {"q": "cat jpg"},
        {"q": facts.megabyte_tail_word},
        {"q": f"{rare} OR backup", "mode": "advanced"},
        {"q": "backup NOT disk", "mode": "advanced"},
        {"q": f"{common} NOT (pages OR review)", "mode": "advanced"},
        {"q": "tele*", "mode": "advanced"},
        {"q": f"{rare[:5]}* OR quer*", "mode": "advanced"},
        {"q": '"query plan"', "mode": "advanced"},
        {"q": '"plan query"', "mode": "advanced"},
        {"q": "NEAR(backup server, 8)", "mode": "advanced"},
        {"q": "content: backup AND (disk OR job)", "mode": "advanced"},
        {"q": "tool_name: terminal", "mode": "advanced"},
        {"q": "deploy AND", "mode": "advanced"},
        {"q": "ery pl", "mode": "substring"},
        {"q": "東京", "mode": "substring"},
        {"q": "<script>", "mode": "substring"},
    ]
    return [dict(one, sort=sort) for one in asked for sort in ("rank", "newest")]


@pytest.mark.parametrize(
    "shape, indexed", [("current", False), ("legacy", False), ("doc", False), ("current", True)]
)
def test_a_schema_finds_what_its_file_finds(hermes_pg, serve, shape, indexed):  # noqa: F811
    """Every search of the corpus lists the same messages, in the same order, on the schema
    and on the file it was loaded from, for a reader who cannot reveal secrets: by the scan
    alone, and through the local word index (``manage.py search_index``)."""
    facts = hermes_pg.stores[shape]
    serve(file=facts.path, team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema(shape)}")
    if indexed:
        assert "Search index of team" in index_words()
        with sqlite3.connect(facts.path) as db:
            (newest,) = db.execute("SELECT max(id) FROM messages").fetchone()
        assert indexed_high("team") == newest
    analyst = client_for("analyst")
    trigram = search(analyst, "file", q="ery pl", mode="substring").engine == "trigram"
    for params in corpus(facts):
        on_file, on_schema = (every_hit(analyst, p, **params) for p in ("file", "team"))
        if params.get("mode") == "substring" and params["sort"] == "rank" and not trigram:
            # A file without a substring index lists its hits newest first; a schema ranks
            # them as a current file's trigram index does.
            assert sorted(on_schema[0]) == sorted(on_file[0]), params
        elif "no such column" in "".join(on_file[1]):
            # An older file indexes one column; a schema's vector has Hermes's three.
            assert not on_schema[1], params
        else:
            assert on_schema == on_file, params
    assert every_hit(analyst, "team", q=facts.rare_word)[0] == [facts.rare_message_id]
    assert facts.multimodal_message_id in every_hit(analyst, "team", q="photo sent")[0]


def test_a_demo_store_finds_the_same_on_its_schema(hermes_pg, serve, tmp_path):  # noqa: F811
    """A demo store, loaded both ways: its everyday words find the same messages."""
    path = tmp_path / "demo.db"
    build_demo_db(path, sessions=25, messages=900, seed=7, shape="current")
    hermes_pg.load(path, "demo_search")
    serve(file=str(path), team=f"{hermes_pg.reader_url}?schema=demo_search")
    analyst = client_for("analyst")
    asked = ["error", "test", "deploy", "the file", "fix OR bug", "conf*", "error NOT test"]
    for q in asked:
        for sort in ("rank", "newest"):
            params = {"q": q, "mode": "advanced", "sort": sort}
            assert every_hit(analyst, "team", **params) == every_hit(analyst, "file", **params)


SECRET_BODY = "Q7x9ZkLmN2pR4sT6vW8yB1cD3fG5hJ0k"
# Same length, other characters, and another number of unicode61 tokens.
TWIN_SECRETS = (SECRET_BODY, "ab-cd-ef-gh-ij-kl-mn-op-qr-st-uv")


def _twin(path, secret: str) -> None:
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Keys")
    db.message("s1", "user", f"zzrtneedle deploy OPENAI_API_KEY=sk-proj-{secret} done zzrtneedle")
    db.message("s1", "user", "zzrtneedle plain words, nothing hidden")
    db.close()


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize(
    "q, mode, found",
    [
        ("zzrtneedle OR Q7x*", "advanced", 2),
        ("zzrtneedle OR abc*", "advanced", 2),
        ("zzrtneedle NOT proj", "advanced", 2),
        ("NEAR(deploy done, 2)", "advanced", 0),  # the key is one word between them
        ('"OPENAI_API_KEY done"', "advanced", 0),
        ("zzrtneedle done", "words", 1),
        ("proj", "words", 0),
        (SECRET_BODY, "words", 0),
        (SECRET_BODY[:12], "substring", 0),
        ("ab-cd", "substring", 0),
    ],
)
def test_a_secret_is_no_oracle_on_a_schema(
    hermes_pg,  # noqa: F811
    serve,
    tmp_path,
    q,
    mode,
    found,
    indexed,
):
    """Two schemas that differ only inside a key answer alike, and a term only inside the key
    finds nothing: the schema's search is decided on the redacted text too, whether its
    candidates come from the scan or from the local word index (which holds the key's words)."""
    sources = {}
    for n, secret in enumerate(TWIN_SECRETS):
        path = tmp_path / f"twin-{n}.db"
        _twin(path, secret)
        hermes_pg.load(path, f"twin_{n}")
        sources[f"twin{n}"] = f"{hermes_pg.reader_url}?schema=twin_{n}"
    serve(**sources)
    if indexed:
        index_words()
        assert indexed_high("twin0") == indexed_high("twin1") == 2
    analyst = client_for("analyst")
    for sort in ("rank", "newest"):
        pages = []
        for n, secret in enumerate(TWIN_SECRETS):
            result = search(analyst, f"twin{n}", q=q, mode=mode, sort=sort)
            assert len(result.hits) == found, (q, sort)
            shown = "".join(hit.snippet for hit in result.hits)
            assert secret[:8] not in shown
            pages.append([(hit.id, hit.snippet.replace(secret, "")) for hit in result.hits])
        assert pages[0] == pages[1]


def test_a_search_out_of_time_on_a_schema_says_so(hermes_pg, serve, monkeypatch):  # noqa: F811
    """A candidate statement the server cancels at its budget ends the walk with what it found
    and a note that older messages were not searched (never an error page)."""
    facts = hermes_pg.stores["current"]
    serve(team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}")
    monkeypatch.setattr("sessions_app.search.engine.SEARCH_BUDGET", 0.3)
    slow = pg.candidate_clause
    monkeypatch.setattr(
        pg,
        "candidate_clause",
        lambda *a: (f"{slow(*a)[0]} AND (SELECT true FROM pg_sleep(2))", slow(*a)[1]),
    )
    result = search(client_for("analyst"), "team", q=facts.common_word, sort="newest")
    assert result.timed_out and not result.error and not result.hits
    assert any("stopped after 0.3 s" in note for note in result.notes)


@pytest.mark.parametrize("slow_check", [False, True], ids=["quick check", "slow check"])
def test_a_walk_out_of_time_goes_on_where_it_stopped(
    hermes_pg,  # noqa: F811
    serve,  # noqa: F811
    monkeypatch,
    slow_check,
):
    """Candidates are read in id ranges, newest first: a page out of time shows what it found
    and its "continue" link goes on below where it stopped, so following the links lists
    every hit the file lists, once each, in the same order.  So it does when checking the
    rows read takes the page past its budget (a loaded machine): the first batch's rows are
    checked anyway, so every page moves on."""
    facts = hermes_pg.stores["current"]
    serve(file=facts.path, team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}")
    analyst = client_for("analyst")
    expected = every_hit(analyst, "file", q=facts.common_word, sort="newest")[0]
    monkeypatch.setattr("sessions_app.search.statements.SCAN_FIRST_IDS", 40)
    monkeypatch.setattr("sessions_app.search.engine.SEARCH_BUDGET", 0.35)
    slow = pg.candidate_clause

    def sleepy(*args):
        clause, params = slow(*args)
        return f"{clause} AND (SELECT true FROM pg_sleep(0.1))", params

    monkeypatch.setattr(pg, "candidate_clause", sleepy)
    if slow_check:
        check = engine.matching

        def slow_matching(*args, **kwargs):
            time.sleep(0.2)
            return check(*args, **kwargs)

        monkeypatch.setattr(engine, "matching", slow_matching)
    params, found, stops = {"q": facts.common_word, "sort": "newest"}, [], 0
    for _ in range(200):
        result = search(analyst, "team", **params)
        found += [hit.id for hit in result.hits]
        stops += result.timed_out
        if not result.next_before:
            break
        params = dict(params, before=result.next_before)
    assert stops and found == expected


def test_messages_q_and_substrings_on_a_schema(hermes_pg, serve):  # noqa: F811
    """A substring search on a PostgreSQL profile scans its messages and says why;
    ``/messages/?q=`` there leads to that profile's search, which lists the rare word's
    message."""
    facts = hermes_pg.stores["current"]
    serve(team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}")
    analyst = client_for("analyst")
    substring = search(analyst, "team", q=facts.rare_word[2:8], mode="substring")
    assert [hit.id for hit in substring.hits] == [facts.rare_message_id]
    assert "Scanning messages directly: a PostgreSQL profile has no substring" in substring.notes[1]
    response = analyst.get(f"/p/team/messages/?q={facts.rare_word}", follow=True)
    assert response.status_code == 200
    assert [hit.id for hit in response.context["result"].hits] == [facts.rare_message_id]


def api_ids(client, profile: str, **params) -> tuple[list[int], int | None]:
    """The ids of every row of ``/state/messages.json``, page after page, and its count."""
    url = f"/p/{profile}/state/messages.json?" + urlencode(dict(params, _size=5))
    ids: list[int] = []
    for _ in range(100):
        response = client.get(url)
        assert response.status_code == 200, (response.status_code, response.content[:300])
        data = response.json()
        ids += [row[0] for row in data["rows"]]
        if not data.get("next_url"):
            return ids, data.get("filtered_table_rows_count")
        url = "/" + data["next_url"].split("://", 1)[-1].split("/", 1)[1]
    raise AssertionError("API pages did not end")


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize("role", ["analyst", "staff"])
def test_the_old_api_search_finds_on_a_schema_what_it_finds_on_the_file(
    hermes_pg,  # noqa: F811
    serve,
    role,
    indexed,
    monkeypatch,
):
    """``_search`` (Datasette's quoting), ``_searchmode=raw`` and ``_search_<column>`` list the
    same rows, with the same count, on the schema as on its file: scanned, and through the
    local word index (a word commoner than its cap is scanned)."""
    facts = hermes_pg.stores["current"]
    serve(file=facts.path, team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}")
    if indexed:
        index_words()
        monkeypatch.setattr("legacy_app.api.search.LOCAL_IDS_CAP", 5)
    reader = client_for(role)
    asked = [
        {"_search": facts.rare_word},
        {"_search": f"{facts.common_word} review"},
        {"_search": '"query plan"'},
        {"_search": "backup OR quokka*", "_searchmode": "raw"},
        {"_search": "backup NOT disk", "_searchmode": "raw"},
        {"_search_content": "backup"},
        {"_search": "zzznothing"},
    ]
    for params in asked:
        assert api_ids(reader, "team", **params) == api_ids(reader, "file", **params), params


def test_words_match_in_any_case_and_without_diacritics_as_on_the_file(
    hermes_pg,  # noqa: F811
    serve,
    tmp_path,
):
    """FTS5 compares words without case nor diacritics: a schema's candidates leave none of
    those matches out, whatever the server's locale."""
    path = tmp_path / "accents.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Accents")
    texts = [
        "Résumé of the CAFÉ meeting",
        "cafe au lait, resume later",
        "ΑΘΗΝΑ and Αθήνα in Greek",
        "see settings.py and https://example.com/docs/page or mail ops@example.org",
    ]
    for text in texts:
        db.message("s1", "user", text)
    db.close()
    hermes_pg.load(path, "accents")
    serve(file=str(path), team=f"{hermes_pg.reader_url}?schema=accents")
    analyst = client_for("analyst")
    for q in ["resume", "CAFÉ", "café", "αθηνα", "ΑΘΉΝΑ", "py", "example docs", "ops"]:
        on_file = every_hit(analyst, "file", q=q)
        assert on_file[0], q
        assert every_hit(analyst, "team", q=q) == on_file, q


@pytest.mark.parametrize("sort", ["rank", "newest"])
def test_a_search_over_every_profile_reads_the_schema_too(hermes_pg, serve, sort):  # noqa: F811
    """``/search/`` over all profiles lists the rare word's message of the file and of the
    schema loaded from it, each under its own profile, with no note of a failed store."""
    facts = hermes_pg.stores["current"]
    serve(file=facts.path, team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}")
    response = client_for("analyst").get(f"/search/?q={facts.rare_word}&sort={sort}")
    assert response.status_code == 200
    result = response.context["result"]
    found = sorted((hit.store.name, hit.id) for hit in result.hits)
    assert found == [("file", facts.rare_message_id), ("team", facts.rare_message_id)]
    assert not result.error


def _words_store(path, texts: list[str]) -> None:
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Words")
    for text in texts:
        db.message("s1", "user", text)
    db.close()


def _append(hermes_pg, schema: str, text: str, age: float) -> int:  # noqa: F811
    """A message Hermes writes now into ``schema`` (its timestamp ``age`` seconds ago)."""
    with psycopg.connect(hermes_pg.url) as conn:
        (mid,) = conn.execute(
            f"INSERT INTO {schema}.messages (session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', %s, extract(epoch FROM now()) - %s) RETURNING id",
            [text, age],
        ).fetchone()
    return mid


def test_messages_newer_than_the_index_are_found_and_indexed_next(
    hermes_pg,  # noqa: F811
    serve,
    tmp_path,
):
    """The index covers the messages up to its ``high`` id; the newer ones are scanned, so a
    search finds them before the next run of ``search_index`` adds them, and a message of the
    last few minutes waits (its transaction may not be the last to commit) but is found."""
    path = tmp_path / "words.db"
    _words_store(path, ["quillwort alpha", "beta words", "quillwort gamma"])
    hermes_pg.load(path, "fresh_words")
    serve(team=f"{hermes_pg.reader_url}?schema=fresh_words")
    analyst = client_for("analyst")
    assert "3 messages added" in index_words()
    assert indexed_high("team") == 3
    old = every_hit(analyst, "team", q="quillwort", sort="newest")[0]
    assert old == [3, 1]
    newer = _append(hermes_pg, "fresh_words", "quillwort delta", age=3600)
    recent = _append(hermes_pg, "fresh_words", "quillwort epsilon", age=0)
    expected = [recent, newer, 3, 1]
    assert every_hit(analyst, "team", q="quillwort", sort="newest")[0] == expected
    assert "1 messages added" in index_words()  # the recent one waits for the next run
    assert indexed_high("team") == newer
    assert every_hit(analyst, "team", q="quillwort", sort="newest")[0] == expected
    assert every_hit(analyst, "team", q="epsilon")[0] == [recent]


def test_the_index_serves_the_search_and_a_reloaded_schema_is_indexed_again(
    hermes_pg,  # noqa: F811
    serve,
    tmp_path,
    monkeypatch,
):
    """With the index up to date no message is scanned (a scan that would take seconds is
    never run); a schema loaded again is another ``messages`` table: its old index is not
    used (the scan answers, rightly) and the next run rebuilds it."""
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    _words_store(first, ["marram grass", "dune words"])
    _words_store(second, ["other words", "marram again", "marram twice"])
    hermes_pg.load(first, "reloaded_words")
    serve(team=f"{hermes_pg.reader_url}?schema=reloaded_words")
    analyst = client_for("analyst")
    index_words()
    slow = pg.candidate_clause
    monkeypatch.setattr(
        pg,
        "candidate_clause",
        lambda *a: (f"{slow(*a)[0]} AND (SELECT true FROM pg_sleep(5))", slow(*a)[1]),
    )
    result = search(analyst, "team", q="marram")
    assert [hit.id for hit in result.hits] == [1] and not result.timed_out
    monkeypatch.setattr(pg, "candidate_clause", slow)
    hermes_pg.load(second, "reloaded_words")
    assert indexed_high("team") is None
    assert every_hit(analyst, "team", q="marram", sort="newest")[0] == [3, 2]
    assert "(rebuilt)" in index_words()
    assert indexed_high("team") == 3
    assert every_hit(analyst, "team", q="marram", sort="newest")[0] == [3, 2]


@pytest.mark.parametrize("indexed", [False, True])
def test_a_tool_outputs_words_count_up_to_hermess_prefix_as_on_a_current_file(
    hermes_pg,  # noqa: F811
    serve,
    tmp_path,
    indexed,
):
    """Hermes's current word index holds a tool output's first 8,192 characters: a word past
    them is not found on a current file, nor on its schema (search page, ``NOT``, old API),
    with or without the local index (which holds the whole text)."""
    path = tmp_path / "tool.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Long output")
    db.message("s1", "user", "run the wombatcheck please")
    filler = " ".join(["lorem"] * 2000)  # 11,999 characters
    db.message("s1", "tool", f"wombatcheck started {filler} quagganword at the end")
    db.close()
    hermes_pg.load(path, "tool_prefix")
    serve(file=str(path), team=f"{hermes_pg.reader_url}?schema=tool_prefix")
    if indexed:
        index_words()
    analyst = client_for("analyst")
    asked = [
        {"q": "quagganword"},
        {"q": "wombatcheck"},
        {"q": "wombatcheck NOT quagganword", "mode": "advanced"},
        {"q": "wombatcheck NOT started", "mode": "advanced"},
    ]
    for params in asked:
        on_file = every_hit(analyst, "file", **params)
        assert every_hit(analyst, "team", **params) == on_file, params
    assert every_hit(analyst, "team", q="quagganword")[0] == []
    assert len(every_hit(analyst, "team", q="wombatcheck")[0]) == 2
    for params in ({"_search": "quagganword"}, {"_search": "wombatcheck"}):
        assert api_ids(analyst, "team", **params) == api_ids(analyst, "file", **params), params


@pytest.mark.parametrize("sort", ["rank", "newest"])
def test_a_cjk_words_substrings_are_found_as_on_a_current_file(
    hermes_pg,  # noqa: F811
    serve,
    tmp_path,
    sort,
):
    """A CJK run is one word to FTS5, so a word search for part of it falls back to substrings:
    on a schema, the same messages in the same order as a current file's trigram index gives
    (tool output and cron sessions left out), for one term and for several."""
    path = tmp_path / "cjk.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="天気")
    db.message("s1", "user", "東京の天気はどうですか")
    db.message("s1", "tool", "東京の天気: 晴れ")
    db.message("s1", "assistant", "大阪と東京の天気を比べると、東京の天気は東京の方が良い")
    db.message("s1", "user", "京都の天気はどう")
    db.session("c1", source="cron", title="予報")
    db.message("c1", "assistant", "東京の天気は晴れ")
    db.close()
    hermes_pg.load(path, "cjk_words")
    serve(file=str(path), team=f"{hermes_pg.reader_url}?schema=cjk_words")
    analyst = client_for("analyst")
    for q in ["東京の", "の天気", "東京の 天気は", "京都"]:
        on_file = every_hit(analyst, "file", q=q, sort=sort)
        assert on_file[0], q
        assert every_hit(analyst, "team", q=q, sort=sort) == on_file, q

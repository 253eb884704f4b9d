"""Full-text search on every shape: the right hits, escaped snippets, hostile queries, the CJK
trap, files without an index, and a rebuild in progress."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import urlencode

import pytest
from django.db import connections
from django.urls import reverse

from sessions_app import search
from sessions_app.search import snippets
from sessions_app.search.query import words_match
from tests.builders import StateDB
from tests.conftest import use_store

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def get(client, **params):
    response = client.get(reverse("search:results") + "?" + urlencode(params, doseq=True))
    assert response.status_code == 200
    return response


def hit_ids(response) -> list[int]:
    return [hit.id for hit in response.context["result"].hits]


def all_hits(client, **params) -> list[int]:
    """Follow the search pages (page numbers or ``before`` ids) to the end."""
    ids: list[int] = []
    for _ in range(200):
        response = get(client, **params)
        result = response.context["result"]
        ids += [hit.id for hit in result.hits]
        if result.next_page:
            params = dict(params, page=result.next_page)
        elif result.next_before:
            params = dict(params, before=result.next_before, sort=result.sort)
        else:
            return ids
    raise AssertionError("search pages did not end")


# The right message, and nowhere else ------------------------------------------------------
def test_rare_word_is_found_in_its_message_and_nowhere_else(staff_client, store):
    response = get(staff_client, q=store.rare_word)
    assert hit_ids(response) == [store.rare_message_id]
    # The plain truth, from the file itself.
    assert sql(
        store.path, "SELECT id FROM messages WHERE content LIKE ?", (f"%{store.rare_word}%",)
    ) == [(store.rare_message_id,)]
    hit = response.context["result"].hits[0]
    assert hit.session_id == store.rare_session_id
    assert hit.title == "Tidy the backup scripts"
    assert hit.source == "cli"
    assert f"<mark>{store.rare_word}</mark>" in response.content.decode()


def test_hit_links_to_the_message_inside_its_transcript(staff_client, store):
    response = get(staff_client, q=store.rare_word)
    url = reverse("sessions:message", args=[store.rare_session_id, store.rare_message_id])
    assert response.context["result"].hits[0].url == url
    assert f'href="{url}"' in response.content.decode()
    landing = staff_client.get(url)
    assert landing.status_code == 302
    assert landing["Location"].endswith(f"#m{store.rare_message_id}")


def test_common_word_finds_every_message_that_has_it(staff_client, store):
    for sort in ("rank", "newest"):
        ids = all_hits(staff_client, q=store.common_word, sort=sort)
        assert sorted(ids) == sorted(store.common_word_message_ids)
    newest = hit_ids(get(staff_client, q=store.common_word, sort="newest"))
    assert newest == sorted(newest, reverse=True)


def test_filters_narrow_hits_by_source_role_session_and_date(staff_client, store):
    cron_hits = hit_ids(get(staff_client, q=store.common_word, source="cron"))
    assert cron_hits and all(
        sql(store.path, "SELECT session_id FROM messages WHERE id = ?", (i,))[0][0]
        == store.cron_session_id
        for i in cron_hits
    )
    user_hits = hit_ids(get(staff_client, q=store.common_word, role="user"))
    expected_user = [
        i
        for i in store.common_word_message_ids
        if sql(store.path, "SELECT role FROM messages WHERE id = ?", (i,))[0][0] == "user"
    ]
    assert sorted(user_hits) == sorted(expected_user)
    in_session = hit_ids(get(staff_client, q=store.common_word, session_id=store.xss_session_id))
    assert in_session and set(in_session) <= set(store.common_word_message_ids)
    assert all(
        sql(store.path, "SELECT session_id FROM messages WHERE id = ?", (i,))[0][0]
        == store.xss_session_id
        for i in in_session
    )
    assert hit_ids(get(staff_client, q=store.common_word, date_to="2000-01-01")) == []
    assert sorted(
        hit_ids(get(staff_client, q=store.common_word, date_from="2000-01-01"))
    ) == sorted(store.common_word_message_ids)


def test_search_within_one_session_pages_through_all_its_matches(staff_client, store):
    expected = [
        r[0]
        for r in sql(
            store.path, "SELECT id FROM messages WHERE session_id = ?", (store.big_session_id,)
        )
    ]
    assert len(expected) == store.big_session_messages
    ids = all_hits(staff_client, q="turn", session_id=store.big_session_id, sort="newest")
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == set(expected)
    # Best match ranks the newest matches, up to its cap, each once.
    ranked = all_hits(staff_client, q="turn", session_id=store.big_session_id, sort="rank")
    assert len(ranked) == len(set(ranked)) == min(len(expected), search.RANKED_CAP)
    assert set(ranked) == set(sorted(expected, reverse=True)[: search.RANKED_CAP])
    newest = all_hits(staff_client, q="turn", session_id=store.big_session_id, sort="newest")
    assert newest == sorted(expected, reverse=True)


def test_session_page_offers_a_search_of_that_session(staff_client, store):
    response = staff_client.get(reverse("sessions:detail", args=[store.rare_session_id]))
    html = response.content.decode()
    assert f'action="{reverse("search:results")}"' in html
    assert f'name="session_id" value="{store.rare_session_id}"' in html


def test_messages_q_shows_search_hits(staff_client, store):
    response = staff_client.get(
        reverse("messages:list") + f"?q={store.rare_word}&role=user&cursor=x"
    )
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("search:results"))
    followed = staff_client.get(response["Location"])
    assert hit_ids(followed) == [store.rare_message_id]


# Escaping ---------------------------------------------------------------------------------
@pytest.mark.parametrize("q", ["telegram", "img onerror", "script alert", "svg onload"])
def test_snippets_never_render_planted_markup(staff_client, store, q):
    response = get(staff_client, q=q)
    html = response.content.decode()
    assert response.context["result"].hits, q
    for payload in store.xss_payloads:
        assert payload not in html
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "<svg onload" not in html
    assert "<mark>" in html


def test_snippet_markers_in_content_do_not_become_markup():
    html = snippets.render_snippet(
        f"a {snippets.MARK_OPEN}b{snippets.MARK_CLOSE} <script>x</script>"
    )
    assert html == "a <mark>b</mark> &lt;script&gt;x&lt;/script&gt;"
    lopsided = snippets.render_snippet(
        f"{snippets.MARK_OPEN}<b>{snippets.MARK_OPEN}x{snippets.MARK_CLOSE}"
    )
    assert "<mark>" not in lopsided and "&lt;b&gt;" in lopsided
    assert snippets.highlight("<i>Deploy</i> deploy", ["deploy"]) == (
        "&lt;i&gt;<mark>Deploy</mark>&lt;/i&gt; <mark>deploy</mark>"
    )


# Hostile queries --------------------------------------------------------------------------
HOSTILE = [
    '"',
    '""',
    '"unbalanced',
    'quokkafjord"',
    "-",
    "--",
    "-quokkafjord",
    ":",
    "content:",
    "nosuchcolumn:quokkafjord",
    "tool_calls:terminal",
    "*",
    "quokka*",
    "* *",
    "NEAR",
    "NEAR(",
    "NEAR(quokkafjord notes",
    "NEAR(quokkafjord notes, 5)",
    "AND",
    "OR",
    "NOT",
    "quokkafjord AND",
    "AND OR NOT",
    "(",
    ")",
    "(()",
    "((quokkafjord)",
    "^",
    "^quokkafjord",
    "+",
    "'",
    "\\",
    "%",
    "_",
    "{content}: x",
    "[",
    "東京",
    "請",
    "日志",
    "😀",
    "\u202eevil",
    "\x00",
    "\ue000mark\ue001",
    "a" * 700,
    "quokkafjord " * 80,
]


@pytest.mark.parametrize("mode", ["words", "advanced", "substring"])
def test_every_fts_special_character_gives_a_page_not_an_error(staff_client, store, mode):
    for q in HOSTILE:
        response = staff_client.get(reverse("search:results"), {"q": q, "mode": mode})
        assert response.status_code == 200, (q, mode)
        result = response.context["result"]
        assert result is not None
        # Hits, a message saying why not, a plain "no match", or (nothing left once a NUL
        # is dropped) the empty form: never a crash.
        assert (
            result.hits
            or result.error
            or result.notes
            or result.searched
            or not result.request.text
        ), (q, mode)


def test_plain_words_are_quoted_so_operators_are_just_words(staff_client, store):
    # In the default mode "NOT" and "AND" are words to find, not operators.
    assert words_match('quokkafjord AND "x" NEAR(y') == '"quokkafjord" "AND" """x""" "NEAR(y"'
    # "-tidy" and "NOT tidy" are words to find here, not exclusions.
    assert hit_ids(get(staff_client, q=f"{store.rare_word} -tidy")) == [store.rare_message_id]
    assert hit_ids(get(staff_client, q=f"{store.rare_word} tidy NOT")) == []  # no word "not"
    assert hit_ids(get(staff_client, q=f"{store.rare_word}:")) == [store.rare_message_id]


def test_advanced_mode_accepts_operators_and_explains_errors(staff_client, store):
    assert hit_ids(get(staff_client, q="quokka*", mode="advanced")) == [store.rare_message_id]
    assert hit_ids(get(staff_client, q='"tidy the scripts"', mode="advanced")) == [
        store.rare_message_id
    ]
    either = hit_ids(get(staff_client, q=f"{store.rare_word} OR mirror", mode="advanced"))
    assert store.rare_message_id in either and len(either) > 1
    assert hit_ids(get(staff_client, q=f"{store.rare_word} NOT tidy", mode="advanced")) == []
    response = get(staff_client, q='"unbalanced', mode="advanced")
    assert response.context["result"].error
    assert "could not read this query" in response.content.decode()


@pytest.mark.parametrize(
    "q",
    [
        " OR ".join(f"{letter}*" for letter in "abcdefghijklmnopqrstuvwxyz"),
        "ta* OR qu*",
        "tidy* OR scrip* OR mirr* OR quok*",
        " OR ".join(f"word{i}" for i in range(20)),
    ],
)
def test_costly_advanced_searches_are_refused_with_a_way_to_narrow_them(staff_client, store, q):
    response = get(staff_client, q=q, mode="advanced")
    assert response.status_code == 200
    # Refused before any statement runs: nothing can hold the worker.
    assert not response.context["result"].searched
    assert response.context["result"].hits == []
    assert "Narrow it" in response.context["result"].error
    assert "Narrow it" in response.content.decode()


# CJK and substrings -----------------------------------------------------------------------
@pytest.mark.parametrize("q", ["服务器", "日志", "データベース"])
def test_cjk_word_inside_a_sentence_is_found(staff_client, store, q):
    expected = [
        r[0] for r in sql(store.path, "SELECT id FROM messages WHERE content LIKE ?", (f"%{q}%",))
    ]
    if q == "データベース":
        assert expected == []
        return
    assert expected
    response = get(staff_client, q=q)
    assert hit_ids(response) == expected
    assert response.context["result"].notes


def test_substring_mode_finds_parts_of_words(staff_client, store):
    response = get(staff_client, q="okkafj", mode="substring")
    assert hit_ids(response) == [store.rare_message_id]
    engine = response.context["result"].engine
    assert engine == ("trigram" if store.shape == "current" else "scan")


@pytest.mark.parametrize("layout, engine", [("current", "trigram"), ("legacy", "scan")])
def test_a_substring_search_reads_what_hermess_substring_index_holds(
    staff_client, tmp_path, layout, engine
):
    """The current layout's trigram index leaves out tool rows and cron/subagent sessions: a
    substring search leaves them out however it is answered (a scan where there is no such
    index, as on a PostgreSQL schema), so every store gives the same hits."""
    path = tmp_path / f"{layout}.db"
    db = StateDB.create(path, layout)
    db.session("s1", source="cron", title="Nightly")
    db.session("s2", source="cli", title="Day")
    db.message("s1", "user", "nightly zorblaxing run")
    found = db.message("s2", "user", "run the zorblaxing job")
    db.message("s2", "tool", "zorblaxing 3 files", tool_name="terminal")
    db.close()
    use_store(path)
    response = get(staff_client, q="orblaxin", mode="substring", sort="newest")
    assert hit_ids(response) == [found]
    assert response.context["result"].engine == engine
    assert "leaves out tool output" in " ".join(response.context["result"].notes)


def test_the_unloadable_cjk_table_is_never_touched(staff_client, current_store):
    path = current_store.path
    # The trap is armed: any statement on it fails.
    with pytest.raises(sqlite3.OperationalError, match="no such tokenizer"):
        sql(path, "SELECT * FROM messages_fts_cjk LIMIT 1")
    seen: list[str] = []

    def record(execute, sql_text, params, many, context):
        seen.append(sql_text)
        return execute(sql_text, params, many, context)

    queries = ["東京", "服务器", "日志", "telegram", "quokka*", '"x', "messages_fts_cjk", "cjk"]
    with connections["hermes"].execute_wrapper(record):
        for q in queries:
            for mode in ("words", "advanced", "substring"):
                for sort in ("rank", "newest"):
                    get(staff_client, q=q, mode=mode, sort=sort)
        get(staff_client, q="服务器", session_id=current_store.unicode_session_id)
    assert seen
    assert not [s for s in seen if "messages_fts_cjk" in s and "MATCH" in s.upper()]
    assert not [s for s in seen if "FROM messages_fts_cjk" in s or "JOIN messages_fts_cjk" in s]


# Files without an index, and an index being rebuilt ----------------------------------------
def _plain_store(path, shape="doc"):
    db = StateDB.create(path, shape)
    db.session("s1", source="telegram", title="No index here")
    db.session("s2", source="cli", title="Other")
    ids = {
        "hit": db.message("s1", "user", "where is the flimwobble report <script>x</script>"),
        "other": db.message("s2", "user", "nothing to see"),
        "tool": db.message("s2", "tool", "flimwobble in a tool output", tool_name="terminal"),
    }
    db.close()
    return ids


def test_a_file_without_fts_still_searches_and_says_the_index_is_missing(staff_client, tmp_path):
    path = tmp_path / "nofts.db"
    ids = _plain_store(path)
    with sqlite3.connect(path) as conn:
        for trigger in ("messages_fts_ai", "messages_fts_ad", "messages_fts_au"):
            conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.execute("DROP TABLE messages_fts")
    use_store(path)
    assert connections["hermes"].hermes_shape_now().fts_layout is None
    response = get(staff_client, q="flimwobble")
    result = response.context["result"]
    assert result.engine == "scan"
    assert sorted(hit_ids(response)) == sorted([ids["hit"], ids["tool"]])
    assert any("no full-text index" in note for note in result.notes)
    html = response.content.decode()
    assert "<mark>flimwobble</mark>" in html
    assert "<script>x" not in html
    assert hit_ids(get(staff_client, q="flimwobble", source="telegram")) == [ids["hit"]]
    for q in HOSTILE:
        assert staff_client.get(reverse("search:results"), {"q": q}).status_code == 200


def test_a_scan_that_runs_out_of_time_says_where_it_stopped(staff_client, tmp_path, monkeypatch):
    path = tmp_path / "nofts-slow.db"
    _plain_store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE messages_fts")
    use_store(path)
    monkeypatch.setattr(search.engine, "SCAN_BUDGET", 0.0)
    response = get(staff_client, q="flimwobble")
    result = response.context["result"]
    assert result.timed_out and result.next_before
    assert "Continue scanning" in response.content.decode()


def _rebuilding_store(path):
    """A current-shape file where ids above ``progress`` are not in the word index yet."""
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Indexed")
    indexed = db.message("s1", "user", "the glorpnik plan, indexed")
    fresh = [db.message("s1", "user", f"the glorpnik plan, fresh {i}") for i in range(3)]
    db.meta("fts_rebuild_progress", str(indexed))
    db.meta("fts_rebuild_high_water", str(fresh[-1]))
    for mid in fresh:
        text, tool_name, tool_calls = db.conn.execute(
            "SELECT content, tool_name, tool_calls FROM messages WHERE id = ?", (mid,)
        ).fetchone()
        db.conn.execute(
            "INSERT INTO messages_fts (messages_fts, rowid, content, tool_name, tool_calls)"
            " VALUES ('delete', ?, ?, ?, ?)",
            (mid, text, tool_name, tool_calls),
        )
    db.close()
    return indexed, fresh


def test_rows_not_yet_indexed_are_topped_up_during_a_rebuild(staff_client, tmp_path):
    path = tmp_path / "rebuild.db"
    indexed, fresh = _rebuilding_store(path)
    # The index really lacks them.
    assert sql(path, "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'glorpnik'") == [
        (indexed,)
    ]
    use_store(path)
    response = get(staff_client, q="glorpnik")
    result = response.context["result"]
    assert hit_ids(response) == [indexed]
    assert sorted(h.id for h in result.unindexed_hits) == sorted(fresh)
    assert any("being rebuilt" in note for note in result.notes)
    assert "not indexed yet" in response.content.decode()


def test_a_top_up_that_cannot_finish_says_matches_may_be_missing(
    staff_client, tmp_path, monkeypatch
):
    path = tmp_path / "rebuild-slow.db"
    _rebuilding_store(path)
    use_store(path)
    monkeypatch.setattr(search.engine, "TOPUP_BUDGET", 0.0)
    result = get(staff_client, q="glorpnik").context["result"]
    assert any("may be missing" in note for note in result.notes)


def test_hidden_scaffolding_stays_out_unless_asked(staff_client, current_store):
    hidden = current_store.hidden_message_id
    assert hidden not in hit_ids(get(staff_client, q="System note"))
    assert hidden in hit_ids(get(staff_client, q="System note", show="hidden"))


def test_a_search_out_of_time_shows_what_it_found_and_says_so(staff_client, store, monkeypatch):
    monkeypatch.setattr(search.engine, "SEARCH_BUDGET", 0.0)
    response = get(staff_client, q=store.common_word, sort="newest")
    result = response.context["result"]
    assert result.timed_out and not result.error
    assert any("stopped after" in note for note in result.notes)


def test_bad_search_options_are_form_errors_not_crashes(staff_client, store):
    for params in (
        {"q": "x", "mode": "evil"},
        {"q": "x", "sort": "random()"},
        {"q": "x", "date_from": "yesterday"},
        {"q": "x", "page": "-3", "before": "abc"},
        {"q": "x", "role": "<script>"},
        {"q": "x", "source": ["nope", "<b>"]},
    ):
        response = staff_client.get(reverse("search:results"), params)
        assert response.status_code == 200, params
        assert "<script>" not in response.content.decode().split("<main", 1)[1]


# Secrets ----------------------------------------------------------------------------------
SECRET_BODY = "Q7x9ZkLmN2pR4sT6vW8yB1cD3fG5hJ0k"


@pytest.mark.parametrize("engine", ["fts", "scan", "trigram"])
def test_snippets_never_show_a_secret_even_cut_or_highlighted(staff_client, tmp_path, engine):
    path = tmp_path / f"secret-{engine}.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Keys")
    key = f"sk-proj-{SECRET_BODY}"
    text = f"export OPENAI_API_KEY={key}\n" + "filler word " * 2 + "zorblax done"
    mid = db.message("s1", "user", text)
    db.close()
    if engine == "scan":
        with sqlite3.connect(path) as conn:
            conn.execute("DROP TABLE messages_fts")
    use_store(path)
    mode = "substring" if engine == "trigram" else "words"
    visible = ["zorblax", "OPENAI_API_KEY", "export"]
    secret_only = [SECRET_BODY, "proj", f"sk-proj-{SECRET_BODY[:6]}"]
    if engine == "trigram":
        visible = ["zorblax", "OPENAI_API"]
        secret_only = [SECRET_BODY[:12], SECRET_BODY[3:9]]
    for q in visible:
        response = get(staff_client, q=q, mode=mode)
        assert hit_ids(response) == [mid], (engine, q)
        assert response.context["result"].engine == engine
        # The query itself is echoed in the form; the hits must not show the key.
        hits = response.content.decode().split('<ol class="hits">', 1)[1].split("</ol>", 1)[0]
        assert SECRET_BODY not in hits, (engine, q)
        assert SECRET_BODY[:12] not in hits, (engine, q)
    # A match that lies only inside the secret finds nothing: search is no oracle.
    for q in secret_only:
        response = get(staff_client, q=q, mode=mode)
        assert hit_ids(response) == [], (engine, q)


@pytest.mark.parametrize("mode", ["words", "advanced", "substring"])
def test_probing_a_redacted_key_a_prefix_at_a_time_learns_nothing(staff_client, tmp_path, mode):
    """An analyst guessing a key character by character gets the same answer for every
    guess, right or wrong."""
    path = tmp_path / f"probe-{mode}.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Keys")
    db.message("s1", "user", f"deploy with OPENAI_API_KEY=sk-proj-{SECRET_BODY} please")
    db.close()
    use_store(path)
    answers = set()
    for n in range(4, 14):
        for guess in (SECRET_BODY[:n], SECRET_BODY[: n - 1] + "!"):
            q = guess + "*" if mode == "advanced" else guess
            answers.add(tuple(hit_ids(get(staff_client, q=q, mode=mode))))
    assert answers == {()}


def test_best_match_ranks_the_newest_matches_and_says_so(staff_client, store, monkeypatch):
    monkeypatch.setattr(search.engine, "RANKED_CAP", 2)
    response = get(staff_client, q=store.common_word)
    result = response.context["result"]
    assert result.sort == "rank"
    newest_two = sorted(store.common_word_message_ids, reverse=True)[:2]
    assert sorted(hit_ids(response)) == sorted(newest_two)
    assert any("among the newest 2 matches" in note for note in result.notes)
    # Few enough: every match ranked, and nothing said.
    assert not get(staff_client, q=store.rare_word).context["result"].notes


def _twin(path, secret: str) -> None:
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Keys")
    db.message("s1", "user", f"zzrtneedle deploy OPENAI_API_KEY=sk-proj-{secret} done zzrtneedle")
    db.message("s1", "user", "zzrtneedle plain words, nothing hidden")
    db.close()


# Same length, other characters, and another number of unicode61 tokens.
TWIN_SECRETS = ("Q7x9ZkLmN2pR4sT6vW8yB1cD3fG5hJ0k", "ab-cd-ef-gh-ij-kl-mn-op-qr-st-uv")


@pytest.mark.parametrize(
    "q, mode, found",
    [
        ("zzrtneedle OR Q7x*", "advanced", 2),
        ("zzrtneedle OR abc*", "advanced", 2),
        ("zzrtneedle OR proj", "advanced", 2),
        ("zzrtneedle OR redacted", "advanced", 2),
        ("zzrtneedle NOT Q7x*", "advanced", 2),
        ("zzrtneedle NOT proj", "advanced", 2),
        ("NEAR(deploy done, 2)", "advanced", 0),  # the key is one word between them
        ("NEAR(deploy done, 5)", "advanced", 1),
        ('"OPENAI_API_KEY done"', "advanced", 0),
        ("zzrtneedle", "words", 2),
        ("zzrtneedle done", "words", 1),
        ("proj", "words", 0),
        ("needle", "substring", 2),
        ("ab-cd", "substring", 0),
    ],
)
@pytest.mark.parametrize("sort", ["rank", "newest"])
def test_stores_that_differ_only_inside_a_secret_answer_alike(
    staff_client, tmp_path, q, mode, found, sort
):
    """Hits, their order and their snippets are decided on the redacted text: an OR, a NEAR or
    a prefix that reaches into a key cannot keep or drop a hit, nor move a snippet."""
    pages = []
    for n, secret in enumerate(TWIN_SECRETS):
        path = tmp_path / f"twin-{n}.db"
        _twin(path, secret)
        use_store(path)
        response = get(staff_client, q=q, mode=mode, sort=sort)
        assert len(hit_ids(response)) == found
        main = response.content.decode().split("<main", 1)[1]
        main = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", main)
        pages.append((response.status_code, main))
        assert secret[:8] not in main
    assert pages[0] == pages[1]


def test_or_with_a_guess_at_a_key_keeps_the_hit_whatever_the_guess(staff_client, tmp_path):
    path = tmp_path / "or.db"
    _twin(path, SECRET_BODY)
    use_store(path)
    answers = set()
    for n in range(3, 14):
        for guess in (SECRET_BODY[:n], SECRET_BODY[: n - 1] + "z"):
            answers.add(
                tuple(hit_ids(get(staff_client, q=f"zzrtneedle OR {guess}*", mode="advanced")))
            )
    assert len(answers) == 1 and len(next(iter(answers))) == 2


def test_a_hit_shows_its_tool_name_redacted(staff_client, tmp_path):
    key = "rk_live_" + "68OOOr0NuspDwsDOx08ON39A"
    path = tmp_path / "tool-named-like-a-key.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Tools")
    db.message("s1", "tool", "zorblax finished", tool_name=key, tool_call_id="call_1")
    db.close()
    use_store(path)
    response = get(staff_client, q="zorblax")
    assert len(hit_ids(response)) == 1
    assert key[:12] not in response.content.decode().split("<main", 1)[1]
    assert response.context["result"].hits[0].tool_name.startswith("[redacted")

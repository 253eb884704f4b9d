"""Two explorer instances behind one Caddy, on one PostgreSQL and one Redis, end to end.

Nothing is mocked: real gunicorn processes (each with a data directory of its own, as on two
machines), a real Caddy load-balancing them, real PostgreSQL and Redis servers.  A person signs
in on one instance and carries on on the other; failed sign-ins count across both; the insights
summaries one builds, the other uses; an API token made on one works on the other, and so does a tag; when
one instance stops, the proxy sends everything to the one left; and without Redis, pages
still answer.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys

import httpx
import psycopg
import pytest
import redis

from tests import cluster as cluster_module
from tests.cluster import USERNAME, Cluster, sign_in

FAILURE_LIMIT = 3

why = cluster_module.why_not()
pytestmark = pytest.mark.skipif(why is not None, reason=f"no cluster here: {why}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    store = tmp_path_factory.mktemp("cluster-store") / "state.db"
    subprocess.run(
        [sys.executable, "manage.py", "make_demo_db", str(store)]
        + ["--sessions", "80", "--messages", "4000", "--seed", "7"],
        cwd=cluster_module.ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
            "DJANGO_SECRET_KEY": cluster_module.SECRET_KEY,
            "HERMES_EXPLORER_DATA_DIR": str(store.parent),
        },
        check=True,
        capture_output=True,
    )
    running = Cluster(
        store,
        instances=2,
        workers=1,
        threads=4,
        extra_env={"HERMES_LOGIN_FAILURE_LIMIT": str(FAILURE_LIMIT)},
    ).start()
    yield running
    running.stop()


def client() -> httpx.Client:
    return httpx.Client(timeout=30, follow_redirects=False)


def test_sign_in_on_one_instance_and_continue_on_the_other(cluster):
    a, b = cluster.instances
    with client() as c:
        assert sign_in(c, a.url).status_code == 302
        page = c.get(f"{b.url}/sessions/")
        assert page.status_code == 200
        assert USERNAME in page.text
        # Signing out on the second instance signs out everywhere (the session is shared).
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        out = c.post(
            f"{b.url}/accounts/logout/",
            data={"csrfmiddlewaretoken": token},
            headers={"Referer": b.url + "/"},
        )
        assert out.status_code == 302
        again = c.get(f"{a.url}/sessions/")
        assert again.status_code == 302 and "/accounts/login/" in again.headers["location"]


def test_failed_sign_ins_count_across_both_instances(cluster):
    a, b = cluster.instances
    with client() as c:
        for n in range(FAILURE_LIMIT):
            target = (a, b)[n % 2]
            response = sign_in(c, target.url, password="not-the-password")
            assert response.status_code in (200, 429)
        # The last failure was on one instance; the right password on the other is refused.
        other = (a, b)[FAILURE_LIMIT % 2]
        locked = sign_in(c, other.url)
        assert locked.status_code == 429
    # Lift the lockout: the other tests sign in as the same person from the same address.
    with psycopg.connect(cluster.pg.url, autocommit=True) as db:
        db.execute("DELETE FROM axes_accessattempt")


def test_insights_summaries_built_by_one_instance_serve_the_other(cluster):
    a, b = cluster.instances
    with client() as c:
        assert sign_in(c, a.url).status_code == 302
        first = c.get(f"{a.url}/insights/?days=all")
        assert first.status_code == 200
        with psycopg.connect(cluster.pg.url) as db:
            (count, newest) = db.execute(
                "SELECT COUNT(*), MAX(updated_at) FROM insights_app_storedsummary"
            ).fetchone()
        assert count > 0
        keys = redis.Redis.from_url(cluster.redis.url).keys("*insights-report*")
        assert keys, "the report is in the shared cache"
        # Another window on the other instance: a new report, from the stored summaries.
        second = c.get(f"{b.url}/insights/?days=3650")
        assert second.status_code == 200
        with psycopg.connect(cluster.pg.url) as db:
            after = db.execute(
                "SELECT COUNT(*), MAX(updated_at) FROM insights_app_storedsummary"
            ).fetchone()
        assert after == (count, newest), "no summary was computed (or saved) again"


def test_an_api_token_made_on_one_instance_works_on_the_other(cluster):
    a, b = cluster.instances
    with client() as c:
        assert sign_in(c, a.url).status_code == 302
        page = c.get(f"{a.url}/accounts/tokens/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        made = c.post(
            f"{a.url}/accounts/tokens/",
            data={"csrfmiddlewaretoken": token, "name": "cross-instance", "expires": "30"},
            headers={"Referer": a.url + "/"},
        )
        text = re.search(r"hxp_[0-9a-f]{12}_[A-Za-z0-9_\-]+", made.text).group(0)
        assert "cross-instance" in c.get(f"{b.url}/accounts/tokens/").text
    with client() as script:
        response = script.get(
            f"{b.url}/state/sessions.json?_size=1", headers={"Authorization": f"Bearer {text}"}
        )
        assert response.status_code == 200
        assert response.json()["rows"]


def test_a_tag_set_on_one_instance_shows_on_the_other_at_once(cluster):
    a, b = cluster.instances
    with sqlite3.connect(f"file:{cluster.store}?mode=ro", uri=True) as db:
        (session_id,) = db.execute("SELECT id FROM sessions ORDER BY started_at LIMIT 1").fetchone()
    with client() as c:
        assert sign_in(c, a.url).status_code == 302
        # Instance b has served its lists with no tag at all: nothing it kept may hide the tag.
        oldest_first = f"{b.url}/sessions/?sort=started_at"
        assert "cross-host" not in c.get(oldest_first).text
        assert "cross-host" not in c.get(f"{b.url}/search/", params={"q": "the"}).text
        page = c.get(f"{a.url}/annotations/tags/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        made = c.post(
            f"{a.url}/annotations/tags/",
            data={"csrfmiddlewaretoken": csrf, "name": "cross-host", "colour": "grey"},
            headers={"Referer": a.url + "/"},
        )
        assert made.status_code == 302
        with psycopg.connect(cluster.pg.url) as db:
            (tag_id,) = db.execute(
                "SELECT id FROM annotations_app_tag WHERE name = 'cross-host'"
            ).fetchone()
        tagged = c.post(
            f"{a.url}/annotations/sessions/{session_id}/tags",
            data={"csrfmiddlewaretoken": csrf, "tag": str(tag_id)},
            headers={"Referer": a.url + "/"},
        )
        assert tagged.status_code == 302
        listed = c.get(f"{b.url}/sessions/", params={"tag": "cross-host"})
        assert listed.status_code == 200
        assert f"/sessions/{session_id}/" in listed.text
        assert "cross-host" in c.get(f"{b.url}/sessions/{session_id}/").text
        # The unfiltered list of b: the tag on the session's row and in the facet.
        listed = c.get(oldest_first).text
        assert 'id="tag-filter-' in listed
        row = listed.split(f"/sessions/{session_id}/", 1)[1].split("</tr>", 1)[0]
        assert "cross-host" in row


def test_caddy_balances_over_both_and_keeps_serving_when_one_stops(cluster):
    a, b = cluster.instances
    with client() as c:
        assert sign_in(c, cluster.url).status_code == 302
        # The access log names paths without their query strings: each phase has its own page.
        for _n in range(8):
            assert c.get(f"{cluster.url}/messages/").status_code == 200
        assert a.requests_seen("GET /messages/ ") > 0 and b.requests_seen("GET /messages/ ") > 0
        b.stop()
        # Other tests of the module may have asked a for the page already.
        before = a.requests_seen("GET /annotations/tags/ ", at_least=0, seconds=0)
        for _n in range(6):
            response = c.get(f"{cluster.url}/annotations/tags/")
            assert response.status_code == 200, response.text[:200]
        seen = a.requests_seen("GET /annotations/tags/ ", at_least=before + 6)
        assert seen == before + 6
        # Without Redis every page still answers (slower), signed-in sessions included.
        cluster.redis.stop()
        for path in ("/sessions/?probe=nocache", "/insights/?days=30", "/search/?q=demo"):
            assert c.get(f"{cluster.url}{path}").status_code == 200, path
        health = c.get(f"{a.url}/healthz")
        assert health.status_code == 200
        assert health.json()["status"] == "degraded"
        assert health.json()["cache"] == {"reachable": False}


def test_the_shipped_caddy_block_is_valid(tmp_path):
    result = subprocess.run(
        [cluster_module.caddy_bin(), "validate", "--adapter", "caddyfile", "--config"]
        + [str(cluster_module.ROOT / "deploy" / "Caddyfile.several")],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]

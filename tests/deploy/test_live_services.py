"""What only real services can show: PostgreSQL transactions across threads, Redis as cache
and Celery broker, and a real browser. Skipped locally without them; CI must run them."""

import threading

import pytest
from django.db import connection

from annotation.models import Assignment, Rating
from content.models import Pair
from imports.services.pair_import import pairs_import
from tests.factories import mmrb2_pair, write_image, write_jsonl


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_of_one_file_write_each_pair_once(tmp_path):
    images = tmp_path / "img"
    records = []
    for i in range(40):
        write_image(images / f"{i}a.png", color=(i, 0, 0))
        write_image(images / f"{i}b.png", color=(0, i, 0))
        records.append(mmrb2_pair(f"p{i}", image_a=f"{i}a.png", image_b=f"{i}b.png"))
    source = write_jsonl(tmp_path / "pairs.jsonl", records)
    results, errors = [], []
    start = threading.Barrier(4)

    def run():
        try:
            start.wait()
            results.append(
                pairs_import(source, project_slug="race", task_slug="t2i", images_dir=images)
            )
        except Exception as exc:  # collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert sorted(r.pairs for r in results) == [0, 0, 0, 40]
    assert sorted(r.unchanged for r in results) == [0, 40, 40, 40]
    assert Pair.objects.filter(project__slug="race").count() == 40
    assert Assignment.objects.count() == Rating.objects.count() == 120


@pytest.mark.redis
def test_redis_is_the_cache_and_the_celery_broker(settings):
    from django.core.cache import cache

    from config.celery import app

    assert "redis" in settings.CACHES["default"]["BACKEND"].lower()
    cache.set("arbiter-test-key", {"n": 1}, timeout=30)
    assert cache.get("arbiter-test-key") == {"n": 1}
    cache.delete("arbiter-test-key")
    assert app.conf.broker_url.startswith("redis://")
    assert not app.conf.task_always_eager
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1)
        assert conn.connected


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_member_logs_in_with_the_browser_and_sees_their_project(live_server, browser_page):
    from django.contrib.auth.models import User

    from projects.models import Membership, Project

    user = User.objects.create_user("ann", password="a-long-password-1")
    project = Project.objects.create(slug="browser", name="Browser project")
    Membership.objects.create(user=user, project=project, role="annotator")

    page = browser_page
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", "ann")
    page.fill("input[name=password]", "a-long-password-1")
    page.click("main button[type=submit]")  # not the header's language switch
    page.wait_for_url(f"{live_server.url}/")
    assert "Browser project" in page.content()
    assert page.console_errors == []

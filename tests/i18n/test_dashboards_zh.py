"""The lead's dashboards in Simplified Chinese beyond their first view: the parts
htmx fetches (the exports' list while a job runs), filtered and invalid pair browser views, the
bulk confirmation, the disagreement queue's filters, the messages after an action, and a stale
figures notice. Each comes out with no English word of the interface (tests/i18n/english.py);
the header (base.html) is another page's part and is left out here."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import AnnotatorPause
from content.models import Pair
from dashboards.models import FigureSnapshot
from exports.models import ExportJob
from tests.dashboards.conftest import rated  # noqa: F401  (a fixture)
from tests.i18n.english import data_words, english_left
from tests.pages.conftest import lead_site  # noqa: F401  (a fixture)

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans,zh;q=0.9,en;q=0.5"}


def _main(html: str) -> str:
    """The page without its header: the part the dashboards' templates render."""
    start = html.find("<main")
    return html[start:] if start >= 0 else html


def _messages(html: str) -> str:
    """The page's messages (templates/_messages.html)."""
    start = html.find('<div class="messages"')
    return html[start : html.find("</div>", start)] if start >= 0 else ""


def _english(response) -> list[str]:
    assert response.status_code in (200, 400), response.status_code
    return english_left(_main(response.content.decode()), data_words())


@pytest.fixture
def lead_client(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    return client, project


@pytest.mark.django_db
def test_the_exports_list_htmx_polls_is_chinese_for_every_state_of_a_job(lead_client):
    client, project = lead_client
    lead = project.memberships.get(user__username="boss").user
    # A job the queue never took (the notice), a running one (the list polls), a done one, a
    # failed one.
    ExportJob.objects.create(project=project, requested_by=lead, file_format="parquet")
    ExportJob.objects.create(
        project=project,
        requested_by=lead,
        file_format="jsonl",
        status=ExportJob.Status.RUNNING,
        include_dropped=True,
        with_verdicts=True,
        enqueued_at=timezone.now(),
    )
    ExportJob.objects.create(
        project=project,
        requested_by=lead,
        file_format="mmrb2",
        status=ExportJob.Status.DONE,
        size_bytes=123_456,
        finished_at=timezone.now(),
    )
    ExportJob.objects.create(
        project=project,
        requested_by=lead,
        file_format="preference",
        status=ExportJob.Status.FAILED,
        error="disk full",
        finished_at=timezone.now(),
    )
    url = reverse("dash-exports", args=[project.slug])
    fragment = client.get(url, HTTP_HX_REQUEST="true", **CHINESE)
    body = fragment.content.decode()
    assert 'hx-trigger="every 2s"' in body and "<html" not in body  # the polled part alone
    assert "下载压缩包" in body and "等待后台进程" in body
    assert _english(fragment) == []
    assert _english(client.get(url, **CHINESE)) == []


@pytest.mark.django_db
def test_an_export_started_and_refused_says_so_in_chinese(lead_client):
    client, project = lead_client
    start = reverse("dash-export-start", args=[project.slug])
    done = client.post(start, {"format": "jsonl"}, follow=True, **CHINESE)
    assert "导出已开始" in done.content.decode()
    assert _english(done) == []
    refused = client.post(start, {"format": "jsonl", "task": "nope"}, follow=True, **CHINESE)
    assert "导出被拒绝" in refused.content.decode()


@pytest.mark.django_db
def test_the_pair_browser_filtered_sorted_and_refused_is_chinese(lead_client):
    client, project = lead_client
    url = reverse("dash-pairs", args=[project.slug])
    filtered = client.get(
        url,
        {"status": "kept", "side": "A", "flagged": "no", "sort": "ratings", "order": "desc"},
        **CHINESE,
    )
    assert filtered.status_code == 200 and "符合条件" in filtered.content.decode()
    assert _english(filtered) == []
    paged = client.get(url, {"size": "25", "q": "zz-no-such-word"}, **CHINESE)
    assert "没有符合条件的样本对" in paged.content.decode()
    assert _english(paged) == []
    invalid = client.get(url, {"ratings_min": "x", "side": "Q", "size": "7"}, **CHINESE)
    assert invalid.status_code == 400
    assert "部分取值无效" in invalid.content.decode()
    assert _english(invalid) == []


@pytest.mark.django_db
def test_the_bulk_confirmation_and_its_outcome_are_chinese(lead_client):
    client, project = lead_client
    pairs = list(Pair.objects.filter(project=project).values_list("pk", flat=True)[:4])
    bulk = reverse("dash-pairs-bulk", args=[project.slug])
    for action in ("queue", "drop", "gold", "annotator"):
        form = {"action": action, "scope": "selected", "pair": pairs, "filter": ""}
        confirm = client.post(bulk, form, **CHINESE)
        assert confirm.status_code == 200
        assert _english(confirm) == [], action
    everything = client.post(bulk, {"action": "drop", "scope": "all", "filter": ""}, **CHINESE)
    assert "符合筛选条件" in everything.content.decode()
    assert _english(everything) == []
    form = {"action": "drop", "scope": "selected", "pair": pairs, "filter": "", "confirm": "1"}
    done = client.post(bulk, {**form, "note": "不需要"}, follow=True, **CHINESE)
    assert "弃用：" in done.content.decode()
    assert _english(done) == []
    nothing = client.post(bulk, {"action": "", "scope": "selected"}, follow=True, **CHINESE)
    assert "未做任何更改" in nothing.content.decode()
    assert _english(nothing) == []


@pytest.mark.django_db
def test_the_disagreement_queue_filtered_and_a_decision_are_chinese(lead_client):
    client, project = lead_client
    url = reverse("dash-disagreements", args=[project.slug])
    for query in ({"state": "all"}, {"state": "decided", "reason": "span"}, {"reason": "flagged"}):
        assert _english(client.get(url, query, **CHINESE)) == [], query
    pair = Pair.objects.filter(project=project).order_by("pk").first()
    decide = reverse("dash-pair-decide", args=[project.slug, pair.pk])
    answer = client.post(
        decide + "?state=all", {"decision": "drop", "note": "图片损坏"}, follow=True, **CHINESE
    )
    # On to the next pair of the queue, whose page is checked whole by test_chinese_pages.
    assert english_left(_messages(answer.content.decode()), data_words()) == []
    assert "已记录对" in _messages(answer.content.decode())
    settings = reverse("dash-filter-settings", args=[project.slug])
    saved = client.post(
        settings, {"max_span": "2", "ambiguous_half_width": "0.5"}, follow=True, **CHINESE
    )
    assert "已重新应用筛选规则" in saved.content.decode()
    assert _english(saved) == []


@pytest.mark.django_db
def test_a_paused_annotators_page_and_the_readmission_are_chinese(lead_client):
    client, project = lead_client
    task = project.tasks.order_by("pk").first()
    member = project.memberships.get(user__username="ann1").user
    pause = reverse("dash-pause", args=[project.slug, task.slug, member.pk])
    paused = client.post(pause, {"reason": "太快了"}, follow=True, **CHINESE)
    assert AnnotatorPause.objects.filter(annotator=member).exists()
    assert "已在" in paused.content.decode()
    assert _english(paused) == []
    readmit = reverse("dash-readmit", args=[project.slug, task.slug, member.pk])
    back = client.post(readmit, {"back": "annotator"}, follow=True, **CHINESE)
    assert "已重新准入" in back.content.decode()
    assert _english(back) == []


@pytest.mark.django_db
def test_stale_figures_say_so_in_chinese_and_charts_follow_the_page_language(lead_client):
    client, project = lead_client
    url = reverse("dash-agreement", args=[project.slug])
    english = client.get(url).content.decode()  # computed and stored by an English page
    assert "Ratings submitted per week" in english or "Overall scores" in english
    # The stored figures now look old: the page says when they were computed.
    FigureSnapshot.objects.filter(project=project, page="agreement").update(
        version="stale", computed_at=timezone.now() - timedelta(hours=1), compute_seconds=60
    )
    chinese = client.get(url, **CHINESE)
    body = chinese.content.decode()
    assert "这些数据计算于" in body  # the notice of stale figures
    assert "总体评分（规范化：高于中点 = A 更好）" in body  # the stored chart, in Chinese
    assert _english(chinese) == []


@pytest.mark.django_db
def test_the_pair_pages_script_speaks_through_the_javascript_catalog(lead_client):
    client, project = lead_client
    pair = Pair.objects.filter(project=project).order_by("pk").first()
    page = client.get(reverse("dash-pair", args=[project.slug, pair.pk]), **CHINESE)
    body = page.content.decode()
    catalog = reverse("javascript-catalog")
    assert body.index(f'src="{catalog}"') < body.index("adjudicate.js")  # the catalog first
    script = client.get(catalog, **CHINESE).content.decode()
    assert "%(choice)s\\uff1a\\u6b63\\u5728\\u8bb0\\u5f55\\u2026" in script or "正在记录" in script

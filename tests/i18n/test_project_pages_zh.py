"""The lead's project pages in Simplified Chinese beyond the walk of test_chinese_pages.py:
the invitation pages, the htmx fragments (import jobs, run progress, a pair's
questions and notes), the notifications' own sentences, and forms posted with mistakes, whose
error messages must be Chinese too. Each page says it is Chinese and has no English word of
the interface left (tests/i18n/english.py)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.services.pair_threads import pair_note_add, question_ask
from imports.models import ImportJob
from judging.models import JudgeRun, JudgeRunChunk
from notifications.models import Notification
from projects.models import Project
from tests.dashboards.conftest import rated  # noqa: F401  (a fixture)
from tests.factories import invitation, member
from tests.i18n.english import data_words, english_left
from tests.i18n.test_chinese_pages import CHINESE
from tests.members.conftest import PASSWORD
from tests.pages.conftest import lead_site  # noqa: F401  (a fixture)
from tests.pair_threads.conftest import scene  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _chinese(response, status: int = 200) -> str:
    assert response.status_code == status, response.content.decode()[:500]
    return response.content.decode()


def _left(html: str) -> list[str]:
    return english_left(html, data_words())


def _page_left(response, status: int = 200) -> list[str]:
    """English left on a whole page but its header and the project's tabs (base.html,
    dashboards/_nav.html: test_chinese_pages.py reads them)."""
    html = _chinese(response, status)
    assert '<html lang="zh-hans"' in html
    main = html[html.index('<main id="content">') : html.index("</main>")]
    if 'aria-label="Project pages"' in main:
        tabs = main.rindex("<nav", 0, main.index('aria-label="Project pages"'))
        main = main[:tabs] + main[main.index("</nav>", tabs) + len("</nav>") :]
    return _left(main)


def _section(html: str, element_id: str) -> str:
    """The section of `html` with that id (the pair page and the overview are another
    engineer's; only the parts this test is about are read)."""
    start = html.index(f'id="{element_id}"')
    start = html.rindex("<section", 0, start)
    return html[start : html.index("</section>", start) + len("</section>")]


def test_the_invitation_page_and_its_form_with_mistakes_are_chinese(client, lead_site):  # noqa: F811
    project, lead = lead_site
    task = project.tasks.first()
    created = invitation(project, lead, tasks=[task])
    url = reverse("invite", args=[created.token])
    assert _page_left(client.get(url, **CHINESE)) == []
    posted = client.post(
        url,
        {"username": "newcomer", "password1": PASSWORD, "password2": PASSWORD + "x"},
        **CHINESE,
    )
    assert "两次输入的密码不一致。" in _chinese(posted, 400)
    assert _page_left(posted, 400) == []
    taken = client.post(
        url,
        {"username": lead.username, "password1": PASSWORD, "password2": PASSWORD},
        **CHINESE,
    )
    assert "该用户名已被占用；请另选一个。" in _chinese(taken, 400)


def test_the_invitation_page_signed_in_and_a_dead_link_are_chinese(client, lead_site):  # noqa: F811
    project, lead = lead_site
    created = invitation(project, lead)
    client.force_login(member("outsider", Project.objects.create(slug="x", name="X")))
    assert _page_left(client.get(reverse("invite", args=[created.token]), **CHINESE)) == []
    dead = client.get(reverse("invite", args=["no-such-token"]), **CHINESE)
    assert _page_left(dead, 404) == []
    assert "此邀请链接已失效" in dead.content.decode()


def test_the_import_jobs_fragment_is_chinese(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    common = {"project": project, "requested_by": lead, "task_slug": "t2i"}
    ImportJob.objects.create(**common, file_name="waiting.zip")  # never enqueued: waiting
    ImportJob.objects.create(
        **common, file_name="bad.zip", status="failed", error="no prompt",
        error_record=3, records_checked=2,
    )  # fmt: skip
    summary = {"records": 4, "pairs": 3, "unchanged": 1, "images": {"new": 6, "reused": 2},
               "ratings": 0, "gold": 1, "statuses": {}}  # fmt: skip
    ImportJob.objects.create(**common, file_name="ok.zip", status="done", summary=summary)
    fragment = _chinese(client.get(reverse("project-data", args=[project.slug]), **HTMX, **CHINESE))
    assert fragment.lstrip().startswith('<section id="import-jobs"')
    assert "在第 3 条记录处被拒绝" in fragment and "等待后台进程" in fragment
    assert _left(fragment) == []


def test_the_run_progress_fragment_of_a_waiting_run_is_chinese(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    run = JudgeRun.objects.filter(project=project).first()
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    JudgeRunChunk.objects.create(run=run, index=99, pair_ids=[1])  # the broker never got it
    url = reverse("run-detail", args=[project.slug, run.pk])
    fragment = _chinese(client.get(url, **HTMX, **CHINESE))
    assert "取消运行" in fragment and "正在等待后台进程" in fragment
    assert _left(fragment) == []


def test_a_pairs_questions_and_notes_and_the_open_questions_are_chinese(client, scene):  # noqa: F811
    question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body="Which one?")
    pair_note_add(pair_id=scene.pair.pk, lead=scene.lead, body="Looks fine.")
    client.force_login(scene.lead)
    slug = scene.project.slug
    pair_page = _chinese(client.get(reverse("dash-pair", args=[slug, scene.pair.pk]), **CHINESE))
    questions = _section(pair_page, "questions")
    assert "标注专家的提问" in questions and "内部备注" in questions
    assert _left(questions) == []
    overview = _chinese(client.get(reverse("dash-overview", args=[slug]), **CHINESE))
    assert _left(_section(overview, "open-questions")) == []
    # An empty answer comes back as a message on the pair's page, in Chinese.
    thread = scene.pair.threads.get()
    answer = reverse("thread-answer", args=[slug, scene.pair.pk, thread.pk])
    shown = _chinese(client.post(answer, {"body": " "}, follow=True, **CHINESE))
    assert "回复未发送：请先填写内容。" in shown


def test_the_notifications_sentences_are_chinese(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    kinds = {
        "question.asked": {"pair": 1, "task": "t2i"},
        "flag.raised": {"pair": 2, "by": "ann1", "reason": "broken"},
        "import.finished": {"file": "new.zip", "pairs": 2},
        "import.failed": {"file": "bad.zip", "error": "no prompt"},
        "run.finished": {"run": 5, "judge": "coin", "failed": 1, "trials": 8},
        "run.failed": {"run": 6},
        "export.ready": {"job": 3, "pairs": 1},
        "export.failed": {"job": 4},
        "annotator.paused": {"username": "ann1", "task": "t2i"},
    }
    for kind, data in kinds.items():
        Notification.objects.create(recipient=lead, project=project, kind=kind, data=data)
    page = _chinese(client.get(reverse("notifications"), **CHINESE))
    assert "的导入已完成：写入 2 个样本对。" in page
    # The header is base.html's (test_chinese_pages.py reads it): only the list is read here.
    listed = page[page.index('<ul class="notifications">') :]
    assert _left(listed[: listed.index("</ul>") + 5]) == []
    settings_page = client.get(reverse("notification-settings"), **CHINESE).content.decode()
    assert "评审运行结束" in settings_page


def test_forms_posted_with_mistakes_answer_in_chinese(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    slug = project.slug
    task_form = client.post(reverse("task-new", args=[slug]), {"kind": "t2i"}, **CHINESE)
    assert "该字段是必填项。" in _chinese(task_form, 400)
    assert _page_left(task_form, 400) == []
    judge = client.post(
        reverse("judge-new", args=[slug]),
        {"name": "j", "backend": "openai", "model": "m", "concurrency": 1, "timeout_seconds": 5,
         "price_input_per_mtok": 0, "price_output_per_mtok": 0},
        **CHINESE,
    )  # fmt: skip
    assert "API 评审模型需要一个连接" in _chinese(judge, 400)
    assert _page_left(judge, 400) == []
    upload = SimpleUploadedFile("pairs.jsonl", b"{}\n")
    data = client.post(
        reverse("project-data", args=[slug]),
        {"task": "+new", "file": upload, "destination": "queue"},
        **CHINESE,
    )
    assert "请为新任务填写标识，或在上方选择一个任务。" in _chinese(data, 400)
    assert _page_left(data, 400) == []
    invite = client.post(
        reverse("project-members", args=[slug]), {"role": "annotator", "days": 0}, **CHINESE
    )
    assert _page_left(invite, 400) == []
    sampling = client.post(
        reverse("project-sampling", args=[slug]), {"mode": "sample", "budget": 0}, follow=True,
        **CHINESE,
    )  # fmt: skip
    assert "请选择全部样本对或抽样，且预算至少为 1。" in _chinese(sampling)


def test_the_scripts_words_come_in_chinese_from_the_javascript_catalog(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    members = _chinese(client.get(reverse("project-members", args=[project.slug]), **CHINESE))
    catalog_url = reverse("javascript-catalog")
    assert members.index(f'src="{catalog_url}"') < members.index("members.js")  # loaded first
    catalog = _chinese(client.get(catalog_url, **CHINESE))
    for english, chinese in [
        ("Copied", "已复制"),
        ("Copy", "复制"),
        ("Not sent? The connection failed; reload the page to see.", "可能未发送？"),
    ]:
        entry = next(line for line in catalog.splitlines() if f'"{english}":' in line)
        assert chinese in entry.encode().decode("unicode_escape")


def test_the_judge_forms_sampling_help_is_in_the_pages_language_with_its_example_as_code(
    client,
    lead_site,  # noqa: F811
):
    # The help holds HTML (the example as code, escaped): built when the page renders, in its
    # language, not once when the module loads.
    project, lead = lead_site
    client.force_login(lead)
    url = reverse("judge-new", args=[project.slug])
    quoted = "{&quot;temperature&quot;: 0, &quot;max_tokens&quot;: 1024, &quot;seed&quot;: 1}"
    example = f"<code>{quoted}</code>"
    assert f"JSON，例如 {example}" in _chinese(client.get(url, **CHINESE))
    assert f"JSON, e.g. {example}" in client.get(url).content.decode()

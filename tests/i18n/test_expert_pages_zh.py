"""The annotate page in Simplified Chinese, state by state: with the browser asking
for zh-Hans, a submit without an overall score, a skipped pair, a rated pair still open to
correction, the done page, the shortcuts and the image viewer speak Chinese and leave no English
word of the interface (tests/i18n/english.py); the scale keeps its meaning (左侧 is the left
response, point 1) and the keys in <kbd> stay as they are. The data (prompts, the stored skip
reason) is kept as written, and English stays the default.

In Chromium with a Chinese browser (light and dark system schemes): axe-core finds nothing
serious or critical on the page, the shortcuts and the viewer, and the scripts speak Chinese
through the JavaScript catalog, which the Content-Security-Policy lets load."""

import re

import pytest
from django.urls import reverse

from annotation.models import Assignment
from tests.axe import serious_violations
from tests.conftest import watch_errors
from tests.factories import member, queued_pairs
from tests.i18n.english import data_words, english_left
from tests.pages.test_dark_mode import drawn_in
from tests.settling import settled

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans,zh;q=0.9,en;q=0.5"}
HTMX = {"HTTP_HX_REQUEST": "true"}
PASSWORD = "pw-zh-1"
WAIT_MS = 15_000


@pytest.fixture
def expert(tmp_path):
    """An annotator of a 7-point t2i task (aspects: faithfulness, quality) with 3 pairs."""
    return member("expert", queued_pairs(tmp_path, count=3).project, password=PASSWORD)


def _task(expert):
    return expert.memberships.get().project.tasks.get()


def _next_url(task) -> str:
    return reverse("task-next", args=[task.project.slug, task.slug])


def _claim(client, task) -> str:
    """The first pair's annotate URL (claimed by a POST, as the Start button does)."""
    return client.post(_next_url(task), **CHINESE)["Location"]


def _english(html: str) -> list[str]:
    return english_left(html, data_words())


@pytest.mark.django_db
def test_a_submit_without_an_overall_score_says_so_in_chinese(client, expert):
    client.force_login(expert)
    url = _claim(client, _task(expert))
    response = client.post(url, {"aspect_quality": "5", "rationale": "半途"}, **HTMX, **CHINESE)
    html = response.content.decode()
    assert response.status_code == 422
    assert '<p class="error" role="alert">请选择总体偏好</p>' in html
    assert "choose an overall preference" not in html
    assert "半途" in html  # what was typed is kept
    assert _english(html) == []


@pytest.mark.django_db
def test_the_whole_page_and_its_scale_keep_left_on_the_left(client, expert):
    client.force_login(expert)
    html = client.get(_claim(client, _task(expert)), **CHINESE).content.decode()
    assert '<html lang="zh-hans"' in html
    assert _english(html) == []
    labels = re.findall(r'data-label="([^"]+)" value="(\d)"', html)[:7]
    assert labels == [
        ("左侧明显更好", "1"),
        ("左侧更好", "2"),
        ("左侧略好", "3"),
        ("两者相当", "4"),
        ("右侧略好", "5"),
        ("右侧更好", "6"),
        ("右侧明显更好", "7"),
    ]
    # The overall row comes first; only it shows the short labels.
    short = re.findall(r'<span class="short" aria-hidden="true">([^<]+)</span>', html)
    assert short == ["左+++", "左++", "左+", "=", "右+", "右++", "右+++"]
    assert "第 1 个样本对，共 3 个" in html
    assert '<h2 id="left-h">左侧</h2>' in html and '<h2 id="right-h">右侧</h2>' in html
    assert re.search(r'alt="左侧图片 \d"', html) and re.search(r'alt="右侧图片 \d"', html)


@pytest.mark.django_db
def test_a_skipped_pair_says_why_in_chinese_and_the_reason_is_stored_in_english(client, expert):
    client.force_login(expert)
    url = _claim(client, _task(expert))
    client.post(url, {"action": "skip", "skip_reason": "Outside my expertise"}, **CHINESE)
    skipped = Assignment.objects.get(annotator=expert, status=Assignment.Status.SKIPPED)
    assert skipped.skip_reason == "Outside my expertise"  # data, in one language for the leads
    html = client.get(reverse("annotate", args=[skipped.pk]), **CHINESE).content.decode()
    assert "您已跳过此样本对（超出我的专业范围），现在无法评分。" in html
    assert _english(html) == []


@pytest.mark.django_db
def test_the_skip_and_flag_panels_offer_their_reasons_in_chinese(client, expert):
    client.force_login(expert)
    html = client.get(_claim(client, _task(expert)), **CHINESE).content.decode()
    # The value posted stays the English preset (stored as the reason), the label is Chinese.
    assert 'value="Outside my expertise" checked> 超出我的专业范围</label>' in html
    assert '<option value="broken">内容损坏（图片缺失、文字乱码）</option>' in html
    assert "跳过 <kbd>s</kbd>" in html and "标记问题 <kbd>f</kbd>" in html


@pytest.mark.django_db
def test_a_rated_pair_open_to_correction_says_so_in_chinese(client, expert):
    client.force_login(expert)
    url = _claim(client, _task(expert))
    response = client.post(url, {"overall": "2"}, **CHINESE)
    following = client.get(response["Location"], **CHINESE).content.decode()
    assert "评分已保存。" in following  # the confirmation, on the next pair
    assert "最近的评分" in following and "左侧更好" in following  # the list says the score
    rated = Assignment.objects.get(annotator=expert, status=Assignment.Status.SUBMITTED)
    html = client.get(reverse("annotate", args=[rated.pk]), **CHINESE).content.decode()
    assert "您已为此样本对评分；仍可修改您的评分。" in html
    assert "保存修改 <kbd>Enter</kbd>" in html
    assert _english(html) == []


@pytest.mark.django_db
def test_the_done_page_is_in_chinese(client, expert):
    client.force_login(expert)
    task = _task(expert)
    url = _claim(client, task)
    for _ in range(3):
        url = client.post(url, {"overall": "4"}, **CHINESE)["Location"]
    response = client.get(url, follow=True, **CHINESE)
    html = response.content.decode()
    assert f"{task.name}：没有待您评分的内容了" in html
    assert "此任务中您可以评分的样本对均已有足够的标注专家，或已由您评分。谢谢！" in html
    assert _english(html) == []


@pytest.mark.django_db
def test_the_shortcuts_are_in_chinese_with_their_keys_kept(client, expert):
    client.force_login(expert)
    html = client.get(_claim(client, _task(expert)), **CHINESE).content.decode()
    dialog = html[html.index('<dialog id="shortcuts"') :]
    dialog = dialog[: dialog.index("</dialog>")]
    assert '<h2 id="shortcuts-title">键盘快捷键</h2>' in dialog
    assert "<td>提交（在理由框中按 <kbd>Ctrl</kbd>+<kbd>Enter</kbd>）</td>" in dialog
    assert "为高亮的行评分（从<em>总体</em>开始" in dialog
    assert "<td>显示此帮助；按 <kbd>Esc</kbd> 关闭</td>" in dialog
    assert _english(dialog) == []


@pytest.mark.django_db
def test_the_viewer_is_labelled_in_chinese_and_its_script_has_its_words(client, expert):
    client.force_login(expert)
    html = client.get(_claim(client, _task(expert)), **CHINESE).content.decode()
    viewer = html[html.index('<dialog id="zoom"') :]
    viewer = viewer[: viewer.index("</dialog>")]
    assert '<h2 id="viewer-title">图片查看器</h2>' in viewer
    assert 'aria-label="缩小" title="缩小（−）"' in viewer
    assert ">对比</button>" in viewer and ">闪烁切换</button>" in viewer
    assert "<kbd>c</kbd> 对比" in viewer and "<kbd>Esc</kbd> 关闭" in viewer
    assert _english(viewer) == []
    # The scripts load the catalog first; it has the words they say.
    assert html.index(reverse("javascript-catalog")) < html.index("annotate.js")
    catalog = client.get(reverse("javascript-catalog"), **CHINESE).content.decode()
    for said in ["正在对比%(first)s和%(second)s", "%(row)s：%(value)s（按键 1–%(count)s，0 清除）"]:
        assert said.encode("unicode_escape").decode() in catalog or said in catalog


@pytest.mark.django_db
def test_english_stays_the_default(client, expert):
    client.force_login(expert)
    html = client.get(_claim(client, _task(expert))).content.decode()
    assert '<html lang="en"' in html
    assert 'data-label="Left much better"' in html and "Keyboard shortcuts" in html
    assert "Pair 1 of 3" in html


# --- In Chromium ------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_chinese_browser_gets_an_accessible_page_that_speaks_chinese(
    expert, live_server, chromium_browser, scheme
):
    from playwright.sync_api import expect

    context = chromium_browser.new_context(
        locale="zh-CN", color_scheme=scheme, viewport={"width": 1366, "height": 768}
    )
    page = watch_errors(context.new_page())
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", expert.username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(live_server.url + "/", timeout=WAIT_MS)
    page.get_by_role("button", name="开始").click()
    page.wait_for_url(re.compile(r"/annotate/\d+/$"), timeout=WAIT_MS)
    settled(page)
    assert page.get_attribute("html", "lang") == "zh-hans"
    assert drawn_in(page) == scheme
    assert serious_violations(page) == []

    # A score is said in Chinese by the page's script (the JavaScript catalog loaded).
    page.keyboard.press("5")
    expect(page.locator("#row-status")).to_have_text(
        "总体偏好：5 · 右侧略好（按键 1–7，0 清除）", timeout=WAIT_MS
    )
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible(timeout=WAIT_MS)
    assert serious_violations(page) == []
    page.keyboard.press("Escape")

    page.keyboard.press("z")  # the first image, in the viewer
    expect(page.locator("dialog.viewer[open]")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator(".viewer-status")).to_contain_text("缩放", timeout=WAIT_MS)
    page.keyboard.press("c")
    expect(page.locator(".viewer-status")).to_contain_text("正在对比左侧和右侧", timeout=WAIT_MS)
    expect(page.locator(".viewer-stage .viewer-label").first).to_have_text("左侧")
    assert serious_violations(page) == []
    page.keyboard.press("Escape")

    page.keyboard.press("Enter")  # submitted; the next pair comes in and the page says so
    expect(page.locator("#announcer")).to_have_text("评分已保存。", timeout=WAIT_MS)
    expect(page.locator(".position")).to_have_text("第 2 个样本对，共 3 个")
    assert page.console_errors == []
    context.close()


@pytest.mark.django_db
def test_the_language_switch_returns_to_the_page_it_was_used_on(client, expert):
    # The header's form names no page (base.html): Django goes back to the sender.
    client.force_login(expert)
    url = _claim(client, _task(expert))
    html = client.get(url).content.decode()
    assert 'name="next"' not in html
    answer = client.post(
        reverse("set_language"), {"language": "zh-hans"}, HTTP_REFERER="http://testserver" + url
    )
    assert answer.status_code == 302 and answer["Location"] == "http://testserver" + url
    assert '<html lang="zh-hans"' in client.get(url).content.decode()


@pytest.mark.django_db
def test_each_language_of_the_switch_is_named_in_itself(client, expert):
    client.force_login(expert)
    for asked in [{}, CHINESE]:
        html = client.get(reverse("home"), **asked).content.decode()
        assert re.search(r'<option value="en" lang="en"( selected)?>English</option>', html)
        assert re.search(
            r'<option value="zh-hans" lang="zh-hans"( selected)?>简体中文</option>', html
        )

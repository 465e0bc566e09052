"""Sign-in through the organisation in Chromium, against a real OpenID provider
(devtools/oidc_idp): the happy paths and the attacks, each refused with a page, a 4xx and a
`user_login_failed`."""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, Response

from projects.models import ExternalIdentity, Membership
from tests.conftest import watch_errors
from tests.factories import invitation, member, queued_pairs
from tests.oidc.conftest import PROVIDER_NAME, password_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WAIT_MS = 20_000


def _to_provider(page: Page, base: str) -> None:
    """From Arbiter's sign-in page to the provider's, by the button."""
    page.goto(base + "/accounts/login/")
    page.click(f"text=Sign in with {PROVIDER_NAME}")
    page.wait_for_selector("text=Sign in to the provider", timeout=WAIT_MS)


def _provider_sign_in(page: Page, username: str) -> None:
    """The provider's own sign-in page, up to its consent page."""
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password_of(username))
    page.click("text=Sign in to the provider")
    page.wait_for_selector("input[name=allow]", timeout=WAIT_MS)


def _consent(page: Page) -> Response:
    """Authorize on the provider's consent page: Arbiter's answer to the callback."""
    with page.expect_response(lambda r: "/oidc/callback/" in r.url, timeout=WAIT_MS) as info:
        page.click("input[name=allow]")
    return info.value


def _sign_in(page: Page, base: str, username: str) -> None:
    _to_provider(page, base)
    _provider_sign_in(page, username)
    page.click("input[name=allow]")
    page.wait_for_url(base + "/", timeout=WAIT_MS)


def _callback_held(page: Page, base: str, provider_issuer: str, username: str) -> str:
    """Go through the provider, but keep the browser from following its redirect to
    Arbiter's callback: the callback URL (with its code and state), unused."""
    held: list[str] = []

    def hold(route):
        if route.request.method != "POST":
            route.continue_()
            return
        answer = route.fetch(max_redirects=0)  # the consent's answer: a redirect to Arbiter
        held.append(answer.headers["location"])
        route.fulfill(status=200, body="held by the test")

    page.route(provider_issuer + "/authorize**", hold)
    _to_provider(page, base)
    _provider_sign_in(page, username)
    page.click("input[name=allow]")
    page.wait_for_selector("text=held by the test", timeout=WAIT_MS)
    page.unroute(provider_issuer + "/authorize**")
    assert held[0].startswith(base + "/oidc/callback/?")
    return held[0]


def _with(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    return parts._replace(query=urlencode({**query, **changes})).geturl()


def _signed_in_as(page: Page, base: str) -> str | None:
    page.goto(base + "/")
    if "/accounts/login/" in page.url:
        return None
    return page.locator(".username").first.inner_text()


def test_a_first_sign_in_creates_an_account_with_no_project_access(
    oidc_on, live_server, chromium_browser, tmp_path
):
    queued_pairs(tmp_path, project_slug="team", count=1)  # a project ann is not invited to
    page = watch_errors(chromium_browser.new_page())
    _sign_in(page, live_server.url, "ann")

    identity = ExternalIdentity.objects.select_related("user").get(subject="sub-ann")
    assert identity.issuer == oidc_on.issuer
    user = identity.user
    assert user.username == "ann"
    assert user.email == "ann@lab.example"  # verified by the provider
    assert not user.has_usable_password()
    assert not user.is_superuser and not user.is_staff
    assert not user.has_perm("projects.add_project")
    assert not Membership.objects.filter(user=user).exists()
    assert page.locator("text=Team").count() == 0  # the project's name is not shown
    # Arbiter's pages only (the test provider's pages have no favicon).
    assert [error for error in page.console_errors if oidc_on.site not in error] == []

    # A second sign-in is the same account, not a new one.
    again = watch_errors(chromium_browser.new_page())
    _sign_in(again, live_server.url, "ann")
    assert User.objects.filter(external_identities__subject="sub-ann").count() == 1
    assert ExternalIdentity.objects.count() == 1


def test_an_invitation_to_a_verified_e_mail_is_accepted_at_sign_in(
    oidc_on, live_server, chromium_browser, tmp_path
):
    task = queued_pairs(tmp_path, project_slug="team", count=1)
    lead = member("boss", task.project, role="lead")
    invitation(task.project, lead, email="BEA@lab.example", role="annotator")
    unverified = invitation(task.project, lead, email="eve@lab.example")

    page = watch_errors(chromium_browser.new_page())
    _sign_in(page, live_server.url, "bea")
    bea = User.objects.get(external_identities__subject="sub-bea")
    assert Membership.objects.get(user=bea, project=task.project).role == "annotator"
    assert task.project.name in page.inner_text("main")

    # eve's provider did not verify her address: the invitation to it stays open.
    other = watch_errors(chromium_browser.new_page())
    _sign_in(other, live_server.url, "eve")
    eve = User.objects.get(external_identities__subject="sub-eve")
    assert not Membership.objects.filter(user=eve).exists()
    assert eve.email == ""
    unverified.invitation.refresh_from_db()
    assert unverified.invitation.used_at is None


def test_the_operators_group_mapping_makes_operators_and_project_creating_leads(
    oidc_on, live_server, chromium_browser
):
    _sign_in(watch_errors(chromium_browser.new_page()), live_server.url, "cy")
    _sign_in(watch_errors(chromium_browser.new_page()), live_server.url, "dan")
    cy = User.objects.get(external_identities__subject="sub-cy")
    dan = User.objects.get(external_identities__subject="sub-dan")
    assert cy.is_superuser and cy.is_staff
    assert not dan.is_superuser and dan.has_perm("projects.add_project")


def test_a_wrong_state_is_refused_and_the_right_one_then_signs_in(
    oidc_on, live_server, chromium_browser, failed_sign_ins
):
    page = watch_errors(chromium_browser.new_page())
    callback = _callback_held(page, live_server.url, oidc_on.issuer, "ann")

    answer = page.goto(_with(callback, state="forged-state-value"))
    assert answer.status == 400
    assert "did not work" in page.inner_text("h1")
    assert not ExternalIdentity.objects.exists()
    assert failed_sign_ins[-1]["reason"] == "state"
    assert _signed_in_as(page, live_server.url) is None

    # The same browser with the state it was given: signed in (the refusal was the state's).
    answer = page.goto(callback)
    assert answer.status == 200 and page.url == live_server.url + "/"
    assert ExternalIdentity.objects.filter(subject="sub-ann").exists()


def test_a_replayed_authorization_code_is_refused(
    oidc_on, live_server, chromium_browser, failed_sign_ins
):
    victim = watch_errors(chromium_browser.new_page())
    callback = _callback_held(victim, live_server.url, oidc_on.issuer, "ann")
    victim.goto(callback)  # the victim's sign-in uses the code
    assert victim.url == live_server.url + "/"

    # The same callback again, in the same browser: its state is spent.
    answer = victim.goto(callback)
    assert answer.status == 400
    assert failed_sign_ins[-1]["reason"] == "state"

    # An attacker who got the code puts it into a sign-in of their own (a state their
    # browser was given): the provider refuses the spent code.
    attacker = chromium_browser.new_context().new_page()
    own = _callback_held(attacker, live_server.url, oidc_on.issuer, "eve")
    code = parse_qs(urlsplit(callback).query)["code"][0]
    answer = attacker.goto(_with(own, code=code))
    assert answer.status == 400
    assert "refused this sign-in" in attacker.inner_text("main")
    assert failed_sign_ins[-1]["reason"] == "code"
    assert _signed_in_as(attacker, live_server.url) is None
    assert not ExternalIdentity.objects.filter(subject="sub-eve").exists()


def test_an_id_token_from_an_issuer_that_is_not_the_configured_one_is_refused(
    oidc_on, settings, live_server, chromium_browser, failed_sign_ins
):
    # The operator's endpoints lead to a provider whose tokens name another issuer.
    settings.ARBITER_OIDC_ISSUER = oidc_on.site + "/another-issuer"
    settings.ARBITER_OIDC_AUTHORIZATION_ENDPOINT = oidc_on.issuer + "/authorize"
    settings.ARBITER_OIDC_TOKEN_ENDPOINT = oidc_on.issuer + "/token"
    settings.ARBITER_OIDC_JWKS_ENDPOINT = oidc_on.issuer + "/jwks"
    settings.ARBITER_OIDC_USERINFO_ENDPOINT = oidc_on.issuer + "/userinfo"
    page = watch_errors(chromium_browser.new_page())
    _to_provider(page, live_server.url)
    _provider_sign_in(page, "ann")
    assert _consent(page).status == 400
    assert "did not pass Arbiter's checks" in page.inner_text("main")
    assert failed_sign_ins[-1]["reason"] == "id-token"
    assert not User.objects.filter(username="ann").exists()
    assert _signed_in_as(page, live_server.url) is None


def test_an_e_mail_of_an_existing_account_does_not_take_it_over(
    oidc_on, live_server, chromium_browser, failed_sign_ins
):
    local = User.objects.create_user("fay-local", email="Fay@lab.example", password="x-pw-12345")
    page = watch_errors(chromium_browser.new_page())
    _to_provider(page, live_server.url)
    _provider_sign_in(page, "fay")
    assert _consent(page).status == 403
    refusal = page.inner_text("main")
    assert "did not open an account" in refusal
    assert "e-mail" not in refusal and "already" not in refusal  # the log says why, not the page
    assert failed_sign_ins[-1]["reason"] == "account"
    assert not ExternalIdentity.objects.exists()
    assert _signed_in_as(page, live_server.url) is None
    assert User.objects.filter(email__iexact="fay@lab.example").get() == local


def test_an_unverified_e_mail_of_an_account_signs_in_as_if_no_account_had_it(
    oidc_on, live_server, chromium_browser, failed_sign_ins
):
    """eve's provider does not verify her address, so she could have typed anyone's: what
    she sees must be the same whether or not an Arbiter account has it."""

    def eve_signs_in() -> tuple[int, str, str]:
        page = watch_errors(chromium_browser.new_context().new_page())
        _to_provider(page, live_server.url)
        _provider_sign_in(page, "eve")
        status = _consent(page).status
        page.wait_for_load_state("load")
        return status, page.url, page.locator("h1").first.inner_text()

    def forget_eve() -> None:
        User.objects.filter(external_identities__subject="sub-eve").delete()

    local = User.objects.create_user("eve-local", email="Eve@lab.example", password="x-pw-12345")
    with_account = eve_signs_in()
    eve = User.objects.get(external_identities__subject="sub-eve")
    assert eve != local and eve.email == ""  # a new account, which does not take eve-local's
    forget_eve()
    local.delete()
    without_account = eve_signs_in()
    assert with_account == without_account
    assert with_account[1] == live_server.url + "/"  # signed in, both times
    assert failed_sign_ins == []

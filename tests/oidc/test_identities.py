"""What a verified sign-in does to Arbiter's accounts (projects/services/identities.py) and
the id token checks mozilla-django-oidc leaves to us (config/oidc.py)."""

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation

from config.oidc import OrganisationBackend
from projects.models import ExternalIdentity
from projects.services.identities import IdentityRefused, identity_sign_in

pytestmark = pytest.mark.django_db

ISSUER = "https://id.lab.example"


def _claims(sub="s-1", **more):
    return {"sub": sub, "email": f"{sub}@lab.example", "email_verified": True, **more}


def test_an_account_is_found_by_issuer_and_subject_not_by_e_mail():
    first = identity_sign_in(issuer=ISSUER, claims=_claims("s-1", preferred_username="ann"))
    again = identity_sign_in(issuer=ISSUER, claims={"sub": "s-1", "email": "new@lab.example"})
    assert again == first
    other_issuer = identity_sign_in(
        issuer="https://other.example", claims={"sub": "s-1", "preferred_username": "ann"}
    )
    assert other_issuer != first and other_issuer.username == "ann-2"


def test_a_verified_e_mail_already_an_accounts_refuses_the_first_sign_in_saying_nothing_of_it():
    User.objects.create_user("local", email="Ann@Lab.example")
    with pytest.raises(IdentityRefused) as refused:
        identity_sign_in(issuer=ISSUER, claims=_claims("s-9", email="ann@lab.example"))
    assert refused.value.status == 403
    assert "e-mail" not in refused.value.message and "already" not in refused.value.message
    assert not ExternalIdentity.objects.exists() and User.objects.count() == 1


@pytest.mark.parametrize("verified", [0, False, "false", None])
def test_an_unverified_e_mail_signs_in_alike_whether_or_not_an_account_has_it(verified):
    """Anyone can type any address into an unverified claim: a sign-in that answered
    differently when the address had an account would tell them which ones have one."""
    claims = {"email": "ann@lab.example", "email_verified": verified}
    without = identity_sign_in(issuer=ISSUER, claims={"sub": "s-1", **claims})
    local = User.objects.create_user("local", email="Ann@Lab.example")
    with_one = identity_sign_in(issuer=ISSUER, claims={"sub": "s-2", **claims})
    assert without.email == with_one.email == ""  # not kept: no account takes another's place
    assert local.pk not in {without.pk, with_one.pk}
    assert User.objects.filter(email__iexact="ann@lab.example").get() == local


def test_a_mapped_group_gives_the_role_and_its_loss_takes_it_back():
    options = {"operator_values": ["ops"], "lead_values": ["pi"]}
    user = identity_sign_in(issuer=ISSUER, claims=_claims(groups=["ops", "pi"]), **options)
    user = User.objects.get(pk=user.pk)
    assert user.is_superuser and user.is_staff and user.has_perm("projects.add_project")
    identity_sign_in(issuer=ISSUER, claims=_claims(groups=["staff"]), **options)
    user = User.objects.get(pk=user.pk)
    assert not user.is_superuser and not user.is_staff
    assert not user.has_perm("projects.add_project")


def test_without_a_mapping_the_claim_changes_nothing():
    user = identity_sign_in(issuer=ISSUER, claims=_claims(groups=["ops"]))
    assert not User.objects.get(pk=user.pk).is_superuser


def test_a_reserved_or_unusable_name_is_not_taken_from_the_provider():
    user = identity_sign_in(
        issuer=ISSUER, claims={"sub": "s-2", "preferred_username": "imported-team-1"}
    )
    assert not user.username.lower().startswith("imported-")
    assert not user.has_usable_password() and user.email == ""


@pytest.mark.parametrize("sub", ["", None, 42, "x" * 256])
def test_a_missing_or_odd_subject_is_refused(sub):
    with pytest.raises(IdentityRefused):
        identity_sign_in(issuer=ISSUER, claims={"sub": sub})


# The id token checks


@pytest.fixture(scope="module")
def key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def backend(settings):
    settings.ARBITER_OIDC_ISSUER = ISSUER
    settings.ARBITER_OIDC_CLIENT_ID = "arbiter"
    settings.ARBITER_OIDC_CLIENT_SECRET = "secret"
    settings.ARBITER_OIDC_SIGN_ALGO = "RS256"
    return OrganisationBackend()


def _token(key, algorithm="RS256", **changes):
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": "arbiter", "sub": "s-1", "iat": now, "exp": now + 300}
    claims.update(changes)
    claims = {name: value for name, value in claims.items() if value is not None}
    return jwt.encode(claims, key, algorithm=algorithm)


def test_a_good_id_token_passes(backend, key):
    assert backend._verify_jws(_token(key), key.public_key())["sub"] == "s-1"


@pytest.mark.parametrize(
    "changes",
    [
        {"iss": "https://evil.example"},
        {"iss": None},
        {"aud": "someone-else"},
        {"aud": ["arbiter", "someone-else"]},  # several audiences and no azp
        {"exp": int(time.time()) - 3600},
        {"iat": None},
        {"sub": None},
    ],
    ids=["issuer", "no-issuer", "audience", "azp", "expired", "no-iat", "no-sub"],
)
def test_an_id_token_failing_a_check_is_refused(backend, key, changes):
    with pytest.raises((jwt.PyJWTError, SuspiciousOperation)):
        backend._verify_jws(_token(key, **changes), key.public_key())


def test_an_id_token_signed_with_another_algorithm_is_refused(backend, key):
    secret = "s" * 32
    forged = _token(secret, algorithm="HS256")  # a client secret as an HMAC key
    with pytest.raises(SuspiciousOperation):
        backend._verify_jws(forged, key.public_key())


def test_losing_a_role_at_the_provider_revokes_the_tokens_made_with_it():
    from projects.models import ApiToken
    from tests.factories import api_key

    options = {"operator_values": ["ops"], "lead_values": ["pi"]}
    user = identity_sign_in(issuer=ISSUER, claims=_claims(groups=["ops", "pi"]), **options)
    api_key(user)
    identity_sign_in(issuer=ISSUER, claims=_claims(groups=["ops", "pi"]), **options)
    assert ApiToken.objects.get(user=user).revoked_at is None  # nothing lost, nothing revoked
    identity_sign_in(issuer=ISSUER, claims=_claims(groups=["pi"]), **options)
    assert ApiToken.objects.get(user=user).revoked_at is not None
    api_key(user, name="as a lead")
    identity_sign_in(issuer=ISSUER, claims=_claims(groups=[]), **options)
    assert not ApiToken.objects.filter(user=user, revoked_at__isnull=True).exists()


def test_a_provider_accounts_tokens_stop_when_the_operator_turns_the_provider_off(client, settings):
    settings.ARBITER_OIDC_ISSUER = ISSUER
    user = identity_sign_in(issuer=ISSUER, claims=_claims())
    from tests.factories import api_key

    key = api_key(user)
    local = User.objects.create_user("local-script", password="a long enough password")
    local_key = api_key(local)
    assert client.get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    settings.ARBITER_OIDC_ISSUER = ""
    refused = client.get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}")
    made_up = client.get("/api/projects/", HTTP_AUTHORIZATION="Token arb_madeup")
    assert refused.status_code == made_up.status_code == 401
    assert refused.content == made_up.content
    assert client.get("/api/projects/", HTTP_AUTHORIZATION=f"Token {local_key}").status_code == 200


def test_an_e_mail_longer_than_an_account_holds_counts_as_unverified():
    long_email = "a" * 250 + "@lab.example"
    user = identity_sign_in(issuer=ISSUER, claims=_claims("s-long", email=long_email))
    assert User.objects.get(pk=user.pk).email == ""


@pytest.mark.parametrize(
    ("verified", "accepted"),
    [
        ("KATE@Lab.example", True),  # ASCII letters in any case
        ("\u212aate@lab.example", False),  # the Kelvin sign, which case folding turns into k
        ("kat\u0435@lab.example", False),  # a Cyrillic e
    ],
)
def test_an_invitation_is_accepted_only_by_its_own_address_not_a_look_alike(verified, accepted):
    from projects.models import Membership, Project
    from tests.factories import invitation

    project = Project.objects.create(slug="p", name="P")
    lead = User.objects.create_user("lead")
    invitation(project, lead, email="kate@lab.example")
    user = identity_sign_in(issuer=ISSUER, claims=_claims("s-kate", email=verified))
    assert Membership.objects.filter(user=user, project=project).exists() == accepted

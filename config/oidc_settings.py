"""The OIDC settings' checks at start-up (config/settings.py): a half-configured provider, or
passwords off with no other way in, stops the process naming the variable."""

from typing import Any

from config.env import EnvError

# mozilla-django-oidc fetches the provider's key (JWKS) only for RS* and ES*, and verifies
# anything else with the client secret: PS* would start cleanly and refuse every sign-in.
SIGN_ALGORITHMS = {
    *(f"{family}{bits}" for family in ("RS", "ES", "HS") for bits in (256, 384, 512))
}
_ENDPOINTS = ("AUTHORIZATION", "TOKEN", "JWKS")


def check_oidc_settings(values: dict[str, Any]) -> None:
    if not values["ARBITER_PASSWORD_SIGN_IN"] and not values["ARBITER_OIDC_ISSUER"]:
        raise EnvError(
            "ARBITER_PASSWORD_SIGN_IN=false needs ARBITER_OIDC_ISSUER: nobody could sign in"
        )
    if not values["ARBITER_OIDC_ISSUER"]:
        return
    for name in ("ARBITER_OIDC_CLIENT_ID", "ARBITER_OIDC_CLIENT_SECRET"):
        if not values[name]:
            raise EnvError(f"{name} is needed with ARBITER_OIDC_ISSUER")
    if values["ARBITER_OIDC_SIGN_ALGO"] not in SIGN_ALGORITHMS:
        raise EnvError(
            f"ARBITER_OIDC_SIGN_ALGO={values['ARBITER_OIDC_SIGN_ALGO']!r} is not one of "
            f"{', '.join(sorted(SIGN_ALGORITHMS))}"
        )
    if "openid" not in values["ARBITER_OIDC_SCOPES"].split():
        raise EnvError("ARBITER_OIDC_SCOPES must include openid")
    given = [name for name in _ENDPOINTS if values[f"ARBITER_OIDC_{name}_ENDPOINT"]]
    if given and len(given) != len(_ENDPOINTS):
        missing = [f"ARBITER_OIDC_{name}_ENDPOINT" for name in _ENDPOINTS if name not in given]
        raise EnvError(
            f"{', '.join(missing)} missing: set the authorization, token and JWKS endpoints "
            "together, or none (they are then read from the issuer's discovery document)"
        )

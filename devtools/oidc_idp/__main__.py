"""Start the test provider: `python -m devtools.oidc_idp --redirect-uri URL --users JSON`.

It binds 127.0.0.1 on a free port first (port 0), so that its issuer (http://127.0.0.1:PORT/
openid) is known before Django starts, then makes its SQLite database in a temporary folder,
an RSA signing key, one confidential client (code flow, consent asked every time) with the
given redirect URIs, and the users, and prints `ready <issuer>` on one line. SIGTERM stops
it and removes the folder.
"""

import argparse
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


def _prepare(redirect_uris: list[str], users: list[dict], client_id: str, secret: str) -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from oidc_provider.models import Client, ResponseType

    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as quiet:
        call_command("creatersakey", stdout=quiet)
    client = Client.objects.create(
        name="Arbiter",
        client_type="confidential",
        client_id=client_id,
        client_secret=secret,
        jwt_alg="RS256",
        require_consent=True,
        reuse_consent=False,
    )
    client.redirect_uris = redirect_uris
    client.scope = ["openid", "email", "profile", "groups"]
    client.save()
    client.response_types.set(ResponseType.objects.filter(value="code"))
    for user in users:
        User.objects.create_user(user["username"], password=user["password"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redirect-uri", action="append", required=True)
    parser.add_argument("--users", required=True, help="JSON: [{username, password, email, ...}]")
    parser.add_argument("--client-id", default="arbiter")
    parser.add_argument("--client-secret", default="arbiter-test-secret")
    args = parser.parse_args(argv)

    server = make_server(
        "127.0.0.1", 0, lambda e, s: [], server_class=_Server, handler_class=_QuietHandler
    )
    site = f"http://127.0.0.1:{server.server_port}"
    folder = tempfile.mkdtemp(prefix="oidc-idp-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="devtools.oidc_idp.settings",
        IDP_SECRET_KEY=secrets.token_urlsafe(50),
        IDP_SITE_URL=site,
        IDP_DATABASE=os.path.join(folder, "idp.sqlite3"),
        IDP_USERS=args.users,
    )

    def _stop(*_):
        shutil.rmtree(folder, ignore_errors=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, _stop)
    import django
    from django.core.wsgi import get_wsgi_application

    django.setup()
    _prepare(args.redirect_uri, json.loads(args.users), args.client_id, args.client_secret)
    server.set_app(get_wsgi_application())
    print(f"ready {site}/openid", flush=True)
    try:
        server.serve_forever()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

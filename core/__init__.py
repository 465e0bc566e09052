"""The kernel below every app: the domain errors and their HTTP status, htmx, the outbox and
job dispatch, CSP, the cache, the client address and other small rules every layer may use.
It imports no app and nothing of `config`."""

"""The judging and webhook fixtures, for the outbound client's tests of both."""

from tests.judging.conftest import fake_llm, pairs_task  # noqa: F401  (fixtures)
from tests.webhooks.conftest import receiver, site  # noqa: F401  (fixtures)

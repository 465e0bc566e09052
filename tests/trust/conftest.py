"""The judging fixtures (fake model server, chunks run in-process) for the trust tests."""

from tests.judging.conftest import _tasks_in_process, fake_llm  # noqa: F401

"""The Prometheus metrics an operator scrapes from /metrics (operators only).

Request latencies and counts come from django-prometheus's middleware (per process; with
gunicorn's several workers set PROMETHEUS_MULTIPROC_DIR to a folder they share, as
prometheus_client's multiprocess mode asks). Arbiter's own figures are read when scraped: the
queue depth from Redis, and per judge the trials its runs stored by outcome (from the runs'
chunk tallies, a small table), whose rate() gives each judge's call rate and error rate.
"""

import os

from django.db.models import Sum
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from judging.models import JudgeRunChunk
from operations.readiness import queue_depth, redis_client

OUTCOMES = ("answered", "ties", "invalid", "failed", "cached")


class ArbiterCollector:
    def collect(self):
        trials = CounterMetricFamily(
            "arbiter_judge_trials",
            "Trials a judge's runs stored, by outcome (answered names a side; cached: answered "
            "from the response cache, also counted in its outcome)",
            labels=["judge", "outcome"],
        )
        rows = (
            JudgeRunChunk.objects.values("run__judge__name")
            .annotate(**{outcome: Sum(outcome) for outcome in OUTCOMES})
            .order_by("run__judge__name")
        )
        for row in rows:
            for outcome in OUTCOMES:
                trials.add_metric([row["run__judge__name"], outcome], row[outcome] or 0)
        yield trials
        depth = _queue_depth()
        if depth is not None:
            queue = GaugeMetricFamily("arbiter_queue_depth", "Tasks waiting in Celery's queue")
            queue.add_metric([], depth)
            yield queue


def _queue_depth() -> int | None:
    client = redis_client()
    if client is None:
        return None
    try:
        return queue_depth(client)
    finally:
        client.close()


_ARBITER = CollectorRegistry()
_ARBITER.register(ArbiterCollector())


def metrics_text() -> bytes:
    """Prometheus's text format: the web process's metrics (every worker's in multiprocess
    mode), then Arbiter's."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(_ARBITER)

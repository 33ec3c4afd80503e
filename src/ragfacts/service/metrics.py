"""Prometheus metrics of the service: requests, latency, results, gates, and the shared model's calls and tokens."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from ragfacts.methods.base import Outcome
from ragfacts.models import UsageLedger

# A judgement takes from milliseconds (cached) to minutes (many segments on a slow model).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
_MODEL_COUNTERS = {
    "completions": "results asked of the model (one may take several calls)",
    "calls": "requests sent to the model",
    "failures": "completions that ended without a usable reply (counted, never dropped)",
    "cache_hits": "completions answered from the response cache",
    "reasks": "re-asks after a reply that did not validate",
    "retries": "transport retries after 429/5xx/connection errors",
}


class ServiceMetrics:
    """The service's own registry (not the process-wide one): two apps in one process never share counters."""

    def __init__(self, ledger: UsageLedger) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ragfacts_http_requests",
            "HTTP requests answered, by endpoint (route template, or 'unmatched') and status",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ragfacts_http_request_duration_seconds",
            "time from a request's arrival to its answer",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.in_progress = Gauge(
            "ragfacts_http_requests_in_progress", "requests being answered now", registry=self.registry
        )
        self.results = Counter(
            "ragfacts_results",
            "answers judged, by method name, label (precision; 'n/a' for recall) and whether every call succeeded",
            ["method", "label", "complete"],
            registry=self.registry,
        )
        self.gates = Counter(
            "ragfacts_gates",
            "requests that gave thresholds, by endpoint and result",
            ["endpoint", "result"],
            registry=self.registry,
        )
        self.registry.register(LedgerCollector(ledger))

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint=endpoint, status=str(status)).inc()
        self.latency.labels(endpoint=endpoint).observe(seconds)

    def observe_result(self, method_name: str, outcome: Outcome) -> None:
        label = outcome.label or "n/a"
        self.results.labels(method=method_name, label=label, complete=str(outcome.complete).lower()).inc()

    def observe_gate(self, endpoint: str, passed: bool | None) -> None:
        if passed is not None:
            self.gates.labels(endpoint=endpoint, result="passed" if passed else "failed").inc()

    def exposition(self) -> tuple[bytes, str]:
        """The metrics in Prometheus text format, and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class LedgerCollector(Collector):
    """The shared model's usage ledger, read at scrape time: every call counted once, whichever request made it."""

    def __init__(self, ledger: UsageLedger) -> None:
        self.ledger = ledger

    def collect(self) -> Iterator[Metric]:
        stages = dict(self.ledger.stages)
        for field, help_text in _MODEL_COUNTERS.items():
            family = CounterMetricFamily(f"ragfacts_model_{field}", f"{help_text}, by stage", labels=["stage"])
            for stage, usage in stages.items():
                family.add_metric([stage], getattr(usage, field))
            yield family
        tokens = CounterMetricFamily("ragfacts_model_tokens", "tokens, by stage and type", labels=["stage", "type"])
        seconds = CounterMetricFamily("ragfacts_model_seconds", "time the model worked, by stage", labels=["stage"])
        for stage, usage in stages.items():
            tokens.add_metric([stage, "prompt"], usage.prompt_tokens)
            tokens.add_metric([stage, "completion"], usage.completion_tokens)
            seconds.add_metric([stage], usage.model_s)
        yield tokens
        yield seconds

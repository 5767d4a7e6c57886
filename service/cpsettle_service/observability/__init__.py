"""What the service tells its operators: structured logs (``logging``), Prometheus metrics
(``metrics``, served by ``exposition``) and OpenTelemetry traces (``tracing``)."""

__all__ = ["exposition", "logging", "metrics", "tracing"]

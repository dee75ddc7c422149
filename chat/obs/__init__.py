"""Operating the product (issue 26): metrics, traces and structured logs.

- `metrics`: the Prometheus metrics every process records (prometheus-client; in
  multiprocess mode when `PROMETHEUS_MULTIPROC_DIR` is set, as `make serve` does) and the
  registry a scrape reads;
- `logs`: JSON lines (`LOG_FORMAT=json`, structlog) carrying the request id, run id,
  conversation id and a pseudonymous user id, bound in context variables;
- `tracing`: OpenTelemetry, off unless the standard `OTEL_*` variables turn it on, and
  the spans the product opens itself (model calls, MCP calls, waits for a person);
- `middleware`: per request, its id, its log context, its latency and its access line.

A layer of its own just above the pure one: everything may record here, and this package
imports no model, service or view (collectors that read rows live in the edge).
"""

//! OpenTelemetry for `serve` and `call` when the CLI is built with it (the `otel` feature, on by
//! default). Built without it, `--otlp` and `--metrics` are refused with the reason and nothing
//! else changes: the benchmark's "built without telemetry" rows compare that build with the
//! default one, telemetry off.

#[cfg(feature = "otel")]
pub(crate) use switchboard::telemetry::Telemetry;

/// Never made: this build has no telemetry (its `from_flags` refuses the flags that ask for it).
#[cfg(not(feature = "otel"))]
#[derive(Clone)]
pub(crate) enum Telemetry {}

#[cfg(not(feature = "otel"))]
impl Telemetry {
    pub(crate) const PROMETHEUS_CONTENT_TYPE: &'static str = "text/plain";

    pub(crate) fn from_flags(
        _service: &str,
        otlp: Option<&str>,
        prometheus: bool,
        _transport: &'static str,
    ) -> anyhow::Result<Option<Telemetry>> {
        anyhow::ensure!(
            otlp.is_none() && !prometheus,
            "--otlp and --metrics need OpenTelemetry, which this build of switchboard leaves out \
             (cargo feature `otel`, on by default)"
        );
        Ok(None)
    }

    pub(crate) fn metrics_page(&self) -> std::sync::Arc<dyn Fn() -> String + Send + Sync> {
        match *self {}
    }

    pub(crate) fn shutdown(&self) {
        match *self {}
    }
}

#[cfg(not(feature = "otel"))]
impl switchboard::jsonrpc::Layer for Telemetry {}

//! OpenTelemetry for Switchboard: traces and metrics of MCP traffic on both roles.
//!
//! [`Telemetry`] is a [`Layer`](switchboard_jsonrpc::Layer): add it to a server
//! (`ServerBuilder::layer`) or a client (`ClientBuilder::layer`) and every request the side
//! handles gets a `SERVER` span, every request it sends a `CLIENT` span, named and attributed
//! after the OpenTelemetry semantic conventions for MCP (`{mcp.method.name} {target}`,
//! `mcp.method.name`, `mcp.session.id`, `mcp.protocol.version`, `jsonrpc.request.id`,
//! `gen_ai.tool.name`, `gen_ai.prompt.name`, `mcp.resource.uri`, `error.type`,
//! `rpc.response.status_code`, `network.transport`).
//!
//! W3C trace context travels in `params._meta` (`traceparent`, `tracestate`; SEP-414, spec notes
//! [D26-22]): extracted from every request handled (the span's parent), injected into every
//! request sent. A handler runs inside its span's context, so the requests a server sends back to
//! its client while handling (sampling, elicitation, roots) are children of the handler's span:
//! one trace runs client → server → client. A malformed or oversized `traceparent` is ignored,
//! never an error.
//!
//! Metrics ([`metrics`]): requests by method, tool and outcome, operation durations (the
//! conventions' `mcp.{server,client}.operation.duration`), requests in flight, sessions open,
//! bytes in and out. One meter provider is the source of truth for both exports: OTLP, and the
//! Prometheus text exposition ([`Telemetry::prometheus_text`], served at `GET /metrics` by the
//! HTTP server when asked). Labels are bounded: methods outside the catalogue and tool names
//! beyond [`TelemetryBuilder::max_tool_labels`] are counted as `other`.
//!
//! Nothing is exported unless asked: [`TelemetryBuilder::otlp`] with a collector's base URL (as
//! `OTEL_EXPORTER_OTLP_ENDPOINT` means it: traces to `URL/v1/traces`, metrics to
//! `URL/v1/metrics`), or [`TelemetryBuilder::otlp_from_env`] for the standard `OTEL_*`
//! variables. Spans are batched in a bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`, 2,048 by default;
//! spans beyond it are dropped, never waited for).
//!
//! A server and a client in memory, both measured; the server's metrics as Prometheus text
//! (with `.otlp("http://127.0.0.1:4318")` the same would also go to a collector):
//!
//! ```
//! use serde_json::json;
//! use switchboard_client::Client;
//! use switchboard_jsonrpc::memory;
//! use switchboard_server::Server;
//! use switchboard_telemetry::Telemetry;
//! use switchboard_types::lifecycle::Implementation;
//! use switchboard_types::tools::{CallToolResult, Tool};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let telemetry = Telemetry::builder("calc").prometheus(true).build()?;
//! let server = Server::builder(Implementation::new("calc", "1.0"))
//!     .tool(Tool::new("add", json!({"type": "object"})), |_| async {
//!         Ok(CallToolResult::text("3"))
//!     })
//!     .layer(telemetry.clone())
//!     .build()?;
//! let (ours, theirs) = memory::pair();
//! server.serve(theirs)?;
//! let client = Client::builder(Implementation::new("host", "1.0")).build();
//! let session = client.connect(ours).await?;
//! session.call_tool("add", json!({})).await?;
//!
//! let text = telemetry.prometheus_text();
//! assert!(text.contains(
//!     r#"switchboard_requests_total{gen_ai_tool_name="add",mcp_method_name="tools/call",switchboard_outcome="ok",switchboard_side="server"} 1"#
//! ));
//! telemetry.shutdown(); // exports what is batched (nothing here: no OTLP asked)
//! # Ok(()) }
//! ```

mod layer;
pub mod metrics;
mod prometheus;
mod propagation;

use std::sync::Arc;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{ManualReader, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;

pub use opentelemetry;
pub use opentelemetry_sdk;
pub use propagation::{MAX_TRACEPARENT_LEN, MAX_TRACESTATE_LEN, extract_context, inject_context};

/// The name of this instrumentation (the instrumentation scope of its spans and metrics).
pub const SCOPE: &str = "switchboard";

/// Most characters of a target (tool or prompt name, resource URI) recorded on a span; a longer
/// one is cut to this many.
pub const MAX_TARGET_CHARS: usize = 256;

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The OTLP exporter could not be built (a bad URL or `OTEL_*` value).
    #[error("OTLP exporter: {0}")]
    Exporter(String),
    /// The collector URL is not an `http://` or `https://` URL.
    #[error("OTLP collector URL {0:?} is not an http:// or https:// URL")]
    Url(String),
}

/// Where OTLP goes.
#[derive(Debug, Clone)]
enum Otlp {
    Off,
    /// The standard `OTEL_EXPORTER_OTLP_*` variables (the exporter reads them).
    Env,
    /// A collector's base URL.
    Base(String),
}

/// Builds a [`Telemetry`]. Nothing is exported unless [`otlp`](Self::otlp),
/// [`otlp_from_env`](Self::otlp_from_env), [`tracer_provider`](Self::tracer_provider) or
/// [`prometheus`](Self::prometheus) is set.
#[derive(Debug)]
pub struct TelemetryBuilder {
    service_name: String,
    otlp: Otlp,
    prometheus: bool,
    tracer_provider: Option<SdkTracerProvider>,
    max_tool_labels: usize,
    transport: Option<&'static str>,
}

impl TelemetryBuilder {
    /// Exports traces and metrics over OTLP HTTP/protobuf to the collector at `base` (e.g.
    /// `http://127.0.0.1:4318`): traces to `base/v1/traces`, metrics to `base/v1/metrics`, as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` means it. The other `OTEL_EXPORTER_OTLP_*` variables
    /// (headers, timeout, compression) still apply.
    pub fn otlp(mut self, base: impl Into<String>) -> Self {
        self.otlp = Otlp::Base(base.into());
        self
    }

    /// Exports over OTLP HTTP/protobuf where the standard variables say
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, ...;
    /// `http://localhost:4318` when none is set).
    pub fn otlp_from_env(mut self) -> Self {
        self.otlp = Otlp::Env;
        self
    }

    /// Keeps metrics for the Prometheus text exposition ([`Telemetry::prometheus_text`]).
    pub fn prometheus(mut self, on: bool) -> Self {
        self.prometheus = on;
        self
    }

    /// Records spans with this provider (its processors and exporters) instead of one built
    /// here: for an application that already has one, and for tests (an in-memory exporter).
    pub fn tracer_provider(mut self, provider: SdkTracerProvider) -> Self {
        self.tracer_provider = Some(provider);
        self
    }

    /// At most this many distinct tool names as metric labels (100 by default); the calls of
    /// any other tool are counted under `other`. A name becomes a label only once a call of it
    /// was answered with a result, so calls of unknown tools never use the room up.
    pub fn max_tool_labels(mut self, n: usize) -> Self {
        self.max_tool_labels = n;
        self
    }

    /// The transport under the sessions, for `network.transport`: `tcp` for HTTP, `pipe` for
    /// stdio. Unset, the attribute is not recorded.
    pub fn network_transport(mut self, transport: &'static str) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Builds the providers and the layer.
    ///
    /// # Errors
    /// The OTLP exporter could not be built (a bad URL).
    pub fn build(self) -> Result<Telemetry, TelemetryError> {
        let resource = Resource::builder()
            .with_service_name(self.service_name.clone())
            .build();
        let endpoint = |signal: &str| -> Result<Option<String>, TelemetryError> {
            match &self.otlp {
                Otlp::Base(base) => {
                    if !(base.starts_with("http://") || base.starts_with("https://")) {
                        return Err(TelemetryError::Url(base.clone()));
                    }
                    Ok(Some(format!("{}/v1/{signal}", base.trim_end_matches('/'))))
                }
                _ => Ok(None),
            }
        };
        let exporting = !matches!(self.otlp, Otlp::Off);

        let tracer_provider = match self.tracer_provider {
            Some(p) => Some(p),
            None if exporting => {
                let mut b = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
                if let Some(url) = endpoint("traces")? {
                    b = b.with_endpoint(url);
                }
                let exporter = b
                    .build()
                    .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
                Some(
                    SdkTracerProvider::builder()
                        .with_resource(resource.clone())
                        .with_batch_exporter(exporter)
                        .build(),
                )
            }
            None => None,
        };

        let mut prometheus = None;
        let meter_provider = if exporting || self.prometheus {
            let mut b = SdkMeterProvider::builder().with_resource(resource);
            if exporting {
                let mut e = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
                if let Some(url) = endpoint("metrics")? {
                    e = e.with_endpoint(url);
                }
                let exporter = e
                    .build()
                    .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
                b = b.with_reader(PeriodicReader::builder(exporter).build());
            }
            if self.prometheus {
                let reader = ManualReaderHandle(Arc::new(ManualReader::builder().build()));
                b = b.with_reader(reader.clone());
                prometheus = Some(reader);
            }
            Some(b.build())
        } else {
            None
        };

        let tracer = tracer_provider.as_ref().map(|p| p.tracer(SCOPE));
        let instruments = meter_provider.as_ref().map(|p| {
            metrics::Instruments::new(&opentelemetry::metrics::MeterProvider::meter(p, SCOPE))
        });
        Ok(Telemetry {
            inner: Arc::new(Inner {
                tracer,
                tracer_provider,
                meter_provider,
                instruments,
                prometheus,
                tools: metrics::LabelSet::new(self.max_tool_labels),
                transport: self.transport,
            }),
        })
    }
}

/// A [`ManualReader`] the provider and the Prometheus endpoint share.
#[derive(Debug, Clone)]
struct ManualReaderHandle(Arc<ManualReader>);

impl opentelemetry_sdk::metrics::reader::MetricReader for ManualReaderHandle {
    fn register_pipeline(&self, pipeline: std::sync::Weak<opentelemetry_sdk::metrics::Pipeline>) {
        self.0.register_pipeline(pipeline)
    }

    fn collect(
        &self,
        rm: &mut opentelemetry_sdk::metrics::data::ResourceMetrics,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(
        &self,
        timeout: std::time::Duration,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(
        &self,
        kind: opentelemetry_sdk::metrics::InstrumentKind,
    ) -> opentelemetry_sdk::metrics::Temporality {
        self.0.temporality(kind)
    }
}

pub(crate) struct Inner {
    pub(crate) tracer: Option<opentelemetry_sdk::trace::SdkTracer>,
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
    pub(crate) instruments: Option<metrics::Instruments>,
    prometheus: Option<ManualReaderHandle>,
    pub(crate) tools: metrics::LabelSet,
    pub(crate) transport: Option<&'static str>,
}

/// The telemetry layer and its providers. Cheap to clone (shared); add it to a server or a
/// client with their `layer` methods, and call [`Telemetry::shutdown`] before the process ends
/// so that what is batched is exported.
#[derive(Clone)]
pub struct Telemetry {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("traces", &self.inner.tracer.is_some())
            .field("metrics", &self.inner.instruments.is_some())
            .field("prometheus", &self.inner.prometheus.is_some())
            .finish()
    }
}

impl Telemetry {
    /// A builder for a service named `service_name` (the resource's `service.name`; the
    /// standard `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` still apply).
    pub fn builder(service_name: impl Into<String>) -> TelemetryBuilder {
        TelemetryBuilder {
            service_name: service_name.into(),
            otlp: Otlp::Off,
            prometheus: false,
            tracer_provider: None,
            max_tool_labels: metrics::DEFAULT_MAX_TOOL_LABELS,
            transport: None,
        }
    }

    /// Telemetry as a command-line tool's flags ask for it, `None` when they ask for nothing
    /// (then no layer is installed and nothing is measured). `otlp` is `--otlp`'s value: a
    /// collector's base URL, or `env` for the standard `OTEL_*` variables; `prometheus` keeps
    /// metrics for a metrics page; `transport` is `network.transport` (`tcp`, `pipe`).
    ///
    /// # Errors
    /// The OTLP exporter could not be built, or the URL is not http(s).
    pub fn from_flags(
        service_name: &str,
        otlp: Option<&str>,
        prometheus: bool,
        transport: &'static str,
    ) -> Result<Option<Telemetry>, TelemetryError> {
        if otlp.is_none() && !prometheus {
            return Ok(None);
        }
        let mut b = Telemetry::builder(service_name)
            .prometheus(prometheus)
            .network_transport(transport);
        b = match otlp {
            Some("env") => b.otlp_from_env(),
            Some(url) => b.otlp(url),
            None => b,
        };
        b.build().map(Some)
    }

    /// The Prometheus text as a page renderer, for `HttpConfig::with_metrics` (with
    /// [`Telemetry::PROMETHEUS_CONTENT_TYPE`]).
    pub fn metrics_page(&self) -> std::sync::Arc<dyn Fn() -> String + Send + Sync> {
        let t = self.clone();
        Arc::new(move || t.prometheus_text())
    }

    /// Whether spans are recorded.
    pub fn traces(&self) -> bool {
        self.inner.tracer.is_some()
    }

    /// The metrics so far in the Prometheus text exposition format (version 0.0.4); empty when
    /// [`TelemetryBuilder::prometheus`] is off.
    pub fn prometheus_text(&self) -> String {
        match &self.inner.prometheus {
            Some(reader) => prometheus::render(&reader.0),
            None => String::new(),
        }
    }

    /// The content type of [`Telemetry::prometheus_text`].
    pub const PROMETHEUS_CONTENT_TYPE: &'static str = "text/plain; version=0.0.4; charset=utf-8";

    /// Exports what is batched and stops the exporters. Blocks (up to the exporters' timeouts):
    /// call it from `spawn_blocking` in async code.
    pub fn shutdown(&self) {
        if let Some(p) = &self.inner.tracer_provider {
            let _ = p.force_flush();
            let _ = p.shutdown();
        }
        if let Some(p) = &self.inner.meter_provider {
            let _ = p.force_flush();
            let _ = p.shutdown();
        }
    }
}

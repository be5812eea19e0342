//! The Prometheus text exposition format (version 0.0.4), rendered from the same meter
//! provider the OTLP exporter reads: counters as `_total`, up-down counters and gauges as
//! gauges, histograms as `_bucket`/`_sum`/`_count`, with the unit as a suffix (`_seconds`,
//! `_bytes`) as the OpenTelemetry-to-Prometheus compatibility rules say.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::ManualReader;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader as _;

/// `[a-zA-Z0-9_:]`, everything else `_`, no leading digit.
fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The unit as a name suffix: `s` is `seconds`, `By` is `bytes`; `{...}` annotations none.
fn unit_suffix(unit: &str) -> Option<&'static str> {
    match unit {
        "s" => Some("seconds"),
        "ms" => Some("milliseconds"),
        "By" => Some("bytes"),
        _ => None,
    }
}

fn metric_name(m: &Metric) -> String {
    let mut name = sanitize(m.name());
    if let Some(suffix) = unit_suffix(m.unit())
        && !name.ends_with(suffix)
    {
        name.push('_');
        name.push_str(suffix);
    }
    name
}

fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// `{a="1",b="2"}` (sorted by name), with `extra` last; empty when there is no label.
fn labels<'a>(attrs: impl Iterator<Item = &'a KeyValue>, extra: Option<(&str, &str)>) -> String {
    let sorted: BTreeMap<String, String> = attrs
        .map(|kv| (sanitize(kv.key.as_str()), kv.value.to_string()))
        .collect();
    let mut parts: Vec<String> = sorted
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some((k, v)) = extra {
        parts.push(format!("{k}=\"{}\"", escape(v)));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v}")
    }
}

trait AsF64: Copy {
    fn f(self) -> f64;
}
impl AsF64 for f64 {
    fn f(self) -> f64 {
        self
    }
}
impl AsF64 for u64 {
    fn f(self) -> f64 {
        self as f64
    }
}
impl AsF64 for i64 {
    fn f(self) -> f64 {
        self as f64
    }
}

fn render_data<T: AsF64>(out: &mut String, m: &Metric, name: &str, data: &MetricData<T>) {
    let help = escape_help(m.description());
    match data {
        MetricData::Sum(sum) => {
            let (name, kind) = if sum.is_monotonic() {
                (format!("{name}_total"), "counter")
            } else {
                (name.to_owned(), "gauge")
            };
            let rows = sum
                .data_points()
                .map(|p| (labels(p.attributes(), None), number(p.value().f())));
            write_series(out, &name, &help, kind, rows);
        }
        MetricData::Gauge(g) => {
            let rows = g
                .data_points()
                .map(|p| (labels(p.attributes(), None), number(p.value().f())));
            write_series(out, name, &help, "gauge", rows);
        }
        MetricData::Histogram(h) => {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            let mut points: Vec<(String, String)> = h
                .data_points()
                .map(|p| {
                    let mut s = String::new();
                    let mut cumulative = 0u64;
                    let bounds: Vec<f64> = p.bounds().collect();
                    for (i, count) in p.bucket_counts().enumerate() {
                        cumulative += count;
                        let le = bounds
                            .get(i)
                            .map_or_else(|| "+Inf".to_owned(), |b| number(*b));
                        let _ = writeln!(
                            s,
                            "{name}_bucket{} {cumulative}",
                            labels(p.attributes(), Some(("le", &le)))
                        );
                    }
                    let l = labels(p.attributes(), None);
                    let _ = writeln!(s, "{name}_sum{l} {}", number(p.sum().f()));
                    let _ = writeln!(s, "{name}_count{l} {}", p.count());
                    (l, s)
                })
                .collect();
            points.sort();
            for (_, s) in points {
                out.push_str(&s);
            }
        }
        // Not produced by this crate's instruments (no exponential aggregation is configured).
        MetricData::ExponentialHistogram(_) => {}
    }
}

/// Collects from `reader` and renders every metric.
pub(crate) fn render(reader: &ManualReader) -> String {
    let mut rm = ResourceMetrics::default();
    if reader.collect(&mut rm).is_err() {
        return String::new();
    }
    let mut out = String::new();
    for scope in rm.scope_metrics() {
        for m in scope.metrics() {
            let name = metric_name(m);
            match m.data() {
                AggregatedMetrics::F64(d) => render_data(&mut out, m, &name, d),
                AggregatedMetrics::U64(d) => render_data(&mut out, m, &name, d),
                AggregatedMetrics::I64(d) => render_data(&mut out, m, &name, d),
            }
        }
    }
    out
}

/// One metric of single-valued points: its `HELP` and `TYPE` lines, then a row per point
/// (`name{labels} value`), sorted so the page is stable.
fn write_series(
    out: &mut String,
    name: &str,
    help: &str,
    kind: &str,
    points: impl Iterator<Item = (String, String)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    let mut rows: Vec<String> = points
        .map(|(labels, value)| format!("{name}{labels} {value}"))
        .collect();
    rows.sort();
    for r in rows {
        let _ = writeln!(out, "{r}");
    }
}

//! W3C trace context in `params._meta` (SEP-414, spec notes [D26-22]): `traceparent` and
//! `tracestate`, unprefixed, read with the official propagator.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde::Deserialize;
use serde_json::Value;
use switchboard_types::RawJson;

/// Longest `traceparent` read (version `00` is 55 characters; later versions may append
/// fields). A longer one is ignored: the request is handled as if it carried none.
pub const MAX_TRACEPARENT_LEN: usize = 128;
/// Longest `tracestate` read (W3C: at least 512 characters should be propagated). A longer
/// one is dropped; the `traceparent` beside it is still used.
pub const MAX_TRACESTATE_LEN: usize = 512;

const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    traceparent: Option<Value>,
    #[serde(default)]
    tracestate: Option<Value>,
}

struct Carrier(HashMap<&'static str, String>);

impl Extractor for Carrier {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().copied().collect()
    }
}

impl Injector for Carrier {
    fn set(&mut self, key: &str, value: String) {
        match key {
            TRACEPARENT => self.0.insert(TRACEPARENT, value),
            TRACESTATE => self.0.insert(TRACESTATE, value),
            _ => None,
        };
    }
}

/// The remote parent `params._meta` names, if it carries a valid `traceparent` within
/// [`MAX_TRACEPARENT_LEN`]. Anything else (no params, not an object, a `_meta` that is not an
/// object, a malformed or oversized value) is `None`, never an error.
pub fn extract_context(params: Option<&RawJson>) -> Option<Context> {
    let text = params?.get();
    // Cheap test first: most requests carry no trace context.
    if !text.contains(TRACEPARENT) {
        return None;
    }
    let p: Params<'_> = serde_json::from_str(text).ok()?;
    let meta: Meta = serde_json::from_str(p.meta?.get()).ok()?;
    let parent = meta.traceparent?;
    let parent = parent.as_str()?;
    if parent.len() > MAX_TRACEPARENT_LEN {
        return None;
    }
    let mut carrier = HashMap::with_capacity(2);
    carrier.insert(TRACEPARENT, parent.to_owned());
    if let Some(state) = meta.tracestate.as_ref().and_then(Value::as_str)
        && state.len() <= MAX_TRACESTATE_LEN
    {
        carrier.insert(TRACESTATE, state.to_owned());
    }
    let cx = TraceContextPropagator::new().extract(&Carrier(carrier));
    cx.span().span_context().is_valid().then_some(cx)
}

/// `params` with `cx`'s trace context in `_meta` (created when absent; other `_meta` keys
/// kept). Params that are not an object, or a `_meta` that is not one, are left as they are;
/// so is everything when `cx` has no valid span.
pub fn inject_context(cx: &Context, params: Option<RawJson>) -> Option<RawJson> {
    if !cx.span().span_context().is_valid() {
        return params;
    }
    let mut carrier = Carrier(HashMap::with_capacity(2));
    TraceContextPropagator::new().inject_context(cx, &mut carrier);
    if carrier.0.is_empty() {
        return params;
    }
    let mut v: Value = match &params {
        None => Value::Object(serde_json::Map::new()),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(v) => v,
            Err(_) => return params,
        },
    };
    let Some(obj) = v.as_object_mut() else {
        return params;
    };
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return params;
    };
    for (k, val) in carrier.0 {
        meta.insert(k.to_owned(), Value::String(val));
    }
    match switchboard_types::jsonrpc::to_raw(&v) {
        Ok(raw) => Some(raw),
        Err(_) => params,
    }
}

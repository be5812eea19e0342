//! The optional metrics page beside the MCP endpoint (`HttpConfig::with_metrics`): served at its
//! own path with its content type, never on the endpoint's path, absent unless configured.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use http::{Request, StatusCode};
use support::*;
use switchboard_http::HttpConfig;

const PROM: &str = "text/plain; version=0.0.4; charset=utf-8";

async fn get(app: axum::Router, path: &str) -> http::Response<Body> {
    let req = Request::get(path)
        .header("host", "localhost")
        .body(Body::empty())
        .unwrap();
    tower::ServiceExt::oneshot(app, req).await.unwrap()
}

#[tokio::test]
async fn the_metrics_page_is_served_at_its_path_and_rendered_at_each_request() {
    let scrapes = Arc::new(AtomicUsize::new(0));
    let n = scrapes.clone();
    let config = HttpConfig::default().with_metrics(
        "/metrics",
        PROM,
        Arc::new(move || format!("scrapes_total {}\n", n.fetch_add(1, Ordering::SeqCst) + 1)),
    );
    let svc = service_for(&test_server(), config);
    for want in ["scrapes_total 1\n", "scrapes_total 2\n"] {
        let resp = get(svc.router(), "/metrics").await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["content-type"], PROM);
        assert_eq!(body_text(resp).await, want);
    }
    // The MCP endpoint is still itself.
    let resp = get(svc.router(), "/mcp").await;
    assert_ne!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_metrics_page_never_takes_the_endpoints_path_and_is_off_by_default() {
    let config = HttpConfig::default().with_metrics("/mcp", PROM, Arc::new(|| "x 1\n".into()));
    let svc = service_for(&test_server(), config);
    let resp = get(svc.router(), "/mcp").await;
    assert_ne!(
        resp.headers().get("content-type").map(|v| v.as_bytes()),
        Some(PROM.as_bytes())
    );
    assert_ne!(body_text(resp).await, "x 1\n");
    let plain = service_for(&test_server(), HttpConfig::default());
    assert_eq!(
        get(plain.router(), "/metrics").await.status(),
        StatusCode::NOT_FOUND
    );
}

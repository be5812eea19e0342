//! The checks of MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865), tagged `AP-n` as in
//! docs/APPS.md: on a connection of their own that declares the extension (the 2025 handshake
//! when the server speaks it, else 2026-07-28 requests whose envelope declares it), the server's
//! declaration, its tools' links, and every view it lists or links to, read and judged. A
//! server that offers no app at all gets one skip.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_types::apps::{APP_MIME_TYPE, UI_EXTENSION, UI_SCHEME, host_settings};
use switchboard_types::{methods, modern};

use crate::conn::{Conn, Got, envelope};
use crate::verdict::{fail, pass, show, skip};
use crate::{CheckError, Results, Target};

/// How many results the checks give, for the run's estimate: one skip for the many servers
/// without apps (a server with apps gets eight).
pub(crate) const COUNT: usize = 1;

/// The most pages of a list read, and the most views read.
const MAX_PAGES: usize = 100;
const MAX_VIEWS: usize = 50;

/// A connection whose requests declare the extension.
struct Host {
    c: Conn,
    modern: bool,
    next: u64,
}

fn host_capabilities() -> Value {
    json!({"extensions": {UI_EXTENSION: host_settings()}})
}

impl Host {
    /// Opens it: the 2025 handshake declaring the extension, or (`modern`) nothing to open.
    /// Returns the server's capabilities.
    async fn open(
        target: &Target,
        timeout: Duration,
        modern: bool,
    ) -> Result<(Host, Value), CheckError> {
        let mut c = Conn::open(target, timeout)?;
        let caps = if modern {
            let mut meta = envelope(crate::modern::REVISION);
            meta[modern::CLIENT_CAPABILITIES_KEY] = host_capabilities();
            let got = c
                .request_modern(
                    json!("ap-discover"),
                    methods::SERVER_DISCOVER,
                    json!({"_meta": meta}),
                    crate::modern::REVISION,
                )
                .await;
            result(&got).and_then(|r| r.get("capabilities").cloned())
        } else {
            let params = json!({"protocolVersion": "2025-11-25",
                "capabilities": host_capabilities(),
                "clientInfo": {"name": "switchboard-check", "version": env!("CARGO_PKG_VERSION")}});
            let got = c
                .request(json!("ap-init"), methods::INITIALIZE, Some(params))
                .await;
            let caps = result(&got).and_then(|r| r.get("capabilities").cloned());
            let _ = c.notify(methods::NOTIFICATIONS_INITIALIZED).await;
            caps
        };
        let Some(caps) = caps else {
            c.close().await;
            return Err(CheckError::Handshake);
        };
        Ok((Host { c, modern, next: 0 }, caps))
    }

    async fn ask(&mut self, method: &str, params: Value) -> Got {
        self.next += 1;
        let id = json!(format!("ap-{}", self.next));
        if self.modern {
            let mut params = params;
            let mut meta = envelope(crate::modern::REVISION);
            meta[modern::CLIENT_CAPABILITIES_KEY] = host_capabilities();
            params["_meta"] = meta;
            self.c
                .request_modern(id, method, params, crate::modern::REVISION)
                .await
        } else {
            self.c.request(id, method, Some(params)).await
        }
    }

    /// Every item of a paginated list (`member` of each page), up to `MAX_PAGES` pages.
    async fn list(&mut self, method: &str, member: &str) -> Vec<Value> {
        let mut all = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let got = self.ask(method, params).await;
            let Some(r) = result(&got) else { break };
            all.extend(
                r.get(member)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
            cursor = r.get("nextCursor").cloned().filter(|c| !c.is_null());
            if cursor.is_none() {
                break;
            }
        }
        all
    }
}

fn result(got: &Got) -> Option<&Value> {
    match got {
        Got::Frame(v) => v.get("result"),
        _ => None,
    }
}

/// A tool's link: `_meta.ui` (or the deprecated flat `_meta["ui/resourceUri"]`).
fn link_of(tool: &Value) -> Option<&Value> {
    let meta = tool.get("_meta")?;
    meta.get("ui").or_else(|| meta.get("ui/resourceUri"))
}

fn name_of(v: &Value) -> String {
    v.get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .chars()
        .take(64)
        .collect()
}

/// Why a tool's `_meta.ui` is malformed (`[AP-5]`).
pub(crate) fn tool_meta_problem(ui: &Value) -> Option<String> {
    if let Some(flat) = ui.as_str() {
        return (!flat.starts_with(UI_SCHEME)).then(|| format!("link {flat:?} is not ui://"));
    }
    let Some(ui) = ui.as_object() else {
        return Some("_meta.ui is not an object".into());
    };
    if let Some(uri) = ui.get("resourceUri") {
        match uri.as_str() {
            Some(u) if u.starts_with(UI_SCHEME) => {}
            _ => return Some(format!("resourceUri {uri} is not a ui:// URI")),
        }
    }
    if let Some(vis) = ui.get("visibility") {
        let ok = vis.as_array().is_some_and(|a| {
            !a.is_empty()
                && a.iter()
                    .all(|v| v.as_str().is_some_and(|s| s == "model" || s == "app"))
        });
        if !ok {
            return Some(format!(
                "visibility {vis} is not a non-empty list of \"model\", \"app\""
            ));
        }
    }
    None
}

/// Whether `s` is a CSP source a host can put in a directive as it is: `scheme://host[:port]`
/// with an optional leading `*.` label, nothing that would end the source or the directive
/// (whitespace, `;`, `,`, quotes).
fn is_origin(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    let scheme_ok = !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    let host = rest.strip_prefix("*.").unwrap_or(rest);
    scheme_ok
        && !host.is_empty()
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':' | b'[' | b']' | b'/')
        })
}

/// Why a view's `_meta.ui` is malformed (`[AP-4]`).
pub(crate) fn view_meta_problem(ui: &Value) -> Option<String> {
    let Some(ui) = ui.as_object() else {
        return Some("_meta.ui is not an object".into());
    };
    if let Some(csp) = ui.get("csp") {
        let Some(csp) = csp.as_object() else {
            return Some("csp is not an object".into());
        };
        for key in [
            "connectDomains",
            "resourceDomains",
            "frameDomains",
            "baseUriDomains",
        ] {
            let Some(list) = csp.get(key) else { continue };
            let Some(list) = list.as_array() else {
                return Some(format!("csp.{key} is not a list"));
            };
            if let Some(bad) = list.iter().find(|d| !d.as_str().is_some_and(is_origin)) {
                return Some(format!("csp.{key} has {bad}, not an origin"));
            }
        }
    }
    if let Some(p) = ui.get("permissions") {
        let Some(p) = p.as_object() else {
            return Some("permissions is not an object".into());
        };
        if let Some((k, _)) = p.iter().find(|(_, v)| !v.is_object()) {
            return Some(format!("permissions.{k} is not an object"));
        }
    }
    if ui.get("domain").is_some_and(|d| !d.is_string()) {
        return Some("domain is not a string".into());
    }
    if ui.get("prefersBorder").is_some_and(|b| !b.is_boolean()) {
        return Some("prefersBorder is not a boolean".into());
    }
    None
}

/// Whether `text` reads as an HTML document (a doctype or an `<html` element).
fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .chars()
        .take(4096)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.contains("<html")
}

/// What was found wrong, by rule, over every tool and view.
#[derive(Default)]
struct Findings {
    not_ui: Vec<String>,
    mime: Vec<String>,
    html: Vec<String>,
    view_meta: Vec<String>,
    tool_meta: Vec<String>,
    unresolved: Vec<String>,
    no_csp: Vec<String>,
}

fn verdict(
    out: &mut Results,
    tag: &'static str,
    name: &'static str,
    problems: &[String],
    ok: String,
) {
    out.push(if problems.is_empty() {
        pass(tag, name, ok)
    } else {
        fail(tag, name, problems.join("; "))
    });
}

/// Runs the checks on a connection of their own (`modern`: the server speaks only 2026-07-28).
/// A server that cannot be spoken to as a host with the extension fails `AP-9`.
pub(crate) async fn all(target: &Target, timeout: Duration, modern: bool, out: &mut Results) {
    if let Err(e) = run(target, timeout, modern, out).await {
        out.push(fail(
            "AP-9",
            "a host declaring io.modelcontextprotocol/ui is served",
            e.to_string(),
        ));
    }
}

async fn run(
    target: &Target,
    timeout: Duration,
    modern: bool,
    out: &mut Results,
) -> Result<(), CheckError> {
    let (mut h, caps) = Host::open(target, timeout, modern).await?;
    let declared = caps
        .get("extensions")
        .and_then(|e| e.get(UI_EXTENSION))
        .is_some_and(Value::is_object);
    let tools = if caps.get("tools").is_some() {
        h.list(methods::TOOLS_LIST, "tools").await
    } else {
        Vec::new()
    };
    let resources = if caps.get("resources").is_some() {
        h.list(methods::RESOURCES_LIST, "resources").await
    } else {
        Vec::new()
    };
    let linked: Vec<&Value> = tools.iter().filter(|t| link_of(t).is_some()).collect();
    let listed: Vec<&Value> = resources
        .iter()
        .filter(|r| {
            r.get("uri")
                .and_then(Value::as_str)
                .is_some_and(|u| u.starts_with(UI_SCHEME))
                || r.get("mimeType") == Some(&json!(APP_MIME_TYPE))
        })
        .collect();
    if !declared && linked.is_empty() && listed.is_empty() {
        out.push(skip(
            "AP-9",
            "MCP Apps",
            "the server offers no app: no io.modelcontextprotocol/ui extension, no ui:// view, no tool linked to one",
        ));
        h.c.close().await;
        return Ok(());
    }
    out.push(if declared {
        pass(
            "AP-9",
            "a server with views declares the io.modelcontextprotocol/ui extension",
            if modern { "in server/discover" } else { "in initialize" },
        )
    } else {
        fail(
            "AP-9",
            "a server with views declares the io.modelcontextprotocol/ui extension",
            format!(
                "{} linked tools and {} listed views, but no capabilities.extensions[\"{UI_EXTENSION}\"]",
                linked.len(),
                listed.len()
            ),
        )
    });

    let mut f = Findings::default();
    let mut views: BTreeSet<String> = BTreeSet::new();
    for tool in &linked {
        let Some(ui) = link_of(tool) else { continue };
        if let Some(why) = tool_meta_problem(ui) {
            f.tool_meta.push(format!("{}: {why}", name_of(tool)));
            continue;
        }
        let uri = ui
            .as_str()
            .or_else(|| ui.get("resourceUri").and_then(Value::as_str));
        if let Some(uri) = uri {
            views.insert(uri.to_owned());
        }
    }
    let mut listed_uris = BTreeSet::new();
    for r in &listed {
        let uri = r.get("uri").and_then(Value::as_str).unwrap_or_default();
        if !uri.starts_with(UI_SCHEME) {
            f.not_ui
                .push(format!("{uri:?} is served as {APP_MIME_TYPE}"));
            continue;
        }
        listed_uris.insert(uri.to_owned());
        views.insert(uri.to_owned());
        if let Some(ui) = r.pointer("/_meta/ui")
            && let Some(why) = view_meta_problem(ui)
        {
            f.view_meta.push(format!("{uri} (listed): {why}"));
        }
    }
    let links: BTreeSet<String> = views
        .iter()
        .filter(|v| !listed_uris.contains(*v))
        .cloned()
        .collect();
    let mut read = 0;
    for uri in views.iter().take(MAX_VIEWS) {
        let got = h.ask(methods::RESOURCES_READ, json!({"uri": uri})).await;
        let contents = result(&got)
            .and_then(|r| r.get("contents"))
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|c| c.get("uri") == Some(&json!(uri)))
                    .or(c.first())
            });
        let Some(contents) = contents else {
            f.unresolved.push(format!("{uri}: {}", show(&got)));
            continue;
        };
        read += 1;
        if contents.get("mimeType") != Some(&json!(APP_MIME_TYPE)) {
            f.mime.push(format!(
                "{uri}: {}",
                contents.get("mimeType").unwrap_or(&Value::Null)
            ));
        }
        match (contents.get("text"), contents.get("blob")) {
            (Some(Value::String(text)), _) if !looks_like_html(text) => {
                f.html
                    .push(format!("{uri}: the text is not an HTML document"));
            }
            (Some(Value::String(_)), _) | (_, Some(Value::String(_))) => {}
            _ => f.html.push(format!("{uri}: neither text nor blob")),
        }
        let ui = contents.pointer("/_meta/ui").or_else(|| {
            listed
                .iter()
                .find(|r| r.get("uri") == Some(&json!(uri)))
                .and_then(|r| r.pointer("/_meta/ui"))
        });
        if let Some(ui) = contents.pointer("/_meta/ui")
            && let Some(why) = view_meta_problem(ui)
        {
            f.view_meta.push(format!("{uri}: {why}"));
        }
        if ui.and_then(|u| u.get("csp")).is_none() {
            f.no_csp.push(uri.clone());
        }
    }
    h.c.close().await;

    let n = views.len();
    verdict(
        out,
        "AP-1",
        "every MCP App view has a ui:// URI",
        &f.not_ui,
        format!("{n} views"),
    );
    verdict(
        out,
        "AP-5",
        "tools link to views with a well-formed _meta.ui",
        &f.tool_meta,
        format!("{} linked tools", linked.len()),
    );
    verdict(
        out,
        "AP-6",
        "every view a tool links to or the server lists can be read",
        &f.unresolved,
        format!(
            "{read} of {n} read ({} linked but not listed, which the extension allows)",
            links.len()
        ),
    );
    if read == 0 {
        out.push(skip(
            "AP-2",
            "views are served as text/html;profile=mcp-app",
            "no view read",
        ));
        return Ok(());
    }
    verdict(
        out,
        "AP-2",
        "views are served as text/html;profile=mcp-app",
        &f.mime,
        format!("{read} views"),
    );
    verdict(
        out,
        "AP-3",
        "a view's contents are an HTML document, as text or blob",
        &f.html,
        format!("{read} views"),
    );
    verdict(
        out,
        "AP-4",
        "a view's _meta.ui is well-formed (CSP sources are origins)",
        &f.view_meta,
        format!("{read} views, listed and read"),
    );
    out.push(if f.no_csp.is_empty() {
        pass(
            "AP-10",
            "views declare their CSP",
            format!("{read} views with _meta.ui.csp"),
        )
    } else {
        skip(
            "AP-10",
            "views declare their CSP",
            format!(
                "no _meta.ui.csp on {}: hosts apply the restrictive default (a SHOULD, not a MUST)",
                f.no_csp.join(", ")
            ),
        )
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ap_4_csp_sources_must_be_origins_and_nothing_that_ends_a_directive() {
        for good in [
            "https://api.example.com",
            "https://*.cloudflare.com",
            "wss://realtime.example.com:8443",
            "http://127.0.0.1:8080",
        ] {
            assert!(is_origin(good), "{good}");
        }
        for bad in [
            "api.example.com",
            "https://x.com; script-src *",
            "https://a.com https://b.com",
            "'unsafe-eval'",
            "*",
            "https://",
            "https://a.com,https://b.com",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
        assert!(
            view_meta_problem(&json!({"csp": {"connectDomains": ["https://a.com"]},
            "permissions": {"camera": {}}, "prefersBorder": true, "domain": "d"}))
            .is_none()
        );
        assert!(view_meta_problem(&json!({"csp": {"connectDomains": "https://a.com"}})).is_some());
        assert!(view_meta_problem(&json!({"permissions": {"camera": true}})).is_some());
        assert!(view_meta_problem(&json!({"prefersBorder": "yes"})).is_some());
    }

    #[test]
    fn ap_5_tool_links_are_ui_uris_and_visibility_is_model_or_app() {
        assert!(tool_meta_problem(&json!({"resourceUri": "ui://a/b"})).is_none());
        assert!(
            tool_meta_problem(&json!({"resourceUri": "ui://a/b", "visibility": ["app"]})).is_none()
        );
        assert!(tool_meta_problem(&json!("ui://a/flat")).is_none());
        assert!(tool_meta_problem(&json!({"resourceUri": "https://a/b"})).is_some());
        assert!(tool_meta_problem(&json!({"visibility": []})).is_some());
        assert!(tool_meta_problem(&json!({"visibility": ["agent"]})).is_some());
        assert!(tool_meta_problem(&json!(["x"])).is_some());
    }

    #[test]
    fn ap_3_an_html_document_is_recognised() {
        assert!(looks_like_html("<!DOCTYPE html><html></html>"));
        assert!(looks_like_html("\u{feff}\n  <html lang=en>"));
        assert!(!looks_like_html("{\"not\": \"html\"}"));
    }
}

//! The session viewer: one self-contained HTML page (inline CSS and JS, no network request)
//! showing a traced session as a sequence diagram, what `switchboard trace FILE --html` prints.
//!
//! The page's template is `viewer/page.html` (through `include_str!`); the frames and their
//! reports are embedded as JSON in a `<script type="application/json" id="session">` element,
//! with every `<`, `>` and `&` written as a `\u` escape, so no frame text can close the script.
//! The counts are written into the page itself (`#frame-count`, `#violation-count`, each with a
//! `data-count`), so they read the same with or without script.

use serde_json::{Value, json};

use crate::annotate::FrameReport;
use crate::input::TraceInput;
use crate::summary::Summary;

/// The most frames a page shows; the rest are counted, not shown, and the page says so.
pub(crate) const MAX_HTML_FRAMES: usize = 5_000;

/// The most bytes of one frame's text a page embeds; a longer frame is cut (on a character
/// boundary) and marked as cut.
pub(crate) const MAX_HTML_FRAME_BYTES: usize = 16 * 1024;

const TEMPLATE: &str = include_str!("viewer/page.html");
const DATA_SLOT: &str = "{{SESSION_JSON}}";

/// JSON text safe inside a `<script>` element: `<`, `>` and `&` (which occur only inside JSON
/// strings) become `\u003c`, `\u003e` and `\u0026`, so `</script>` and `<!--` cannot appear.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// Text safe inside HTML element content or a quoted attribute.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('{', "&#123;")
}

fn cut(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// The page's data: the frames (at most [`MAX_HTML_FRAMES`], each cut at
/// [`MAX_HTML_FRAME_BYTES`]), the links back, the whole session's counts.
fn session_data(
    title: &str,
    inputs: &[TraceInput],
    reports: &[FrameReport],
    summary: &Summary,
    live: bool,
) -> Value {
    let shown = reports.len().min(MAX_HTML_FRAMES);
    // Which frames each request is answered / followed by (the links back).
    let mut followers: Vec<Vec<usize>> = vec![Vec::new(); shown];
    for r in &reports[..shown] {
        if let Some(t) = r.refers_to.filter(|t| *t < shown) {
            followers[t].push(r.index);
        }
    }
    let frames: Vec<Value> = reports[..shown]
        .iter()
        .zip(followers)
        .map(|(r, followed_by)| {
            let raw = inputs.get(r.index).map(|i| i.text.as_str()).unwrap_or("");
            let (text, text_cut) = cut(raw, MAX_HTML_FRAME_BYTES);
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            if let Value::Object(o) = &mut v {
                o.insert("text".into(), Value::String(text.to_owned()));
                o.insert("text_cut".into(), Value::Bool(text_cut));
                o.insert("text_bytes".into(), json!(raw.len()));
                o.insert("followed_by".into(), json!(followed_by));
            }
            v
        })
        .collect();
    json!({
        "title": title,
        "live": live,
        "frames_total": summary.frames,
        "violations_total": summary.violations,
        "shown": shown,
        "max_frames": MAX_HTML_FRAMES,
        "max_frame_bytes": MAX_HTML_FRAME_BYTES,
        "frames": frames,
    })
}

/// The page for a session: `inputs` as read ([`crate::parse_input`]), `reports` the inspector's
/// for the same frames, `summary` its summary; `title` names the session (e.g. the file name).
/// At most 5,000 frames (`MAX_HTML_FRAMES`) are embedded, each at most 16 KiB
/// (`MAX_HTML_FRAME_BYTES`) long;
/// the frame and violation counts are the whole session's.
pub fn html_page(
    title: &str,
    inputs: &[TraceInput],
    reports: &[FrameReport],
    summary: &Summary,
) -> String {
    page(
        title,
        summary,
        session_data(title, inputs, reports, summary, false),
        false,
    )
}

/// The live page of a session that is still going on (`switchboard record --ui`, `dev --ui`):
/// the page [`html_page`] makes for the frames so far, which then asks its own origin for
/// `session.json` (what [`html_session_json`] returns, served beside it) twice a second and
/// redraws when the session grew. Its content security policy lets it reach its own origin
/// and nothing else.
pub fn html_live_page(
    title: &str,
    inputs: &[TraceInput],
    reports: &[FrameReport],
    summary: &Summary,
) -> String {
    page(
        title,
        summary,
        session_data(title, inputs, reports, summary, true),
        true,
    )
}

/// The session as the live page reads it (`session.json`): the same data the page embeds
/// (the same bounds: at most 5,000 frames, each at most 16 KiB).
pub fn html_session_json(
    title: &str,
    inputs: &[TraceInput],
    reports: &[FrameReport],
    summary: &Summary,
) -> String {
    session_data(title, inputs, reports, summary, true).to_string()
}

fn page(title: &str, summary: &Summary, data: Value, live: bool) -> String {
    let shown = data["shown"].as_u64().unwrap_or(0);
    let cut_note = if (shown as usize) < summary.frames {
        format!(
            "<p id=\"cut-note\" data-shown=\"{shown}\" data-total=\"{}\">Showing the first {shown} of {} frames (the viewer embeds at most {MAX_HTML_FRAMES}); the counts are the whole session's.</p>",
            summary.frames, summary.frames
        )
    } else {
        String::new()
    };
    let connect = if live { "; connect-src 'self'" } else { "" };
    let fill = |part: &str| {
        part.replace("{{FRAMES}}", &summary.frames.to_string())
            .replace("{{VIOLATIONS}}", &summary.violations.to_string())
            .replace("{{SHOWN}}", &shown.to_string())
            .replace("{{CUT_NOTE}}", &cut_note)
            .replace("{{CONNECT}}", connect)
            .replace("{{TITLE}}", &html_text(title))
    };
    let (before, after) = TEMPLATE.split_once(DATA_SLOT).unwrap_or((TEMPLATE, ""));
    // The data goes in last, in one place: nothing in it is ever substituted.
    let json = script_safe(&serde_json::to_string(&data).unwrap_or_else(|_| "{}".into()));
    format!("{}{json}{}", fill(before), fill(after))
}

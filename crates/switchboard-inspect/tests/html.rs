//! The session viewer page (`switchboard trace --html`): counts stated in the page, the data
//! embedded so no frame can leave its script element, and the bounds on what is embedded.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use switchboard_inspect::{Inspector, html_page as page, parse_input};

/// `html::MAX_HTML_FRAMES` (crate-private; the page states it, checked below).
const MAX_HTML_FRAMES: usize = 5_000;
/// `html::MAX_HTML_FRAME_BYTES`.
const MAX_HTML_FRAME_BYTES: usize = 16 * 1024;

fn render(transcript: &str) -> String {
    let inputs = parse_input(transcript).unwrap();
    let mut i = Inspector::new();
    for f in &inputs {
        i.observe(f.direction, &f.text, f.at_ms);
    }
    page("session.jsonl", &inputs, i.reports(), &i.summary())
}

/// The JSON embedded in `<script type="application/json" id="session">`, parsed.
fn embedded(page: &str) -> Value {
    let open = r#"<script type="application/json" id="session">"#;
    let start = page.find(open).unwrap() + open.len();
    let len = page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..start + len]).unwrap()
}

fn count(page: &str, id: &str) -> usize {
    let at = page.find(&format!("id=\"{id}\" data-count=\"")).unwrap();
    let rest = &page[at..];
    let q = rest.find("data-count=\"").unwrap() + "data-count=\"".len();
    rest[q..q + rest[q..].find('"').unwrap()].parse().unwrap()
}

const SESSION: &str = r#"
-> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
<- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}
-> {"jsonrpc":"2.0","method":"notifications/initialized"}
-> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","_meta":{"progressToken":"p"}}}
<- {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}
<- {"jsonrpc":"2.0","id":2,"result":{"content":[]}}
-> {"jsonrpc":"2.0","id":3,"method":"prompts/list"}
"#;

#[test]
fn the_page_states_the_frame_and_violation_counts_and_links_answers_to_requests() {
    let p = render(SESSION);
    assert!(p.starts_with("<!doctype html>"));
    assert_eq!(count(&p, "frame-count"), 7);
    // prompts/list without the prompts capability: LC-5, one violation.
    assert_eq!(count(&p, "violation-count"), 1);
    assert!(p.contains(">7</b>") && p.contains(">1</b>"), "visible text");
    assert!(!p.contains("id=\"cut-note\""), "nothing cut");
    let data = embedded(&p);
    assert_eq!(data["frames"].as_array().unwrap().len(), 7);
    assert_eq!(
        data["max_frames"], MAX_HTML_FRAMES,
        "the bounds the tests cross"
    );
    assert_eq!(data["max_frame_bytes"], MAX_HTML_FRAME_BYTES);
    let frames = &data["frames"];
    assert_eq!(frames[5]["refers_to"], 3, "the answer links to its request");
    assert_eq!(frames[4]["refers_to"], 3, "progress belongs to the request");
    assert_eq!(frames[3]["followed_by"], serde_json::json!([4, 5]));
    assert_eq!(frames[6]["violations"][0]["tag"], "LC-5");
    assert_eq!(frames[6]["primitive"], "prompts");
    // Self-contained: no reference to anything outside the page.
    for outside in ["http://", "https://", " src=", "<link", "@import", "url("] {
        assert!(!p.contains(outside), "{outside} in the page");
    }
}

#[test]
fn a_hostile_frame_cannot_close_the_script_element() {
    let hostile = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"</script><script>alert(1)</script><!--"}}"#;
    let p = render(&format!(
        "-> {hostile}\n<- </script><img src=x onerror=alert(2)>\n"
    ));
    // The only `</script>` are the template's two; `<!--` and the hostile markup never appear raw.
    assert_eq!(p.matches("</script>").count(), 2);
    assert!(!p.contains("<script>alert"));
    assert!(!p.contains("<img"));
    assert!(!p.contains("<!--"));
    // And the text survives, unchanged, for the page's script to show as text.
    let data = embedded(&p);
    assert_eq!(data["frames"][0]["text"], hostile);
    assert_eq!(
        data["frames"][1]["text"],
        "</script><img src=x onerror=alert(2)>"
    );
    // A hostile title (the file name) is escaped too.
    let inputs = parse_input("-> {}\n").unwrap();
    let mut i = Inspector::new();
    i.observe(inputs[0].direction, &inputs[0].text, None);
    let t = page(
        "</title><script>x</script>{{SESSION_JSON}}",
        &inputs,
        i.reports(),
        &i.summary(),
    );
    assert_eq!(t.matches("</script>").count(), 2);
    assert_eq!(t.matches("</title>").count(), 1);
    embedded(&t);
}

#[test]
fn at_most_max_html_frames_are_embedded_and_the_page_says_so() {
    let line = "-> {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    let at = render(&line.repeat(MAX_HTML_FRAMES));
    assert_eq!(
        embedded(&at)["frames"].as_array().unwrap().len(),
        MAX_HTML_FRAMES
    );
    assert!(!at.contains("id=\"cut-note\""));
    let over = render(&line.repeat(MAX_HTML_FRAMES + 1));
    let data = embedded(&over);
    assert_eq!(data["frames"].as_array().unwrap().len(), MAX_HTML_FRAMES);
    assert_eq!(
        count(&over, "frame-count"),
        MAX_HTML_FRAMES + 1,
        "the count is the session's"
    );
    assert!(over.contains(&format!(
        "Showing the first {MAX_HTML_FRAMES} of {} frames",
        MAX_HTML_FRAMES + 1
    )));
}

#[test]
fn a_frame_longer_than_max_html_frame_bytes_is_cut_and_marked() {
    let frame = |len: usize| {
        let pad = "é".repeat(len); // two bytes each: the cut must fall on a character boundary
        format!("-> {{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{{\"p\":\"{pad}\"}}}}\n")
    };
    let fits = frame((MAX_HTML_FRAME_BYTES - 60) / 2);
    let d = embedded(&render(&fits));
    assert_eq!(d["frames"][0]["text_cut"], false);
    assert_eq!(
        d["frames"][0]["text"].as_str().unwrap().len(),
        fits.len() - 4
    );
    let long = frame(MAX_HTML_FRAME_BYTES);
    let d = embedded(&render(&long));
    let text = d["frames"][0]["text"].as_str().unwrap();
    assert_eq!(d["frames"][0]["text_cut"], true);
    assert!(text.len() <= MAX_HTML_FRAME_BYTES && text.len() >= MAX_HTML_FRAME_BYTES - 1);
    assert_eq!(d["frames"][0]["text_bytes"], long.len() - 4);
}

#[test]
fn the_live_page_may_reach_its_own_origin_only_and_the_static_page_nothing() {
    let inputs = parse_input(SESSION).unwrap();
    let mut i = Inspector::new();
    for f in &inputs {
        i.observe(f.direction, &f.text, f.at_ms);
    }
    let csp = |p: &str| {
        let at = p.find("Content-Security-Policy\" content=\"").unwrap();
        let rest = &p[at + "Content-Security-Policy\" content=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    };
    let still = page("s", &inputs, i.reports(), &i.summary());
    assert!(!csp(&still).contains("connect-src"), "{}", csp(&still));
    assert_eq!(embedded(&still)["live"], false);
    let live = switchboard_inspect::html_live_page("s", &inputs, i.reports(), &i.summary());
    assert!(
        csp(&live).starts_with("default-src 'none'"),
        "{}",
        csp(&live)
    );
    assert!(
        csp(&live).ends_with("; connect-src 'self'"),
        "{}",
        csp(&live)
    );
    assert_eq!(embedded(&live)["live"], true);
    assert_eq!(count(&live, "frame-count"), 7);
    // What the live page polls: the same data.
    let json: Value = serde_json::from_str(&switchboard_inspect::html_session_json(
        "s",
        &inputs,
        i.reports(),
        &i.summary(),
    ))
    .unwrap();
    assert_eq!(json, embedded(&live));
    assert_eq!(json["frames_total"], 7);
    assert_eq!(json["violations_total"], 1);
}

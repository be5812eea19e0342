//! # switchboard-modern-interop
//!
//! Our client's typed calls against another SDK's server in revision 2026-07-28 (run by
//! `interop/our-client-2026.sh` against `interop/py_modern_server.py`, the official Python SDK's
//! dual-era `MCPServer`, and `interop/ts_v2_server.mjs`, the TypeScript SDK v2):
//!
//! ```text
//! switchboard-modern-interop --url http://127.0.0.1:PORT/mcp
//! switchboard-modern-interop --stdio 'python interop/py_modern_server.py --stdio'
//! ```
//!
//! The client connects in [`EraMode::Auto`] (the probe must find a modern server), lists the
//! tools, and calls `add`, `greet` (an elicitation: one input-required round), `count_roots` (a
//! `roots/list` round) and `regional` (an `x-mcp-header` argument, mirrored into
//! `Mcp-Param-Region` on HTTP). Prints one `PASS name` / `FAIL name: why` line per step and
//! exits 1 if any failed.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, Era, EraMode};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_transport::{ChildCommand, ChildTransport};
use switchboard_types::content::ContentBlock;
use switchboard_types::elicitation::{ElicitAction, ElicitContentValue, ElicitResult};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::meta::OrderedMap;
use switchboard_types::roots::Root;

const DEADLINE: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = match args.as_slice() {
        [flag, value] if flag == "--url" => Target::Url(value.clone()),
        [flag, value] if flag == "--stdio" => Target::Stdio(value.clone()),
        _ => {
            eprintln!("usage: switchboard-modern-interop --url URL | --stdio 'COMMAND'");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("switchboard-modern-interop: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let failed = runtime.block_on(async {
        tokio::time::timeout(DEADLINE, run(&target))
            .await
            .unwrap_or_else(|_| {
                println!("FAIL {}: not done within {DEADLINE:?}", target.name());
                1
            })
    });
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

enum Target {
    Url(String),
    Stdio(String),
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Url(_) => "http",
            Target::Stdio(_) => "stdio",
        }
    }
}

fn client() -> Client {
    Client::builder(Implementation::new(
        "switchboard-modern-interop",
        env!("CARGO_PKG_VERSION"),
    ))
    .era(EraMode::Auto)
    .elicitation(|_, _| async move {
        let mut content = OrderedMap::new();
        content.insert("name", ElicitContentValue::String("Switchboard".into()));
        let mut r = ElicitResult::new(ElicitAction::Accept);
        r.content = Some(content);
        Ok(r)
    })
    .roots([Root::new("file:///one"), Root::new("file:///two")])
    .build()
}

async fn connect(target: &Target) -> Result<ClientSession, String> {
    let client = client();
    let session = match target {
        Target::Url(url) => {
            let t = HttpClientTransport::connect(url, HttpClientConfig::default())
                .map_err(|e| e.to_string())?;
            client.connect(t).await
        }
        Target::Stdio(cmd) => {
            let command = ChildCommand::new("sh").args(["-c", &format!("exec {cmd}")]);
            let t = ChildTransport::spawn(command).map_err(|e| format!("cannot start: {e}"))?;
            client.connect(t).await
        }
    };
    session.map_err(|e| e.to_string())
}

/// Runs every step; the number that failed.
async fn run(target: &Target) -> usize {
    let via = target.name();
    let session = match connect(target).await {
        Ok(s) if s.era() == Era::Modern => {
            println!(
                "PASS {via} connect: modern ({}) with {}",
                s.protocol_version(),
                s.negotiated().server_info.name
            );
            s
        }
        Ok(s) => {
            println!(
                "FAIL {via} connect: the probe fell back to {}",
                s.protocol_version()
            );
            return 1;
        }
        Err(e) => {
            println!("FAIL {via} connect: {e}");
            return 1;
        }
    };
    let mut failed = 0;
    let mut check = |name: &str, r: Result<String, String>| match r {
        Ok(detail) => println!("PASS {via} {name}: {detail}"),
        Err(e) => {
            failed += 1;
            println!("FAIL {via} {name}: {e}");
        }
    };
    let listed = session.list_tools().await.map_err(|e| e.to_string());
    check(
        "tools/list",
        listed.and_then(|tools| {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let want = ["add", "greet", "count_roots", "regional"];
            if want.iter().all(|w| names.contains(w)) {
                Ok(names.join(", "))
            } else {
                Err(format!("listed {names:?}, want {want:?}"))
            }
        }),
    );
    let steps: [(&str, Value, &str); 4] = [
        ("add", json!({"a": 2, "b": 40}), "42"),
        ("greet", json!({}), "Hello, Switchboard!"),
        ("count_roots", json!({}), "2 roots"),
        (
            "regional",
            json!({"region": "eu-west", "query": "q"}),
            "region=eu-west",
        ),
    ];
    for (tool, arguments, want) in steps {
        let got = text(&session, tool, arguments).await;
        check(
            &format!("tools/call {tool}"),
            got.and_then(|t| {
                if t.contains(want) {
                    Ok(t)
                } else {
                    Err(format!("answered {t:?}, want {want:?}"))
                }
            }),
        );
    }
    session.close();
    let _ = tokio::time::timeout(Duration::from_secs(2), session.closed()).await;
    failed
}

async fn text(session: &ClientSession, tool: &str, arguments: Value) -> Result<String, String> {
    let r = session
        .call_tool(tool, arguments)
        .await
        .map_err(|e| e.to_string())?;
    let text: Vec<&str> = r
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    if r.is_error == Some(true) {
        return Err(format!("a tool error: {}", text.join(" ")));
    }
    Ok(text.join(" "))
}

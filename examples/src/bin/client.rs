//! `client [--yes] [TOOL [JSON]] (--url URL | -- CMD [ARGS...])`: a client of any MCP server.
//!
//! Connects over Streamable HTTP (`--url`) or to a command over stdio (`-- CMD ARGS`), lists the
//! server's tools on stdout, and with TOOL calls it with the JSON object arguments (default
//! `{}`), printing its result. While it runs, the server's sampling requests are printed and
//! answered with a fixed text, and its elicitation requests printed and declined (accepted,
//! with no content, with `--yes`); progress goes to stderr, and Ctrl-C cancels the call.
//! Exit status: 0, or 1 when the tool reports an error (`isError`) or the call fails.

use switchboard::client::{CancellationToken, Client, RequestOptions};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::transport::{ChildCommand, ChildTransport};
use switchboard::types::elicitation::{ElicitAction, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};

const USAGE: &str = "usage: client [--yes] [TOOL [JSON]] (--url URL | -- CMD [ARGS...])";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..], &[][..]),
    };
    let (mut url, mut yes, mut rest) = (None, false, Vec::new());
    let mut it = ours.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--url" => url = Some(it.next().ok_or(USAGE)?.clone()),
            "--yes" => yes = true,
            _ => rest.push(arg.clone()),
        }
    }

    let client = Client::builder(Implementation::new(
        "switchboard-example-client",
        env!("CARGO_PKG_VERSION"),
    ))
    .sampling(|request, _cx| async move {
        eprintln!(
            "sampling request: {}",
            serde_json::to_string(&request.messages).unwrap_or_default()
        );
        let text = SamplingMessageContentBlock::text("This client has no model; here is a fixed answer.");
        Ok(CreateMessageResult::new("no-model", text))
    })
    .elicitation(move |request, _cx| async move {
        eprintln!(
            "elicitation request: {} -> {}",
            request.message(),
            if yes { "accept" } else { "decline" }
        );
        Ok(if yes {
            ElicitResult::new(ElicitAction::Accept)
        } else {
            ElicitResult::new(ElicitAction::Decline)
        })
    })
    .build();
    let session = match (url, command.split_first()) {
        (Some(url), None) => {
            client
                .connect(HttpClientTransport::connect(&url, HttpClientConfig::default())?)
                .await?
        }
        (None, Some((cmd, cmd_args))) => {
            client
                .connect(ChildTransport::spawn(ChildCommand::new(cmd).args(cmd_args))?)
                .await?
        }
        _ => return Err(USAGE.into()),
    };

    for tool in session.list_tools().await? {
        println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    }
    let Some(name) = rest.first() else { return Ok(()) };
    let arguments: serde_json::Value = serde_json::from_str(rest.get(1).map_or("{}", String::as_str))?;

    let cancel = CancellationToken::new();
    let options = RequestOptions::default()
        .with_cancel(cancel.clone())
        .with_progress(|p| {
            eprintln!(
                "progress: {}/{} {}",
                p.progress,
                p.total.unwrap_or(f64::NAN),
                p.message.unwrap_or_default()
            );
        });
    let call = session.call_tool_with(name, arguments, options);
    tokio::pin!(call);
    // Ctrl-C cancels the call: the server is sent notifications/cancelled, and the call ends.
    // `biased` polls the Ctrl-C branch first, so its handler is installed before the request
    // leaves (polling the call first left a window in which an early Ctrl-C killed the process).
    let result = tokio::select! {
        biased;
        _ = tokio::signal::ctrl_c() => {
            cancel.cancel();
            call.await
        }
        result = &mut call => result,
    }?;
    for block in &result.content {
        match block.as_text() {
            Some(text) => println!("{text}"),
            None => println!("{}", serde_json::to_string(block)?),
        }
    }
    session.close();
    if result.is_error() {
        std::process::exit(1);
    }
    Ok(())
}

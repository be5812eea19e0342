//! `switchboard call`: the client's face on the command line, in the manner of the Inspector's
//! CLI mode. Prints the JSON result on stdout (exit 0); a JSON-RPC error goes to stderr (exit 1);
//! a connection failure exits 2.

use std::sync::Arc;
use std::time::Duration;

use switchboard::types::methods;

use crate::otel::Telemetry;
use serde_json::{Map, Value, json};
use switchboard::auth::client::{OAuthClient, OAuthFlags};
use switchboard::client::{ClientError, ClientSession, RequestOptions};
use switchboard::http_client::HttpClientConfig;
use switchboard::types::catalogue::TaskStatus as TaskStatusChanged;
use switchboard::types::elicitation::{ElicitAction, ElicitResult};
use switchboard::types::roots::Root;
use switchboard::types::sampling::CreateMessageResult;
use switchboard::types::tasks::TaskStatus;
use switchboard::types::{ErrorCode, ErrorObject};

/// `switchboard call`'s flags: what to call and how.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CallArgs {
    #[command(flatten)]
    server: crate::ServerArgs,
    /// The method, e.g. tools/call, tools/list, resources/read, prompts/get.
    method: String,
    /// The tool or prompt name, or the resource URI.
    target: Option<String>,
    /// Arguments as key=value (values parse as JSON when they can).
    pairs: Vec<String>,
    /// Raw params (a JSON object), merged over the rest.
    #[arg(long, value_parser = json::<Map<String, Value>>)]
    params: Option<Map<String, Value>>,
    /// Answer sampling requests with this result (JSON); declined otherwise.
    #[arg(long, value_parser = json::<CreateMessageResult>)]
    sampling_response: Option<CreateMessageResult>,
    /// Answer elicitation requests with this result (JSON); declined otherwise.
    #[arg(long, value_parser = json::<ElicitResult>)]
    elicitation_response: Option<ElicitResult>,
    /// Offer these roots (a JSON array of {uri, name?}); no roots capability otherwise.
    #[arg(long, value_parser = json::<Roots>)]
    roots: Option<Roots>,
    /// With tools/call: run the call as a task. 2025-11-25: the status is shown on stderr as
    /// it changes, then the result is printed as a plain call's; Ctrl-C cancels the task.
    /// 2026-07-28: the tasks extension is declared and the server decides; a task is
    /// followed to its end and its result printed.
    #[arg(long)]
    task: bool,
    /// With --task: the retention to ask for, in milliseconds.
    #[arg(long, value_name = "MS", requires = "task")]
    ttl: Option<u64>,
    #[command(flatten)]
    era: crate::EraArg,
    #[command(flatten)]
    oauth: OAuthFlags,
    /// Export the call's spans over OTLP HTTP/protobuf to the collector at URL (its base:
    /// URL/v1/traces); `env`: where the OTEL_* variables say.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
}

/// `--roots` (an alias: clap takes a `Vec` for a list of values).
type Roots = Vec<Root>;

/// The outcome for the caller: text for stdout or stderr, and the exit code.
#[derive(Debug)]
pub(crate) struct CallOutcome {
    /// Printed on stdout.
    pub stdout: String,
    /// Printed on stderr.
    pub stderr: String,
    /// 0 result, 1 JSON-RPC error, 2 connection failure.
    pub code: i32,
}

/// The request's params: the target and pairs as the catalogue shapes them, `--params` over them.
fn params_for(a: &CallArgs) -> anyhow::Result<Value> {
    let mut params =
        switchboard::client::params_from_pairs(&a.method, a.target.as_deref(), &a.pairs)?;
    if let (Value::Object(base), Some(extra)) = (&mut params, &a.params) {
        base.extend(extra.clone());
    }
    Ok(params)
}

/// Connects to the server `a` names. clap lets through exactly one of --stdio and --url, and
/// the OAuth flows only with --url.
async fn connect(
    a: &CallArgs,
    telemetry: Option<&Telemetry>,
    shown: &Shown,
) -> anyhow::Result<(ClientSession, Option<Arc<OAuthClient>>)> {
    let oauth = match &a.server.url {
        Some(url) => a.oauth.client(url, |url, opened| {
            eprintln!("switchboard call: authorize in your browser:\n  {url}");
            if let Err(e) = opened {
                eprintln!("switchboard call: could not start the browser ({e}); open the URL above yourself");
            }
        }).await?,
        None => None,
    };
    let (sampling, elicitation) = (a.sampling_response.clone(), a.elicitation_response.clone());
    let mut builder = crate::client("switchboard-call").era(a.era.era);
    if a.task {
        // 2026-07-28: the tasks extension, declared; a task result is followed to its end.
        // 2025-11-25: each status the server tells (in frame order, so input_required shows
        // before the request it waits on is answered) is shown once.
        let shown = shown.clone();
        builder = builder
            .tasks_extension()
            .notification::<TaskStatusChanged, _>(move |p, _| {
                show(&shown, &p.task.task_id, p.task.status);
            });
    }
    builder = builder
        .sampling(move |_, _| {
            let canned = sampling.clone();
            let declined = "sampling declined by switchboard call";
            async move { canned.ok_or(ErrorObject::new(ErrorCode::USER_REJECTED, declined)) }
        })
        .elicitation(move |_, _| {
            let canned = elicitation.clone();
            async move { Ok(canned.unwrap_or(ElicitResult::new(ElicitAction::Decline))) }
        })
        .on_log(|m| eprintln!("[{}] {}", m.level.as_str(), m.data));
    if let Some(roots) = &a.roots {
        builder = builder.roots(roots.clone());
    }
    if let Some(t) = telemetry {
        builder = builder.layer(t.clone());
    }
    let mut config = HttpClientConfig::default();
    if let Some(o) = &oauth {
        config = config.with_auth(o.clone());
        if a.oauth.oauth {
            // A person authorizes in the browser while the first request waits.
            config = config.with_response_timeout(Duration::from_secs(330));
        }
    }
    match a.server.connect(builder.build(), config).await {
        Ok(s) => Ok((s, oauth)),
        Err(e) => match oauth.as_ref().and_then(|o| o.last_error()) {
            Some(auth) => Err(anyhow::anyhow!("{e:#}\n{}", OAuthFlags::explain(&auth))),
            None => Err(e),
        },
    }
}

fn progress_bar(p: f64, total: Option<f64>) {
    if crate::ui::quiet() {
        return;
    }
    let of = total.map(|t| format!("/{t}")).unwrap_or_default();
    match total.filter(|t| *t > 0.0) {
        // Not a terminal (a log, a script): one plain line per notification.
        _ if !crate::ui::progress_on_stderr() => eprintln!("progress {p}{of}"),
        Some(t) => {
            let filled = ((p / t).clamp(0.0, 1.0) * 30.0) as usize;
            let bar = format!("{}{}", "#".repeat(filled), " ".repeat(30 - filled));
            eprint!("\r[{bar}] {p}{of}");
        }
        None => eprint!("\rprogress {p}{of}"),
    }
}

/// The task status last shown on stderr.
type Shown = Arc<std::sync::Mutex<Option<(String, TaskStatus)>>>;

/// Shows `id`'s status unless it is the one shown last.
fn show(shown: &Shown, id: &str, status: TaskStatus) {
    let mut last = shown.lock().unwrap_or_else(|p| p.into_inner());
    if last.as_ref() != Some(&(id.to_owned(), status)) {
        eprintln!("task {id}: {status}");
        *last = Some((id.to_owned(), status));
    }
}

/// `tools/call` as a task: the status on stderr as it changes, then the result as a plain
/// call's; Ctrl-C cancels the task.
async fn run_task(
    session: &ClientSession,
    a: &CallArgs,
    params: Value,
    shown: &Shown,
) -> Result<Value, ClientError> {
    if a.method != methods::TOOLS_CALL {
        return Err(ClientError::TaskRefused(format!(
            "--task applies to tools/call, not {}",
            a.method
        )));
    }
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    let _ = session.list_tools().await;
    let t = session.start_tool_task(&name, arguments, a.ttl).await?;
    show(shown, &t.task_id, t.status);
    // Polled until it ends or asks for input, then its result (tasks/result carries the input
    // requests); Ctrl-C cancels it.
    let result = async {
        let now = session.wait_task(&t.task_id).await?;
        show(shown, &now.task_id, now.status);
        session.tool_task_result(&t.task_id).await
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {
            let c = session.cancel_task(&t.task_id).await?;
            eprintln!("task {}: {}", c.task_id, c.status);
            Err(ClientError::TaskRefused("cancelled by Ctrl-C".into()))
        }
        r = result => serde_json::to_value(r?).map_err(|e| ClientError::Handshake(e.to_string())),
    }
}

/// Runs one call.
pub(crate) async fn run(a: &CallArgs) -> CallOutcome {
    let fail = |code: i32, msg: String| CallOutcome {
        stdout: String::new(),
        stderr: msg,
        code,
    };
    let params = match params_for(a) {
        Ok(p) => p,
        Err(e) => return fail(2, crate::ui::with_hint(format!("switchboard call: {e:#}"))),
    };
    let transport = a.server.url.as_ref().map_or("pipe", |_| "tcp");
    let telemetry =
        match Telemetry::from_flags("switchboard-call", a.otlp.as_deref(), false, transport) {
            Ok(t) => t,
            Err(e) => return fail(2, format!("switchboard call: {e}\n")),
        };
    let shown = Shown::default();
    let (session, oauth) = match connect(a, telemetry.as_ref(), &shown).await {
        Ok(s) => s,
        Err(e) => return fail(2, crate::ui::with_hint(format!("switchboard call: {e:#}"))),
    };
    let modern = session.era() == switchboard::client::Era::Modern;
    let result = if a.task && !modern {
        run_task(&session, a, params, &shown).await
    } else if let Some(all) = session.request_all(&a.method, params.clone()).await {
        all
    } else {
        let opts = RequestOptions::default().with_progress(|u| progress_bar(u.progress, u.total));
        session.request(&a.method, params, opts).await
    };
    session.close();
    session.closed().await;
    crate::serve::flush(telemetry).await;
    // An authorization that failed during the call (a refused step-up, a dead refresh token)
    // is said after the error it caused.
    let auth = oauth
        .as_ref()
        .and_then(|o| o.last_error())
        .map(|e| format!("switchboard call: {}\n", OAuthFlags::explain(&e)))
        .unwrap_or_default();
    match result {
        Ok(v) => CallOutcome {
            stdout: format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()),
            stderr: String::new(),
            code: 0,
        },
        Err(e) => match e.rejection() {
            Some(err) => fail(
                1,
                format!(
                    "{}\n{auth}",
                    serde_json::to_string_pretty(err).unwrap_or_default()
                ),
            ),
            None => fail(2, format!("switchboard call: {e}\n{auth}")),
        },
    }
}

/// A flag's value as JSON of the type `T` wants.
fn json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("not the JSON expected: {e}"))
}

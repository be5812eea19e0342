//! One upstream's life: connect with the gateway's own client (a child process over stdio, a
//! Streamable HTTP URL, or the user's connector), list what it serves onto the gateway's
//! server, follow its `list_changed` (2025 notifications, or a 2026-07-28 `subscriptions/listen`
//! stream), and when the connection ends, take its items out of the lists and connect again
//! after a bounded backoff.

use std::sync::Arc;
use switchboard_types::methods;

use switchboard_client::{CancellationToken, ClientError, ClientSession, Era, ListenEvent};
use switchboard_types::modern::SubscriptionFilter;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::{Limits, UpstreamConfig};
use crate::connect::{Attempt, connect};
use crate::mirror::{Kind, Mirror};
use crate::registry::RestartReply;

/// Everything the upstream lists, each kind it declares, listed first and then registered
/// together (so that an upstream's items appear at once); a kind that fails to list is logged
/// and left empty (the upstream still serves the others).
async fn list_all(session: &ClientSession, mirror: &Mirror) {
    let caps = session.server_capabilities().clone();
    let name = &mirror.link.name;
    let tools = match caps.tools {
        Some(_) => kept(name, methods::TOOLS_LIST, session.list_tools().await),
        None => Vec::new(),
    };
    let prompts = match caps.prompts {
        Some(_) => kept(name, methods::PROMPTS_LIST, session.list_prompts().await),
        None => Vec::new(),
    };
    let (resources, templates) = match caps.resources {
        Some(_) => (
            kept(
                name,
                methods::RESOURCES_LIST,
                session.list_resources().await,
            ),
            kept(
                name,
                methods::RESOURCES_TEMPLATES_LIST,
                session.list_resource_templates().await,
            ),
        ),
        None => (Vec::new(), Vec::new()),
    };
    // One list_changed per list for the whole listing, not one per item.
    let _hold = mirror.hold_list_changes();
    mirror.sync_tools(tools);
    mirror.sync_prompts(prompts);
    mirror.sync_resources(resources);
    mirror.sync_templates(templates);
}

/// A listing's items, or none (logged) when it failed.
fn kept<T>(name: &str, what: &str, listed: Result<Vec<T>, ClientError>) -> Vec<T> {
    listed.unwrap_or_else(|e| {
        tracing::warn!(upstream = %name, error = %e, "{what} failed");
        Vec::new()
    })
}

/// Re-lists one kind after the upstream said it changed.
async fn relist(session: &ClientSession, mirror: &Mirror, kind: Kind) {
    let name = &mirror.link.name;
    let failed =
        |e: ClientError| tracing::warn!(upstream = %name, error = %e, ?kind, "re-listing failed");
    match kind {
        Kind::Tools => session.list_tools().await.map(|i| mirror.sync_tools(i)),
        Kind::Prompts => session.list_prompts().await.map(|i| mirror.sync_prompts(i)),
        Kind::Resources => session
            .list_resources()
            .await
            .map(|i| mirror.sync_resources(i)),
        Kind::Templates => session
            .list_resource_templates()
            .await
            .map(|i| mirror.sync_templates(i)),
    }
    .unwrap_or_else(failed);
}

/// Follows the upstream's list changes while the session lives (never returns on its own).
async fn watch(session: &ClientSession, mirror: &Mirror) {
    let caps = session.server_capabilities().clone();
    let tools = caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true);
    if session.era() == Era::Modern {
        if !(tools || prompts || resources) {
            return std::future::pending().await;
        }
        let filter = SubscriptionFilter {
            tools_list_changed: tools.then_some(true),
            prompts_list_changed: prompts.then_some(true),
            resources_list_changed: resources.then_some(true),
            ..Default::default()
        };
        match session.listen(filter).await {
            Ok(mut stream) => {
                while let Some(event) = stream.next().await {
                    match event {
                        ListenEvent::ToolsListChanged => relist(session, mirror, Kind::Tools).await,
                        ListenEvent::PromptsListChanged => {
                            relist(session, mirror, Kind::Prompts).await
                        }
                        ListenEvent::ResourcesListChanged => {
                            relist(session, mirror, Kind::Resources).await;
                            relist(session, mirror, Kind::Templates).await;
                        }
                        _ => {}
                    }
                }
            }
            Err(e) => {
                tracing::warn!(upstream = %mirror.link.name, error = %e, "subscriptions/listen refused; list changes are not followed")
            }
        }
        return std::future::pending().await;
    }
    // The 2025 era: the client counts each list's `list_changed`; each waiter re-lists.
    tokio::join!(
        follow(tools, || session.tools_changed(), |i| mirror.sync_tools(i)),
        follow(
            prompts,
            || session.prompts_changed(),
            |i| mirror.sync_prompts(i)
        ),
        follow(
            resources,
            || session.resources_changed(),
            |i| mirror.sync_resources(i)
        ),
        follow(
            resources,
            || session.resource_templates_changed(),
            |i| mirror.sync_templates(i)
        ),
    );
}

/// While `on`, applies each re-listing `changed` returns after a `list_changed`; then waits
/// for ever (the session's end is watched beside it).
async fn follow<T, F, Fut>(on: bool, changed: F, apply: impl Fn(Vec<T>))
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Vec<T>, ClientError>>,
{
    if on {
        while let Ok(items) = changed().await {
            apply(items);
        }
    }
    std::future::pending::<()>().await
}

/// Brings the upstream up and lists it, within `connect_timeout`.
async fn bring_up(
    config: &UpstreamConfig,
    mirror: &Mirror,
    limits: &Limits,
) -> Result<ClientSession, Attempt> {
    let session = tokio::time::timeout(limits.connect_timeout, connect(config))
        .await
        .map_err(|_| Attempt::TimedOut(limits.connect_timeout))??;
    // Calls reach the session as soon as its first list is served.
    mirror.link.set(Some(session.clone()));
    if tokio::time::timeout(limits.connect_timeout, list_all(&session, mirror))
        .await
        .is_err()
    {
        mirror.link.set(None);
        mirror.clear();
        session.close();
        return Err(Attempt::TimedOut(limits.connect_timeout));
    }
    Ok(session)
}

/// A restart in place: a new session of the upstream, in the era `old` settled on, is brought
/// up and listed while `old` still serves; the listing replaces the old one item by item, so
/// the gateway's clients get a `list_changed` only for a list that changed. On failure the old
/// session serves on (its items listed again) and the error is returned.
async fn swap(
    config: &UpstreamConfig,
    mirror: &Mirror,
    limits: &Limits,
    old: &ClientSession,
) -> Result<ClientSession, Attempt> {
    let era = match old.era() {
        Era::Modern => switchboard_client::EraMode::Pin(old.protocol_version()),
        _ => switchboard_client::EraMode::Legacy,
    };
    let same_era = config.clone().with_era(era);
    let session = tokio::time::timeout(limits.connect_timeout, connect(&same_era))
        .await
        .map_err(|_| Attempt::TimedOut(limits.connect_timeout))??;
    // Clients' own sessions were on the old process: new ones are opened as calls need them.
    mirror.link.affinity.close_all();
    mirror.link.set(Some(session.clone()));
    if tokio::time::timeout(limits.connect_timeout, list_all(&session, mirror))
        .await
        .is_err()
    {
        session.close();
        mirror.link.set(Some(old.clone()));
        list_all(old, mirror).await;
        mirror.link.set_ready(true);
        return Err(Attempt::TimedOut(limits.connect_timeout));
    }
    mirror.renew_subscriptions(&session).await;
    mirror.link.set_ready(true);
    Ok(session)
}

/// Runs one upstream until `stop`: up, watched, down, and up again after the backoff.
pub(crate) async fn supervise(
    config: UpstreamConfig,
    mirror: Arc<Mirror>,
    limits: Limits,
    stop: CancellationToken,
    mut restarts: mpsc::Receiver<RestartReply>,
) {
    let name = config.name.clone();
    let mut attempt: u32 = 0;
    // A restart asked for while the upstream was down: answered by the next attempt.
    let mut waiting: Option<RestartReply> = None;
    loop {
        let started = Instant::now();
        let up = tokio::select! {
            r = bring_up(&config, &mirror, &limits) => r,
            () = stop.cancelled() => break,
        };
        if let Ok(session) = &up {
            mirror.renew_subscriptions(session).await;
            mirror.link.set_ready(true);
        }
        mirror.link.set_attempted();
        if let Some(reply) = waiting.take() {
            let _ = reply.send(up.as_ref().map(|_| ()).map_err(ToString::to_string));
        }
        match up {
            Ok(mut session) => {
                tracing::info!(
                    upstream = %name,
                    era = ?session.era(),
                    tools = mirror.count(Kind::Tools),
                    prompts = mirror.count(Kind::Prompts),
                    resources = mirror.count(Kind::Resources),
                    templates = mirror.count(Kind::Templates),
                    "upstream is up"
                );
                let stopped = loop {
                    tokio::select! {
                        () = session.closed() => break false,
                        () = watch(&session, &mirror) => break false,
                        () = stop.cancelled() => break true,
                        Some(reply) = restarts.recv() => {
                            let swapped = tokio::select! {
                                r = swap(&config, &mirror, &limits, &session) => r,
                                () = stop.cancelled() => break true,
                            };
                            let answer = match swapped {
                                Ok(new) => {
                                    session.close();
                                    session = new;
                                    Ok(())
                                }
                                Err(e) => Err(e.to_string()),
                            };
                            let _ = reply.send(answer);
                        }
                    }
                };
                mirror.link.set(None);
                mirror.link.affinity.close_all();
                mirror.clear();
                session.close();
                if stopped {
                    break;
                }
                tracing::warn!(
                    upstream = %name,
                    "upstream went down; its tools, prompts and resources are left out of the lists until it is back"
                );
                if started.elapsed() >= limits.backoff_reset_after {
                    attempt = 0;
                }
            }
            Err(e) => tracing::warn!(upstream = %name, error = %e, "upstream is not up"),
        }
        let delay = limits.backoff(attempt);
        attempt = attempt.saturating_add(1);
        tracing::info!(upstream = %name, ?delay, attempt, "connecting again after the backoff");
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stop.cancelled() => break,
            Some(reply) = restarts.recv() => {
                // Asked for a restart while down: no more waiting, the backoff starts over.
                attempt = 0;
                waiting = Some(reply);
            }
        }
    }
    if let Some(reply) = waiting {
        let _ = reply.send(Err("the upstream was stopped".into()));
    }
    mirror.link.set(None);
    mirror.link.set_attempted();
    mirror.link.affinity.close_all();
    mirror.clear();
}

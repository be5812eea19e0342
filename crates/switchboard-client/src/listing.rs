//! Client side: the list-all helper that follows `nextCursor` under a page bound, the
//! `*_changed()` waiters, and the optional background refresh, over the caches of [`crate::cache`].
//!
//! Cursors are opaque (`[UT-12]`): each one is sent back exactly as received, and none outlives
//! the listing it came from. No page size is assumed (`[UT-11]`): a listing ends only when a page
//! has no `nextCursor`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{Peer, RequestError, RequestOptions};
use switchboard_types::error::echo;
use switchboard_types::http_headers::param_headers;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::meta::{Cursor, PaginatedRequestParams};
use switchboard_types::prompts::{ListPromptsResult, Prompt};
use switchboard_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceTemplate,
};
use switchboard_types::tools::{ListToolsResult, Tool};

use crate::cache::{ListCache, ListKind, Lists};
use crate::era::Era;
use crate::error::ClientError;
use crate::exchange::{call, parse_result};
use crate::state::ClientState;

/// A list the client caches: its page type and where its cache lives.
pub(crate) trait Listed: Clone + Send + Sync + 'static {
    const KIND: ListKind;
    type Page: DeserializeOwned;
    fn split(page: Self::Page) -> (Vec<Self>, Option<Cursor>);
    fn cache(lists: &Lists) -> &ListCache<Self>;
    /// Called after a listing is stored.
    fn stored(_state: &ClientState, _items: &[Self]) {}
    /// Leaves out of a modern page what the client must not use.
    fn screen(_page: &mut Self::Page) {}
}

impl Listed for Tool {
    const KIND: ListKind = ListKind::Tools;
    type Page = ListToolsResult;
    fn split(page: ListToolsResult) -> (Vec<Tool>, Option<Cursor>) {
        (page.tools, page.next_cursor)
    }
    fn cache(lists: &Lists) -> &ListCache<Tool> {
        &lists.tools
    }
    fn stored(state: &ClientState, items: &[Tool]) {
        state.validators.retain_for(items);
    }
    /// `[D26-65]`: a tool whose `x-mcp-header` annotations break the rules is left out of the
    /// client's view (logged once per page, the server's text cut); the others stay.
    fn screen(page: &mut ListToolsResult) {
        let mut first: Option<String> = None;
        let before = page.tools.len();
        page.tools.retain(|t| match param_headers(&t.input_schema) {
            Ok(_) => true,
            Err(why) => {
                first.get_or_insert_with(|| format!("{}: {why}", t.name));
                false
            }
        });
        if let Some(first) = first {
            tracing::warn!(
                left_out = before - page.tools.len(),
                first = %echo(&first),
                "tools left out: invalid x-mcp-header (D26-64)"
            );
        }
    }
}

impl Listed for Resource {
    const KIND: ListKind = ListKind::Resources;
    type Page = ListResourcesResult;
    fn split(page: ListResourcesResult) -> (Vec<Resource>, Option<Cursor>) {
        (page.resources, page.next_cursor)
    }
    fn cache(lists: &Lists) -> &ListCache<Resource> {
        &lists.resources
    }
}

impl Listed for ResourceTemplate {
    const KIND: ListKind = ListKind::ResourceTemplates;
    type Page = ListResourceTemplatesResult;
    fn split(page: ListResourceTemplatesResult) -> (Vec<ResourceTemplate>, Option<Cursor>) {
        (page.resource_templates, page.next_cursor)
    }
    fn cache(lists: &Lists) -> &ListCache<ResourceTemplate> {
        &lists.templates
    }
}

impl Listed for Prompt {
    const KIND: ListKind = ListKind::Prompts;
    type Page = ListPromptsResult;
    fn split(page: ListPromptsResult) -> (Vec<Prompt>, Option<Cursor>) {
        (page.prompts, page.next_cursor)
    }
    fn cache(lists: &Lists) -> &ListCache<Prompt> {
        &lists.prompts
    }
}

/// One page: `params` is `{}` for the first page and `{"cursor": ..}` after.
pub(crate) async fn list_page<T: Listed>(
    peer: &Peer,
    state: &Arc<ClientState>,
    cursor: Option<Cursor>,
) -> Result<T::Page, ClientError> {
    let params = PaginatedRequestParams {
        cursor,
        ..Default::default()
    };
    let method = T::KIND.method();
    let params = to_raw(&params).map_err(RequestError::from)?;
    // A list request is never retried after -32020: nothing to re-list with.
    let raw = call(
        peer,
        state,
        method,
        Some(params),
        RequestOptions::default(),
        None,
        None,
        None,
    )
    .await?;
    let mut page: T::Page = parse_result(method, &raw)?;
    if state.era() == Era::Modern {
        T::screen(&mut page);
    }
    Ok(page)
}

/// Re-lists the tools ([`exchange::Relist`](crate::exchange::Relist)): what a modern
/// `tools/call` does after -32020.
pub(crate) fn relist_tools<'a>(
    peer: &'a Peer,
    state: &'a Arc<ClientState>,
) -> Pin<Box<dyn Future<Output = Result<(), ClientError>> + Send + 'a>> {
    Box::pin(async move { list_all::<Tool>(peer, state).await.map(drop) })
}

/// Every item, following `nextCursor` for at most `max_pages` pages; refreshes the cache.
pub(crate) async fn list_all<T: Listed>(
    peer: &Peer,
    state: &Arc<ClientState>,
) -> Result<Vec<T>, ClientError> {
    let cache = T::cache(&state.lists);
    // The generation is read before listing, so a change that arrives while listing leaves the
    // cache marked stale and triggers another refresh.
    let generation = cache.generation();
    cache.seen.fetch_max(generation, Ordering::SeqCst);
    let max_pages = state.options.max_pages;
    let mut all = Vec::new();
    let mut cursor = None;
    for _ in 0..max_pages {
        let (items, next) = T::split(list_page::<T>(peer, state, cursor).await?);
        all.extend(items);
        match next {
            Some(c) => cursor = Some(c),
            None => {
                cache.store(generation, all.clone());
                T::stored(state, &all);
                return Ok(all);
            }
        }
    }
    Err(ClientError::TooManyPages {
        method: T::KIND.method(),
        pages: max_pages,
    })
}

fn closed() -> ClientError {
    ClientError::NotReady("session closed")
}

/// Waits for a change of list `T` the cache does not reflect, then returns the fresh list.
///
/// Without auto-refresh: waits until the change generation passes the one the latest listing
/// started at, then lists. With auto-refresh: waits for a change past what the cache reflects,
/// then for the background refresh (listing itself only when none is running).
pub(crate) async fn changed<T: Listed>(
    peer: &Peer,
    state: &Arc<ClientState>,
) -> Result<Vec<T>, ClientError> {
    let cache = T::cache(&state.lists);
    let mut refreshed = cache.refreshed.subscribe();
    let baseline = if state.options.auto_refresh {
        refreshed.borrow_and_update().generation
    } else {
        cache.seen.load(Ordering::SeqCst)
    };
    let mut changes = cache.changes.subscribe();
    let target = loop {
        let g = *changes.borrow_and_update();
        if g > baseline {
            break g;
        }
        tokio::select! {
            r = changes.changed() => r.map_err(|_| closed())?,
            _ = peer.closed() => return Err(closed()),
        }
    };
    if state.options.auto_refresh {
        // Only an error reported after this waiter started counts.
        let mut woke = false;
        loop {
            {
                let r = refreshed.borrow_and_update();
                if r.generation >= target {
                    if let Some(items) = cache.items() {
                        return Ok(items);
                    }
                } else if let (true, Some(e)) = (woke, &r.error) {
                    return Err(e.clone());
                }
            }
            if !cache.refreshing.load(Ordering::SeqCst) && refreshed.borrow().generation < target {
                break;
            }
            tokio::select! {
                r = refreshed.changed() => r.map_err(|_| closed())?,
                _ = peer.closed() => return Err(closed()),
            }
            woke = true;
        }
    }
    list_all::<T>(peer, state).await
}

/// Records a `list_changed` notification for `T`: bumps the generation and, in auto-refresh mode,
/// re-lists a cache that has been filled before, in the background.
pub(crate) fn note_change<T: Listed>(peer: &Peer, state: &Arc<ClientState>) {
    let cache = T::cache(&state.lists);
    // The refresh flag is raised before the generation moves, so a waiter that sees the change
    // also sees that a refresh is coming.
    if state.options.auto_refresh && cache.is_populated() {
        spawn_refresh::<T>(peer.unrelated(), state.clone());
    }
    cache.changes.send_modify(|g| *g += 1);
}

fn spawn_refresh<T: Listed>(peer: Peer, state: Arc<ClientState>) {
    let cache = T::cache(&state.lists);
    if cache
        .refreshing
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // The running refresh notices the new generation when it finishes.
        return;
    }
    tokio::spawn(async move {
        let cache = T::cache(&state.lists);
        loop {
            let generation = cache.generation();
            if let Err(e) = list_all::<T>(&peer, &state).await {
                tracing::warn!(method = T::KIND.method(), error = %e, "background refresh failed");
                cache.refreshed.send_modify(|r| r.error = Some(e));
            }
            cache.refreshing.store(false, Ordering::SeqCst);
            let again = cache.generation() > generation
                && !peer.is_closed()
                && cache
                    .refreshing
                    .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok();
            if !again {
                break;
            }
        }
    });
}

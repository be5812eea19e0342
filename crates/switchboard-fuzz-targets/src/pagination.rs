//! The pagination cursor (`switchboard_server::pagination`), as every `*/list` request reads the
//! `cursor` a client sends back.
//!
//! Input: a page size, a list length, which issued cursor to edit and where, then text. The
//! target walks the list honestly (collecting every cursor the server issues), then offers
//! three hostile cursors: the text itself, an issued cursor with the text spliced in, and an
//! issued cursor for another list. Checked: a cursor is either refused with -32602 or gives
//! exactly the page of an issued cursor pointing at the same offset; a cursor issued for one
//! list is refused by another.

use switchboard_server::pagination::{Page, Paginator};
use switchboard_types::ErrorCode;
use switchboard_types::methods;

const LISTS: [&str; 4] = [
    methods::TOOLS_LIST,
    methods::PROMPTS_LIST,
    methods::RESOURCES_LIST,
    methods::RESOURCES_TEMPLATES_LIST,
];

/// The entry function.
pub fn run(data: &[u8]) {
    let [size, len, pick, at, rest @ ..] = data else {
        return;
    };
    let p = Paginator::new(usize::from(size % 16));
    let items: Vec<u32> = (0..u32::from(*len)).collect();
    let list = LISTS[usize::from(pick % 4)];

    // The honest walk: every page, with the cursor that led to it.
    let mut pages: Vec<(Option<String>, Page<u32>)> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = p
            .page(list, &items, cursor.as_deref())
            .expect("an issued cursor is accepted");
        let next = page.next_cursor.clone();
        pages.push((cursor, page));
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let walked: usize = pages.iter().map(|(_, pg)| pg.items.len()).sum();
    assert_eq!(walked, items.len(), "the walk visits every item once");

    let text = String::from_utf8_lossy(rest);
    check(&p, list, &items, &pages, &text);
    let issued: Vec<&String> = pages.iter().filter_map(|(c, _)| c.as_ref()).collect();
    if issued.is_empty() {
        return;
    }
    let original = issued[usize::from(*pick) % issued.len()];
    let mut edited = original.clone();
    let mut cut = usize::from(*at) % (edited.len() + 1);
    while !edited.is_char_boundary(cut) {
        cut -= 1;
    }
    edited.replace_range(cut..(cut + usize::from(at / 64)).min(edited.len()), &text);
    check(&p, list, &items, &pages, &edited);
    let other = LISTS[usize::from(pick % 4 + 1) % 4];
    assert!(
        p.page(other, &items, Some(original)).is_err(),
        "a cursor for {list} accepted for {other}"
    );
}

/// `cursor` is refused with -32602, or gives the page an issued cursor gives.
fn check(
    p: &Paginator,
    list: &str,
    items: &[u32],
    pages: &[(Option<String>, Page<u32>)],
    cursor: &str,
) {
    match p.page(list, items, Some(cursor)) {
        Err(e) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "refusal of {cursor:?}"),
        Ok(page) => assert!(
            pages
                .iter()
                .any(|(c, honest)| c.is_some() && *honest == page),
            "cursor {cursor:?} accepted, giving a page no issued cursor gives: {page:?}"
        ),
    }
}

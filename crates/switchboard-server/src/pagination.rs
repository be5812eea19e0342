//! Opaque, tamper-evident pagination cursors (SPEC-NOTES §8.6).
//!
//! A cursor carries an offset and a keyed hash of (list, offset) under a per-server random key.
//! A cursor that was forged, edited, or issued for another list is refused with -32602.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use switchboard_types::{ErrorCode, ErrorObject};

/// Default page size for `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// Issues and checks cursors for one server.
#[derive(Debug)]
pub struct Paginator {
    key: RandomState,
    page_size: usize,
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

impl Paginator {
    /// A paginator with a fresh random key.
    pub fn new(page_size: usize) -> Self {
        Paginator {
            key: RandomState::new(),
            page_size: page_size.max(1),
        }
    }

    /// The page size.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    fn mac(&self, list: &str, offset: u64) -> u64 {
        self.key.hash_one((list, offset))
    }

    fn encode(&self, list: &str, offset: u64) -> String {
        format!("{offset:x}-{:016x}", self.mac(list, offset))
    }

    fn decode(&self, list: &str, cursor: &str) -> Option<u64> {
        let (off, mac) = cursor.split_once('-')?;
        let offset = u64::from_str_radix(off, 16).ok()?;
        let mac = u64::from_str_radix(mac, 16).ok()?;
        (mac == self.mac(list, offset) && off.len() <= 16).then_some(offset)
    }

    /// The page of `items` that `cursor` points at (the first page without one).
    ///
    /// # Errors
    /// -32602 for a cursor this server did not issue for `list`, or one past the end.
    pub fn page<T: Clone>(
        &self,
        list: &str,
        items: &[T],
        cursor: Option<&str>,
    ) -> Result<Page<T>, ErrorObject> {
        let start = match cursor {
            None => 0,
            Some(c) => self
                .decode(list, c)
                .and_then(|o| usize::try_from(o).ok())
                .filter(|o| *o <= items.len())
                .ok_or_else(|| invalid_cursor(list))?,
        };
        let end = (start + self.page_size).min(items.len());
        let next_cursor = (end < items.len()).then(|| self.encode(list, end as u64));
        Ok(Page {
            items: items[start..end].to_vec(),
            next_cursor,
        })
    }
}

/// -32602 for a bad cursor.
pub fn invalid_cursor(list: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Invalid cursor for {list}"),
    )
    .with_data(serde_json::json!({"reason": "invalid_cursor", "method": list}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::methods;

    #[test]
    fn ut_11_pages_follow_cursors_to_the_end() {
        let p = Paginator::new(10);
        let items: Vec<u32> = (0..28).collect();
        let first = p.page(methods::RESOURCES_LIST, &items, None).unwrap();
        assert_eq!(first.items.len(), 10);
        let second = p
            .page(
                methods::RESOURCES_LIST,
                &items,
                first.next_cursor.as_deref(),
            )
            .unwrap();
        assert_eq!(second.items[0], 10);
        let third = p
            .page(
                methods::RESOURCES_LIST,
                &items,
                second.next_cursor.as_deref(),
            )
            .unwrap();
        assert_eq!(third.items.len(), 8);
        assert_eq!(third.next_cursor, None);
    }

    #[test]
    fn ut_12_forged_edited_or_foreign_cursors_are_refused() {
        let p = Paginator::new(10);
        let items: Vec<u32> = (0..28).collect();
        let c = p
            .page(methods::TOOLS_LIST, &items, None)
            .unwrap()
            .next_cursor
            .unwrap();
        assert!(
            p.page(methods::PROMPTS_LIST, &items, Some(&c)).is_err(),
            "issued for another list"
        );
        let edited = c.replacen('a', "b", 1).replacen("a-", "b-", 1);
        let forged = format!("14-{}", c.split_once('-').unwrap().1);
        for bad in [forged.as_str(), "garbage", "", "0-0", edited.as_str()] {
            if bad == c {
                continue;
            }
            let e = p.page(methods::TOOLS_LIST, &items, Some(bad)).unwrap_err();
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{bad}");
        }
        let other_server = Paginator::new(10);
        assert!(
            other_server
                .page(methods::TOOLS_LIST, &items, Some(&c))
                .is_err(),
            "a key per server"
        );
    }
}

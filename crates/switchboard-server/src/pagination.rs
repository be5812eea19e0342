//! Opaque, tamper-evident pagination cursors (SPEC-NOTES §8.6).
//!
//! A cursor carries an offset and an HMAC-SHA256 (cut to 128 bits) of (list, offset) under a
//! key: random per server by default, or derived from the server's shared key
//! ([`crate::ServerBuilder::shared_key`]) so that a cursor one replica issued is good on
//! every other, and after a restart (issue 25, finding 6). A cursor that was forged, edited,
//! or issued for another list is refused with -32602.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use switchboard_types::{ErrorCode, ErrorObject};

/// Default page size for `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// The hex digits of a cursor's MAC (128 bits).
const MAC_HEX: usize = 32;

/// Issues and checks cursors for one server.
pub struct Paginator {
    key: [u8; 32],
    page_size: usize,
}

impl std::fmt::Debug for Paginator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paginator")
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
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
            key: crate::modern::seal::random_key(),
            page_size: page_size.max(1),
        }
    }

    /// A paginator keyed from the server's shared key (the same cursors on every replica).
    pub(crate) fn with_key(page_size: usize, shared: &[u8; 32]) -> Self {
        Paginator {
            key: crate::modern::seal::derive_key(shared, "switchboard/cursor/v1"),
            page_size: page_size.max(1),
        }
    }

    /// The page size.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// The MAC of (list, offset), before it is finished.
    fn keyed(&self, list: &str, offset: u64) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(list.as_bytes());
        mac.update(&[0]);
        mac.update(&offset.to_be_bytes());
        mac
    }

    fn mac(&self, list: &str, offset: u64) -> String {
        let tag = self.keyed(list, offset).finalize().into_bytes();
        tag[..MAC_HEX / 2]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn encode(&self, list: &str, offset: u64) -> String {
        format!("{offset:x}-{}", self.mac(list, offset))
    }

    fn decode(&self, list: &str, cursor: &str) -> Option<u64> {
        let (off, mac) = cursor.split_once('-')?;
        if off.len() > 16 || mac.len() != MAC_HEX {
            return None;
        }
        let offset = u64::from_str_radix(off, 16).ok()?;
        // Compared in constant time through the MAC's own check.
        let tag: Vec<u8> = (0..MAC_HEX / 2)
            .map(|i| u8::from_str_radix(mac.get(2 * i..2 * i + 2)?, 16).ok())
            .collect::<Option<_>>()?;
        self.keyed(list, offset).verify_truncated_left(&tag).ok()?;
        // The canonical form only: no second spelling of the same cursor.
        (self.encode(list, offset) == cursor).then_some(offset)
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

    /// Issue 25, finding 6: replicas given one shared key accept each other's cursors (a
    /// page-2 cursor used to be refused by another replica, or after a restart).
    #[test]
    fn finding_6_replicas_sharing_a_key_accept_each_others_cursors() {
        let items: Vec<u32> = (0..25).collect();
        let shared = [7u8; 32];
        let a = Paginator::with_key(10, &shared);
        let b = Paginator::with_key(10, &shared);
        let c = a
            .page(methods::TOOLS_LIST, &items, None)
            .unwrap()
            .next_cursor
            .unwrap();
        assert_eq!(
            b.page(methods::TOOLS_LIST, &items, Some(&c)).unwrap().items,
            (10..20).collect::<Vec<_>>()
        );
        assert!(
            Paginator::with_key(10, &[8u8; 32])
                .page(methods::TOOLS_LIST, &items, Some(&c))
                .is_err()
        );
        assert!(b.page(methods::PROMPTS_LIST, &items, Some(&c)).is_err());
        // Another spelling of the same cursor (upper-case hex) is not accepted.
        assert!(
            b.page(methods::TOOLS_LIST, &items, Some(&c.to_uppercase()))
                .is_err()
        );
    }
}

//! What an HTTP transport learnt about how a request arrived, for handlers and layers: the
//! caller's validated token ([`AuthInfo`]) and an allow-list of HTTP request headers
//! ([`Arrival`]). Over stdio, and over HTTP without authorization or forwarded headers, there is
//! nothing.

use std::sync::Arc;

use super::AuthInfo;

/// Most headers an [`Arrival`] keeps; the rest are dropped.
pub const MAX_ARRIVAL_HEADERS: usize = 32;
/// Most bytes of one header value an [`Arrival`] keeps; a longer value is dropped whole (a cut
/// value would be a different value).
pub const MAX_ARRIVAL_HEADER_BYTES: usize = 1024;

/// The facts of the HTTP request that carried a message: the validated token's claims, when
/// the transport authorized it, and the request headers the transport was told to forward
/// (the Streamable HTTP server's `HttpConfig::with_forwarded_headers`), names lower-cased, at most
/// [`MAX_ARRIVAL_HEADERS`] of at most [`MAX_ARRIVAL_HEADER_BYTES`] each.
#[derive(Debug, Clone, Default)]
pub struct Arrival {
    auth: Option<Arc<AuthInfo>>,
    headers: Vec<(Box<str>, Box<str>)>,
}

impl Arrival {
    /// An arrival with the caller's `auth` and these `(name, value)` headers (the first of a
    /// repeated name wins; names are lower-cased; values that are not visible ASCII are
    /// dropped).
    pub fn new<N: AsRef<str>, V: AsRef<str>>(
        auth: Option<Arc<AuthInfo>>,
        headers: impl IntoIterator<Item = (N, V)>,
    ) -> Self {
        let mut kept: Vec<(Box<str>, Box<str>)> = Vec::new();
        for (name, value) in headers {
            if kept.len() >= MAX_ARRIVAL_HEADERS {
                break;
            }
            let name = name.as_ref().to_ascii_lowercase();
            let value = value.as_ref();
            if value.len() > MAX_ARRIVAL_HEADER_BYTES
                || !value
                    .bytes()
                    .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
                || kept.iter().any(|(n, _)| **n == *name)
            {
                continue;
            }
            kept.push((name.into(), value.into()));
        }
        Arrival {
            auth,
            headers: kept,
        }
    }

    /// The caller's validated token claims, if the transport authorized the request.
    pub fn auth(&self) -> Option<&AuthInfo> {
        self.auth.as_deref()
    }

    /// A forwarded header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| &**v)
    }

    /// Every forwarded header, in the order received.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().map(|(n, v)| (&**n, &**v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrival_keeps_at_most_its_bound_of_headers_and_drops_long_values() {
        let many = (0..MAX_ARRIVAL_HEADERS + 5).map(|i| (format!("X-H{i}"), "v".to_owned()));
        let a = Arrival::new(None, many);
        assert_eq!(a.headers().count(), MAX_ARRIVAL_HEADERS);
        assert_eq!(a.header("x-h0"), Some("v"));
        assert_eq!(a.header(&format!("x-h{}", MAX_ARRIVAL_HEADERS)), None);

        let long = "a".repeat(MAX_ARRIVAL_HEADER_BYTES + 1);
        let fits = "a".repeat(MAX_ARRIVAL_HEADER_BYTES);
        let a = Arrival::new(
            None,
            [
                ("long", long.as_str()),
                ("fits", fits.as_str()),
                ("ctl", "a\u{1}b"),
            ],
        );
        assert_eq!(a.header("long"), None);
        assert_eq!(
            a.header("FITS").map(str::len),
            Some(MAX_ARRIVAL_HEADER_BYTES)
        );
        assert_eq!(a.header("ctl"), None, "control characters are not kept");
    }

    #[test]
    fn the_first_of_a_repeated_header_wins() {
        let a = Arrival::new(None, [("X-Id", "1"), ("x-id", "2")]);
        assert_eq!(a.header("x-id"), Some("1"));
    }
}

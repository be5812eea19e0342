//! The fetch policy: which URLs the client may fetch during authorization (`[AU-17]`,
//! SECURITY-NOTES §4, [SEC-SSRF-1]..[SEC-SSRF-6]).
//!
//! Every URL a server hands us (the `resource_metadata` of a challenge, the authorization
//! servers of the resource metadata, every endpoint of the authorization server's metadata)
//! is checked before it is fetched: `https` only, and no private, loopback, link-local or
//! unique-local address, unless the user allowed loopback for development, which then also
//! allows `http` to a loopback host. Host names are checked after resolution, by the resolver
//! the fetching client connects with (`GuardedResolver`), so the address checked is the one
//! connected to (no DNS rebinding between check and use). IP literals are parsed by the `url`
//! crate, which normalises octal, hexadecimal and decimal IPv4 forms.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use url::{Host, Url};

use super::error::{OAuthError, shown};

/// Which targets OAuth fetches may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UrlPolicy {
    /// Allow loopback hosts (`localhost`, 127.0.0.0/8, `::1`), over `http` too. For
    /// development and tests only.
    pub allow_loopback: bool,
    /// Allow private and unique-local addresses (10/8, 172.16/12, 192.168/16, 100.64/10,
    /// fc00::/7), over `https` only. Link-local (169.254/16, fe80::/10: cloud metadata) is
    /// never allowed.
    pub allow_private: bool,
}

impl UrlPolicy {
    /// The strict policy: public `https` targets only.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Loopback allowed, over `http` too: for development and tests.
    pub fn loopback_for_development() -> Self {
        Self {
            allow_loopback: true,
            allow_private: false,
        }
    }

    /// The policy for the MCP server at `server`: loopback allowed when the user named a
    /// server on this machine (a loopback IP literal, or `localhost` and its subdomains, which
    /// always resolve to loopback, RFC 6761 §6.3), since its metadata and authorization server
    /// are then on this machine too; strict otherwise (other names are not trusted to).
    pub(crate) fn for_server(server: &Url) -> Self {
        let loopback = match server.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            Some(Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                d == "localhost" || d.ends_with(".localhost")
            }
            None => false,
        };
        if loopback {
            Self::loopback_for_development()
        } else {
            Self::strict()
        }
    }

    /// Checks a URL before any request to it: scheme, user info, and the host when it is an
    /// IP literal or `localhost`. Other host names are checked when resolved.
    ///
    /// # Errors
    /// [`OAuthError::Refused`] with the reason.
    pub fn check_url(&self, url: &Url) -> Result<(), OAuthError> {
        let refuse = |why: &str| {
            Err(OAuthError::Refused {
                url: shown(url.as_str()),
                why: why.to_owned(),
            })
        };
        if !url.username().is_empty() || url.password().is_some() {
            return refuse("the URL carries user info");
        }
        let loopback = match url.host() {
            None => return refuse("the URL has no host"),
            Some(Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                d == "localhost" || d.ends_with(".localhost")
            }
            Some(Host::Ipv4(ip)) => {
                if let Err(why) = self.check_ip(IpAddr::V4(ip)) {
                    return refuse(&why.to_string());
                }
                ip.is_loopback()
            }
            Some(Host::Ipv6(ip)) => {
                if let Err(why) = self.check_ip(IpAddr::V6(ip)) {
                    return refuse(&why.to_string());
                }
                ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
        };
        if loopback && !self.allow_loopback {
            return refuse(
                "a loopback host (allowed only for development: allow loopback explicitly)",
            );
        }
        match url.scheme() {
            "https" => Ok(()),
            "http" if loopback && self.allow_loopback => Ok(()),
            "http" => refuse("http is allowed for loopback hosts in development only; use https"),
            _ => refuse("only https URLs are fetched"),
        }
    }

    /// Whether an address may be connected to.
    ///
    /// # Errors
    /// The address and the refused range it falls in.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), RefusedAddress> {
        let range = match classify(ip) {
            Class::Public => return Ok(()),
            Class::Loopback if self.allow_loopback => return Ok(()),
            Class::Private if self.allow_private => return Ok(()),
            Class::Loopback => AddressRange::Loopback,
            Class::Private => AddressRange::Private,
            Class::LinkLocal => AddressRange::LinkLocal,
            Class::Special => AddressRange::Special,
        };
        Err(RefusedAddress { ip, range })
    }
}

/// Checks the redirect URI the client registers and sends (`[AU-17]`, `[SEC-URL-8]`): `https`,
/// or `http` to a loopback host (`localhost`, 127.0.0.0/8, `::1`), where a native client
/// listens for the redirect.
///
/// # Errors
/// [`OAuthError::Config`] with the reason.
pub(crate) fn check_redirect_uri(uri: &str) -> Result<(), OAuthError> {
    let refuse = |why: &str| {
        Err(OAuthError::Config(format!(
            "the redirect URI {} is refused: {why}",
            shown(uri)
        )))
    };
    let Ok(url) = Url::parse(uri) else {
        return refuse("not a URL");
    };
    let loopback = match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if loopback => Ok(()),
        _ => refuse("it must be https, or http to a loopback host"),
    }
}

/// An address [`UrlPolicy::check_ip`] refuses, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{ip} is {range}")]
pub struct RefusedAddress {
    /// The address.
    pub ip: IpAddr,
    /// The refused range it falls in.
    pub range: AddressRange,
}

/// A range of addresses the policy refuses unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressRange {
    /// Loopback (allowed with [`UrlPolicy::allow_loopback`], for development).
    Loopback,
    /// Private (RFC 1918, unique local; allowed with [`UrlPolicy::allow_private`]).
    Private,
    /// Link-local (never allowed).
    LinkLocal,
    /// Not a unicast public address (never allowed).
    Special,
}

impl std::fmt::Display for AddressRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AddressRange::Loopback => "a loopback address",
            AddressRange::Private => "a private address",
            AddressRange::LinkLocal => "a link-local address",
            AddressRange::Special => "not a unicast public address",
        })
    }
}

/// The range an address falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Public,
    Loopback,
    Private,
    LinkLocal,
    /// Unspecified, broadcast, multicast, documentation and other reserved ranges.
    Special,
}

fn classify(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_link_local() {
        Class::LinkLocal
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Class::Private
    } else if ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
    {
        Class::Special
    } else {
        Class::Public
    }
}

/// The IPv4 address in two 16-bit segments.
fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
}

fn classify_v6(ip: Ipv6Addr) -> Class {
    let s = ip.segments();
    let first = s[0];
    // Forms that carry an IPv4 address reach that address: they are what it is (issue 25,
    // finding 12). NAT64's well-known prefix 64:ff9b::/96 (RFC 6052) and 6to4's 2002::/16
    // (RFC 3056) are judged by the address they embed; the local-use NAT64 prefix
    // 64:ff9b:1::/48 (RFC 8215) may embed one anywhere, and Teredo's 2001::/32 (RFC 4380)
    // hides the client's, so both are refused.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded_v4(s[6], s[7]));
    }
    if first == 0x2002 {
        return classify_v4(embedded_v4(s[1], s[2]));
    }
    if s[..3] == [0x64, 0xff9b, 1] || s[..2] == [0x2001, 0] || s[..2] == [0x2001, 0xdb8] {
        return Class::Special;
    }
    if ip.is_loopback() {
        Class::Loopback
    } else if first & 0xffc0 == 0xfe80 {
        Class::LinkLocal
    } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
        // Unique local, and the deprecated site-local fec0::/10.
        Class::Private
    } else if ip.is_unspecified() || ip.is_multicast() || ip.to_ipv4().is_some() {
        // `to_ipv4` here is the deprecated IPv4-compatible form (::a.b.c.d): refused.
        Class::Special
    } else {
        Class::Public
    }
}

/// The resolver of the OAuth fetching client: resolves with the system's resolver, then drops
/// every address the policy refuses; a name left with none fails to resolve.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    pub(crate) policy: UrlPolicy,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refused = None;
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| match policy.check_ip(a.ip()) {
                    Ok(()) => true,
                    Err(why) => {
                        refused = Some(why);
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let why = refused.map_or_else(|| "no address".to_owned(), |r| r.to_string());
                return Err(format!("{host} resolves to no allowed address ({why})").into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

impl GuardedResolver {
    pub(crate) fn shared(policy: UrlPolicy) -> Arc<Self> {
        Arc::new(Self { policy })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_server_named_on_loopback_implies_loopback_oauth_and_no_other_does() {
        for u in [
            "http://127.0.0.1:8080/mcp",
            "http://127.9.9.9/mcp",
            "http://[::1]:3000/mcp",
            "http://localhost:8080/mcp",
            "http://LocalHost./mcp",
            "http://api.localhost/mcp",
        ] {
            let policy = UrlPolicy::for_server(&Url::parse(u).unwrap());
            assert_eq!(policy, UrlPolicy::loopback_for_development(), "{u}");
        }
        for u in [
            "https://mcp.example.com/mcp",
            "http://10.0.0.1/mcp",
            "http://192.168.1.2/mcp",
            "http://[fe80::1]/mcp",
            "http://localhost.example.com/mcp",
            "http://mylocalhost/mcp",
            "http://0.0.0.0/mcp",
        ] {
            assert_eq!(
                UrlPolicy::for_server(&Url::parse(u).unwrap()),
                UrlPolicy::strict(),
                "{u}"
            );
        }
    }

    fn check(policy: UrlPolicy, url: &str) -> Result<(), String> {
        policy
            .check_url(&Url::parse(url).unwrap())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn au17_ssrf_guard_refuses_private_link_local_and_loopback() {
        let strict = UrlPolicy::strict();
        for url in [
            "https://10.0.0.1/.well-known/oauth-protected-resource",
            "https://169.254.169.254/latest/meta-data/",
            "https://[::1]/x",
            "https://127.0.0.1/x",
            "https://0x7f.1/x",
            "https://2130706433/x",
            "https://[::ffff:169.254.169.254]/x",
            "https://[fe80::1]/x",
            "https://[fd00::1]/x",
            "https://192.168.1.1/x",
            "https://172.16.0.1/x",
            "https://0.0.0.0/x",
            "https://localhost/x",
            "http://example.com/x",
            "file:///etc/passwd",
            "https://u:p@example.com/x",
        ] {
            assert!(check(strict, url).is_err(), "{url} must be refused");
        }
        assert!(check(strict, "https://auth.example.com/x").is_ok());
        assert!(check(strict, "https://8.8.8.8/x").is_ok());
    }

    /// Issue 25, finding 12: the IPv6 forms that carry an IPv4 address are judged by it.
    #[test]
    fn finding_12_nat64_6to4_and_teredo_forms_of_private_addresses_are_refused() {
        let strict = UrlPolicy::strict();
        for url in [
            "https://[64:ff9b::a9fe:a9fe]/x", // NAT64 169.254.169.254
            "https://[64:ff9b::7f00:1]/x",    // NAT64 127.0.0.1
            "https://[64:ff9b::a00:1]/x",     // NAT64 10.0.0.1
            "https://[64:ff9b:1::a00:1]/x",   // local-use NAT64
            "https://[2002:a9fe:a9fe::1]/x",  // 6to4 169.254.169.254
            "https://[2002:c0a8:101::1]/x",   // 6to4 192.168.1.1
            "https://[2002:7f00:1::]/x",      // 6to4 127.0.0.1
            "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x", // Teredo
            "https://[2001:db8::1]/x",        // documentation
            "https://[fec0::1]/x",            // site-local
        ] {
            assert!(check(strict, url).is_err(), "{url} must be refused");
        }
        assert!(
            strict
                .check_ip("64:ff9b::a9fe:a9fe".parse().unwrap())
                .is_err(),
            "a resolved address is judged the same way"
        );
        // The same forms of a public address are public.
        assert!(check(strict, "https://[64:ff9b::808:808]/x").is_ok());
        assert!(check(strict, "https://[2002:808:808::1]/x").is_ok());
    }

    #[test]
    fn au17_sec_url_8_redirect_uris_are_https_or_loopback() {
        for ok in [
            "https://app.example/callback",
            "http://127.0.0.1:8123/callback",
            "http://localhost/callback",
            "http://[::1]:9/cb",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://app.example/callback",
            "http://10.0.0.1/callback",
            "javascript:alert(1)",
            "com.example.app:/callback",
            "file:///tmp/cb",
            "not a url",
        ] {
            let e = check_redirect_uri(bad).unwrap_err();
            assert!(matches!(e, OAuthError::Config(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn au17_sec_url_8_loopback_only_when_allowed_and_http_only_for_loopback() {
        let dev = UrlPolicy::loopback_for_development();
        assert!(check(dev, "http://127.0.0.1:9/x").is_ok());
        assert!(check(dev, "http://[::1]:9/x").is_ok());
        assert!(check(dev, "http://localhost:9/x").is_ok());
        assert!(check(dev, "https://127.0.0.1/x").is_ok());
        assert!(check(dev, "http://10.0.0.1/x").is_err());
        assert!(check(dev, "https://169.254.169.254/x").is_err());
        assert!(
            check(dev, "http://example.com/x").is_err(),
            "http off loopback"
        );
        let private = UrlPolicy {
            allow_private: true,
            ..UrlPolicy::strict()
        };
        assert!(check(private, "https://10.0.0.1/x").is_ok());
        assert!(check(private, "https://169.254.169.254/x").is_err());
        assert!(check(private, "http://10.0.0.1/x").is_err());
    }

    #[tokio::test]
    async fn the_resolver_drops_refused_addresses() {
        use reqwest::dns::Resolve as _;
        let r = GuardedResolver {
            policy: UrlPolicy::strict(),
        };
        let name: reqwest::dns::Name = "localhost".parse().unwrap();
        assert!(r.resolve(name).await.is_err());
        let r = GuardedResolver {
            policy: UrlPolicy::loopback_for_development(),
        };
        let name: reqwest::dns::Name = "localhost".parse().unwrap();
        assert!(r.resolve(name).await.is_ok());
    }
}

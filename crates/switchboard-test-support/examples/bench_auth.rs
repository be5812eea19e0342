//! The authorization server of the benchmark's `auth` rows (bench/bench.py): a [`TestIssuer`]
//! on 127.0.0.1 whose tokens `switchboard serve --http --auth-issuer URL` accepts, and the
//! credentials `switchboard-load` sends.
//!
//! Prints the issuer's URL on the first line of stdout, then for each line `MCP_URL P D DIR`
//! read from stdin writes `DIR/bearer` (an access token for the audience MCP_URL) and
//! `DIR/dpop` (a token bound to a new ES256 key, then P proofs of that key for `POST MCP_URL`
//! and D for `DELETE MCP_URL`, after `DELETE `, one a line, each with its own `jti`: the
//! `--dpop-proofs` file of `switchboard-load`), and prints `ok` (or `error: ...`). Serves the
//! issuer's JWKS until stdin closes.
//!
//! `cargo run -p switchboard-test-support --features oauth --example bench_auth`

use std::io::{BufRead as _, Write as _};
use std::path::Path;

use serde_json::json;
use switchboard_test_support::dpop::DpopTestKey;
use switchboard_test_support::issuer::TestIssuer;

/// The most proofs one line may ask for (the server keeps every `jti` it has seen: its replay
/// bound is 65,536 entries by bytes).
const MAX_PROOFS: usize = 60_000;

/// `MCP_URL P D DIR`, the counts within [`MAX_PROOFS`].
fn parse(line: &str) -> Result<(&str, usize, usize, &str), String> {
    let mut words = line.split_whitespace();
    let mut next = || {
        words
            .next()
            .ok_or(format!("expected `MCP_URL P D DIR`, got `{line}`"))
    };
    let (url, posts, deletes, dir) = (next()?, next()?, next()?, next()?);
    let count = |n: &str| n.parse::<usize>().map_err(|e| format!("{n}: {e}"));
    let (posts, deletes) = (count(posts)?, count(deletes)?);
    if posts.saturating_add(deletes) > MAX_PROOFS {
        return Err(format!("P + D is at most {MAX_PROOFS}"));
    }
    Ok((url, posts, deletes, dir))
}

/// Writes a credentials file readable by its owner only (0600), replacing whatever was at
/// `path` (a link planted there is removed, never followed).
fn put(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}

fn write(issuer: &TestIssuer, line: &str) -> Result<(), String> {
    let (url, posts, deletes, dir) = parse(line)?;
    let dir = Path::new(dir);
    let claims = issuer.claims("bench", url, "mcp:basic");
    let bearer = issuer.token(&claims);
    let key = DpopTestKey::new();
    let mut bound = claims;
    bound["cnf"] = json!({"jkt": key.jkt});
    let token = issuer.token(&bound);
    let mut dpop = String::with_capacity((posts + deletes + 1) * 600);
    dpop.push_str(&token);
    dpop.push('\n');
    for _ in 0..posts {
        dpop.push_str(&key.proof("POST", url, &token));
        dpop.push('\n');
    }
    for _ in 0..deletes {
        dpop.push_str("DELETE ");
        dpop.push_str(&key.proof("DELETE", url, &token));
        dpop.push('\n');
    }
    let put =
        |name: &str, text: &str| put(&dir.join(name), text).map_err(|e| format!("{name}: {e}"));
    put("bearer", &format!("{bearer}\n"))?;
    put("dpop", &dpop)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let issuer = TestIssuer::start().await;
    println!("{}", issuer.url());
    let issuer = std::sync::Arc::new(issuer);
    let serving = issuer.clone();
    // stdin is read on a blocking thread; the issuer answers JWKS fetches on this one.
    let lines = tokio::task::spawn_blocking(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let answer = match write(&serving, &line) {
                Ok(()) => "ok".to_owned(),
                Err(e) => format!("error: {e}"),
            };
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{answer}")
                .and_then(|()| out.flush())
                .is_err()
            {
                break;
            }
        }
    });
    let _ = lines.await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_proofs_asked_for_are_bounded() {
        let at = format!("http://127.0.0.1:1/mcp {MAX_PROOFS} 0 /tmp");
        assert_eq!(parse(&at).unwrap().1, MAX_PROOFS);
        let past = format!("http://127.0.0.1:1/mcp {MAX_PROOFS} 1 /tmp");
        assert!(parse(&past).unwrap_err().contains("at most"));
        assert!(parse(&format!("u {} {} d", usize::MAX, usize::MAX)).is_err());
        assert!(parse("u 1 1").is_err());
    }

    #[test]
    fn credentials_are_written_for_the_owner_only_and_never_through_a_link() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("bench-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("elsewhere");
        std::fs::write(&target, "untouched").unwrap();
        let path = dir.join("bearer");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        put(&path, "token").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "token");
        let mode = std::fs::symlink_metadata(&path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        put(&path, "again").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "again");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! `switchboard serve --http --auth-issuer` against a test issuer on 127.0.0.1: the metadata,
//! the 401 challenge, a good token, the step-up to `mcp:write`, and a bad issuer URL refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use switchboard_test_support::issuer::{TestIssuer, bearer_post_headers};

async fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut req = reqwest::Client::new().post(url).body(body.to_string());
    for (name, value) in bearer_post_headers(token, session, "2025-11-25") {
        req = req.header(name, value);
    }
    req.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn au_22_au_26_serve_auth_issuer_requires_and_scopes_tokens() {
    let issuer = TestIssuer::start().await;
    let served = tokio::task::block_in_place(|| {
        common::serve_http(&["--json-response", "--auth-issuer", issuer.url()])
    });
    let url = served.url.clone();
    let meta_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    let meta: Value =
        serde_json::from_str(&reqwest::get(&meta_url).await.unwrap().text().await.unwrap())
            .unwrap();
    assert_eq!(meta["resource"], url.as_str());
    assert_eq!(meta["authorization_servers"], json!([issuer.url()]));

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "cli-auth-test", "version": "1"}}});
    let r = post(&url, None, None, init.clone()).await;
    assert_eq!(r.status(), 401);
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(
        challenge.contains(&format!("resource_metadata=\"{meta_url}\"")),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"mcp:basic\""), "{challenge}");

    let basic = issuer.token(&issuer.claims("alice", &url, "mcp:basic"));
    let r = post(&url, Some(&basic), None, init).await;
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(&url, Some(&basic), Some(&sid), initialized)
            .await
            .status(),
        202
    );
    let write = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_scoped_write", "arguments": {}}});
    let r = post(&url, Some(&basic), Some(&sid), write.clone()).await;
    assert_eq!(r.status(), 403);
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp:basic mcp:write\""),
        "{challenge}"
    );
    let both = issuer.token(&issuer.claims("alice", &url, "mcp:basic mcp:write"));
    let r = post(&url, Some(&both), Some(&sid), write).await;
    let r: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Scoped write done for alice"
    );
}

#[test]
fn serve_refuses_a_plain_http_issuer_that_is_not_loopback() {
    let out = common::bin()
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "http://auth.example.com",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("https"), "{err}");
}

/// [`call_refused`] for the machine flow: `--oauth-client-credentials --client-id machine ARGS`.
fn machine_refused(args: &[&str]) -> String {
    let mut all = vec!["--oauth-client-credentials", "--client-id", "machine"];
    all.extend_from_slice(args);
    call_refused(&all)
}

/// `switchboard call ARGS tools/list` against a port nothing listens on: what it says on
/// stderr, after checking that it failed before sending anything (exit 2).
fn call_refused(args: &[&str]) -> String {
    let port = common::free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = common::bin()
        .args(["call", "--url", &url])
        .args(args)
        .arg("tools/list")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

#[test]
fn call_oauth_client_credentials_needs_a_secret_or_a_key() {
    let err = call_refused(&["--oauth-client-credentials", "--client-id", "machine"]);
    assert!(err.contains("--client-secret-file"), "{err}");
    assert!(err.contains("or --private-key"), "{err}");
    // The machine flow has no user: it cannot be combined with a user's flow.
    let err = call_refused(&[
        "--oauth-client-credentials",
        "--oauth-headless",
        "--client-id",
        "machine",
        "--client-secret",
        "s",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    // A secret and a key at once is ambiguous.
    let err = machine_refused(&["--client-secret", "s", "--private-key", "key.pem"]);
    assert!(err.contains("cannot be used with"), "{err}");
}

/// Issue 25, finding 15: the client secret need not be on the command line (where the
/// process list shows it): a file, or SWITCHBOARD_CLIENT_SECRET.
#[test]
fn finding_15_the_client_secret_comes_from_a_file_or_the_environment() {
    let dir = std::env::temp_dir().join(format!("sb-cli-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing");
    let err = machine_refused(&["--client-secret-file", missing.to_str().unwrap()]);
    assert!(err.contains("--client-secret-file"), "{err}");
    let empty = dir.join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let err = machine_refused(&["--client-secret-file", empty.to_str().unwrap()]);
    assert!(err.contains("is empty"), "{err}");
    // A file and a secret at once is ambiguous.
    let err = machine_refused(&[
        "--client-secret-file",
        empty.to_str().unwrap(),
        "--client-secret",
        "s",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    // The environment's secret counts as given (the flow then fails on the unreachable
    // server, not on a missing secret), and clap never prints its value.
    let port = common::free_port().to_string();
    let out = common::bin()
        .args(["call", "--url", &format!("http://127.0.0.1:{port}/mcp")])
        .args(["--oauth-client-credentials", "--client-id", "machine"])
        .env("SWITCHBOARD_CLIENT_SECRET", "s3cret-from-env")
        .arg("tools/list")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("needs --client-secret"), "{err}");
    assert!(!err.contains("s3cret-from-env"), "{err}");
    let help = common::bin()
        .args(["call", "--help"])
        .env("SWITCHBOARD_CLIENT_SECRET", "s3cret-from-env")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("SWITCHBOARD_CLIENT_SECRET") && !help.contains("s3cret-from-env"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 25, findings 6 and 15: `serve --store` needs the deployment secret every node
/// shares, from a file or the environment, never the command line.
#[test]
fn finding_6_serve_store_needs_the_deployment_secret() {
    let serve = |extra: &[&str], env: Option<&str>| {
        let mut cmd = common::bin();
        cmd.args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--store",
            "redis://127.0.0.1:1/0",
        ])
        .args(extra)
        .env_remove("SWITCHBOARD_SECRET");
        if let Some(v) = env {
            cmd.env("SWITCHBOARD_SECRET", v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = serve(&[], None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--store needs the deployment secret"), "{err}");
    let (code, err) = serve(&[], Some("too short"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("at least 32 bytes"), "{err}");
    // With a good secret it goes on, and fails on the Redis nobody runs at port 1.
    let (code, err) = serve(&[], Some(&"k".repeat(32)));
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("--store:"), "{err}");
}

#[test]
fn call_private_key_must_be_a_usable_pem_key() {
    let dir = std::env::temp_dir().join(format!("sb-cli-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.pem");
    let err = machine_refused(&["--private-key", missing.to_str().unwrap()]);
    assert!(err.contains("cannot read the private key"), "{err}");
    let garbage = dir.join("garbage.pem");
    std::fs::write(
        &garbage,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let err = machine_refused(&["--private-key", garbage.to_str().unwrap()]);
    assert!(err.contains("not usable"), "{err}");
    let err = machine_refused(&[
        "--private-key",
        garbage.to_str().unwrap(),
        "--private-key-alg",
        "HS256",
    ]);
    assert!(err.contains("asymmetric"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn au_10_call_client_metadata_url_must_be_https_with_a_path() {
    for bad in [
        "http://app.example.com/client.json",
        "https://app.example.com/",
        "not a url",
    ] {
        let err = call_refused(&["--oauth-headless", "--client-metadata-url", bad]);
        assert!(
            err.contains("must be an https URL with a path"),
            "{bad}: {err}"
        );
    }
    let err = call_refused(&["--client-metadata-url", "https://app.example.com/c.json"]);
    assert!(err.contains("need --oauth"), "{err}");
}

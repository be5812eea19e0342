//! Opaque access tokens through RFC 7662 token introspection.
//!
//! The token is POSTed (form-encoded, never in the URL) to the issuer's introspection endpoint
//! with the resource server's own client credentials (HTTP Basic). The answer must say
//! `active: true`, name our canonical resource URI in `aud` `[AU-21]`, name the configured
//! issuer in `iss` when it names one, and carry an `exp` that has not passed; `scope` gives the
//! scopes. Answers are not cached: every request is checked (`[SEC-SH-1]`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use url::Url;

use super::fetch;
use super::{
    AuthInfo, TokenError, TokenValidator, ValidateFuture, audiences_of, client_of, scopes_of,
    subject_of,
};

/// How an [`IntrospectionValidator`] reaches the introspection endpoint.
#[derive(Clone)]
#[non_exhaustive]
pub struct IntrospectionConfig {
    /// The introspection endpoint (RFC 7662 §2).
    pub endpoint: String,
    /// The issuer tokens must come from (checked against `iss` when the answer has one).
    pub issuer: String,
    /// Our canonical resource URI; the answer's `aud` must name it.
    pub audience: String,
    /// Our client id at the authorization server.
    pub client_id: String,
    /// Our client secret (HTTP Basic authentication), if we have one.
    pub client_secret: Option<String>,
    /// Deadline of one introspection (default 5 s).
    pub timeout: Duration,
    /// The largest answer read (default 64 KiB).
    pub max_document_bytes: usize,
    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub leeway: Duration,
}

impl std::fmt::Debug for IntrospectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionConfig")
            .field("endpoint", &self.endpoint)
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IntrospectionConfig {
    /// A configuration with the defaults above.
    pub fn new(
        endpoint: impl Into<String>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        IntrospectionConfig {
            endpoint: endpoint.into(),
            issuer: issuer.into(),
            audience: audience.into(),
            client_id: client_id.into(),
            client_secret,
            timeout: Duration::from_secs(5),
            max_document_bytes: 64 * 1024,
            leeway: Duration::from_secs(30),
        }
    }
}

/// Validates opaque tokens by RFC 7662 introspection (see the module docs).
#[derive(Debug)]
pub struct IntrospectionValidator {
    config: IntrospectionConfig,
    client: reqwest::Client,
}

impl IntrospectionValidator {
    /// A validator with `config`.
    pub fn new(config: IntrospectionConfig) -> Self {
        let client = fetch::client(config.timeout);
        IntrospectionValidator { config, client }
    }

    async fn check(&self, token: &str) -> Result<AuthInfo, TokenError> {
        let url = Url::parse(&self.config.endpoint).map_err(|_| {
            TokenError::Unavailable("the introspection endpoint is not a URL".into())
        })?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let req = self
            .client
            .post(url.clone())
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .basic_auth(&self.config.client_id, self.config.client_secret.as_ref())
            .body(body);
        let answer = fetch::json(
            req,
            &url,
            self.config.max_document_bytes,
            self.config.timeout,
        )
        .await
        .map_err(|e| TokenError::Unavailable(format!("introspection failed: {e}")))?;
        self.judge(answer, now())
    }

    /// Decides on an introspection answer at time `now` (seconds since the epoch).
    fn judge(&self, answer: Map<String, Value>, now: u64) -> Result<AuthInfo, TokenError> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenError::Invalid("inactive"));
        }
        let audience = audiences_of(&answer);
        if !audience.contains(&self.config.audience) {
            return Err(TokenError::Invalid("not issued for this resource"));
        }
        // `iss` is one string when present (RFC 7662 §2.2); an array naming ours among others
        // is refused like a wrong one.
        let issuer = match answer.get("iss") {
            Some(Value::String(iss)) if *iss == self.config.issuer => iss.clone(),
            Some(_) => return Err(TokenError::Invalid("wrong issuer")),
            None => self.config.issuer.clone(),
        };
        let leeway = self.config.leeway.as_secs();
        let exp = answer.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp.saturating_add(leeway) < now) {
            return Err(TokenError::Invalid("expired"));
        }
        if answer
            .get("nbf")
            .and_then(Value::as_u64)
            .is_some_and(|nbf| nbf > now.saturating_add(leeway))
        {
            return Err(TokenError::Invalid("not yet valid"));
        }
        let client_id = client_of(&answer);
        let subject = subject_of(&answer).ok_or(TokenError::Invalid("no subject"))?;
        Ok(AuthInfo {
            subject,
            scopes: scopes_of(&answer),
            client_id,
            issuer,
            audience,
            expires_at: exp,
            claims: answer,
        })
    }
}

impl TokenValidator for IntrospectionValidator {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        Box::pin(self.check(token))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v() -> IntrospectionValidator {
        IntrospectionValidator::new(IntrospectionConfig::new(
            "http://127.0.0.1:1/introspect",
            "http://127.0.0.1:1",
            "http://127.0.0.1:2/mcp",
            "rs",
            None,
        ))
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn au_21_introspection_answer_checks() {
        let ok = json!({"active": true, "aud": "http://127.0.0.1:2/mcp", "sub": "alice",
            "scope": "mcp:basic", "exp": 2000, "iss": "http://127.0.0.1:1", "client_id": "c"});
        let info = v().judge(obj(ok.clone()), 1000).unwrap_or_default();
        assert_eq!(info.subject, "alice");
        assert_eq!(info.scopes.to_string(), "mcp:basic");
        assert_eq!(info.client_id.as_deref(), Some("c"));
        let bad = |patch: Value| {
            let mut m = obj(ok.clone());
            for (k, v) in obj(patch) {
                if v.is_null() {
                    m.remove(&k);
                } else {
                    m.insert(k, v);
                }
            }
            v().judge(m, 1000).is_err()
        };
        assert!(bad(json!({"active": false})));
        assert!(bad(json!({"active": null})));
        assert!(bad(json!({"aud": "http://127.0.0.1:3/mcp"})));
        assert!(bad(json!({"aud": ["http://other"]})));
        assert!(bad(json!({"aud": null})));
        assert!(bad(json!({"iss": "http://evil"})));
        // Finding 4 of issue 25: an array naming ours among others is no issuer.
        assert!(bad(json!({"iss": ["http://evil", "http://127.0.0.1:1"]})));
        assert!(bad(json!({"exp": 100})));
        assert!(bad(json!({"nbf": 5000})));
        assert!(!bad(json!({"aud": ["x", "http://127.0.0.1:2/mcp"]})));
    }

    #[test]
    fn sec_sh_5_an_answer_without_sub_speaks_for_its_client() {
        let base = json!({"active": true, "aud": "http://127.0.0.1:2/mcp", "scope": "mcp:basic",
            "exp": 2000, "iss": "http://127.0.0.1:1"});
        let with = |extra: Value| {
            let mut m = obj(base.clone());
            m.extend(obj(extra));
            v().judge(m, 1000)
        };
        let info = with(json!({"client_id": "machine"})).unwrap_or_default();
        assert_eq!(info.subject, "machine");
        assert_eq!(info.client_id.as_deref(), Some("machine"));
        let info = with(json!({"azp": "machine"})).unwrap_or_default();
        assert_eq!(info.subject, "machine");
        assert_eq!(
            with(json!({})),
            Err(TokenError::Invalid("no subject")),
            "an answer naming no principal binds nothing"
        );
    }
}

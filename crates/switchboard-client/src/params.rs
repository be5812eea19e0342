//! A request as a command line gives it (what `switchboard call` sends): [`params_from_pairs`],
//! its params from its target and `key=value` pairs, shaped as the catalogue says the method
//! names its target; [`ClientSession::request_all`], a list followed to its last page.

use serde_json::{Map, Value, json};
use switchboard_types::catalogue::{self, Arguments, TargetKind};

use crate::error::ClientError;
use crate::session::ClientSession;

/// The most pages [`ClientSession::request_all`] follows.
const MAX_PAGES: usize = 1000;

impl ClientSession {
    /// `method` with `params`, followed through `nextCursor` (at most 1000 pages) when the
    /// catalogue names its list member (`tools/list`: `tools`; `skills/list`: `skills`) and `params` start at the first
    /// page (no `cursor`): one result whose list member holds every item. `None` for any
    /// other request.
    ///
    /// # Errors
    /// A page's request error.
    pub async fn request_all(
        &self,
        method: &str,
        params: Value,
    ) -> Option<Result<Value, ClientError>> {
        let key = request(method).and_then(|s| s.list_member)?;
        if params.get("cursor").is_some() {
            return None;
        }
        let (mut all, mut params) = (Vec::new(), params);
        for _ in 0..MAX_PAGES {
            let options = switchboard_jsonrpc::RequestOptions::default();
            let page: Value = match self.request(method, params.clone(), options).await {
                Ok(page) => page,
                Err(e) => return Some(Err(e)),
            };
            let items = page.get(key).and_then(Value::as_array);
            all.extend(items.into_iter().flatten().cloned());
            match page.get("nextCursor") {
                Some(c) => params["cursor"] = c.clone(),
                None => break,
            }
        }
        Some(Ok(json!({ key: all })))
    }
}

/// Why [`params_from_pairs`] made no params.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamsError {
    /// An argument without `=`.
    #[error("argument {0:?} is not key=value")]
    NotAPair(String),
    /// The method names its target and none was given (`name` or `URI`).
    #[error("{method} needs a {what}")]
    NoTarget {
        /// The method.
        method: String,
        /// `name` or `URI`.
        what: &'static str,
    },
}

/// The description of the request `method`, core or of a known extension (`skills/list`).
fn request(method: &str) -> Option<&'static catalogue::MethodSpec> {
    catalogue::describe(method).filter(|s| s.is_request())
}

/// `key=value` pairs as a map: each value as JSON when `json_values` and it parses (numbers,
/// booleans, objects), else as a string.
fn pairs_map<'a>(
    pairs: impl IntoIterator<Item = &'a str>,
    json_values: bool,
) -> Result<Map<String, Value>, ParamsError> {
    let mut out = Map::new();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| ParamsError::NotAPair(p.to_owned()))?;
        let value = match serde_json::from_str(v) {
            Ok(v) if json_values => v,
            _ => Value::String(v.to_owned()),
        };
        out.insert(k.to_owned(), value);
    }
    Ok(out)
}

/// The params of `method` naming `target` with the `key=value` `pairs`, as the catalogue says
/// the method names its target: `tools/call NAME k=v` (`{name, arguments}`, JSON argument
/// values), `prompts/get NAME k=v` (string arguments), `resources/read URI k=v` (`{uri, k}`;
/// also the skills extension's `skills/get` and `resources/directory/read`, described by
/// `catalogue::EXTENSIONS`). A method without a target (`logging/setLevel level=debug`) takes `target`
/// as a first pair, never dropped.
///
/// # Errors
/// A pair without `=`, or a method that names its target given none.
pub fn params_from_pairs(
    method: &str,
    target: Option<&str>,
    pairs: &[String],
) -> Result<Value, ParamsError> {
    let kind = request(method).and_then(|s| s.target);
    let pairs_iter = pairs.iter().map(String::as_str);
    let no_target = |what| ParamsError::NoTarget {
        method: method.to_owned(),
        what,
    };
    Ok(match (kind, target) {
        (Some(TargetKind::Name(kind)), Some(name)) => {
            let arguments = pairs_map(pairs_iter, kind == Arguments::Json)?;
            json!({"name": name, "arguments": arguments})
        }
        (Some(TargetKind::Uri), Some(uri)) => {
            let mut p = pairs_map(pairs_iter, true)?;
            p.insert("uri".into(), Value::String(uri.to_owned()));
            Value::Object(p)
        }
        (Some(TargetKind::Name(_)), None) => return Err(no_target("name")),
        (Some(TargetKind::Uri), None) => return Err(no_target("URI")),
        (None, target) => Value::Object(pairs_map(target.into_iter().chain(pairs_iter), true)?),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::methods;

    fn params(method: &str, target: Option<&str>, pairs: &[&str]) -> Result<Value, ParamsError> {
        let pairs: Vec<String> = pairs.iter().map(|p| (*p).to_owned()).collect();
        params_from_pairs(method, target, &pairs)
    }

    #[test]
    fn the_first_pair_of_an_untargeted_method_is_kept() {
        let p = params(methods::LOGGING_SET_LEVEL, Some("level=debug"), &[]).unwrap();
        assert_eq!(p, json!({"level": "debug"}));
        let p = params(methods::RESOURCES_LIST, Some("cursor=c1"), &["x=1"]).unwrap();
        assert_eq!(p, json!({"cursor": "c1", "x": 1}));
        assert!(params(methods::PING, Some("oops"), &[]).is_err());
        assert_eq!(params(methods::PING, None, &[]).unwrap(), json!({}));
    }

    #[test]
    fn targets_follow_the_catalogue() {
        let p = params(methods::TOOLS_CALL, Some("add"), &["a=1", "s=x"]).unwrap();
        assert_eq!(p, json!({"name": "add", "arguments": {"a": 1, "s": "x"}}));
        let p = params(methods::PROMPTS_GET, Some("p"), &["n=1"]).unwrap();
        assert_eq!(
            p,
            json!({"name": "p", "arguments": {"n": "1"}}),
            "prompt arguments are strings"
        );
        let p = params(methods::RESOURCES_SUBSCRIBE, Some("file:///a"), &[]).unwrap();
        assert_eq!(p, json!({"uri": "file:///a"}));
        let p = params(methods::SKILLS_GET, Some("skill://a/SKILL.md"), &[]).unwrap();
        assert_eq!(p, json!({"uri": "skill://a/SKILL.md"}));
        let err = params(methods::RESOURCES_UNSUBSCRIBE, None, &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{} needs a URI", methods::RESOURCES_UNSUBSCRIBE)
        );
        let err = params(methods::TOOLS_CALL, None, &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{} needs a name", methods::TOOLS_CALL)
        );
    }
}

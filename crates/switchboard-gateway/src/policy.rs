//! Who may use what: a [`Policy`] of ordered allow/deny [`Rule`]s on upstreams and tools, each
//! naming the token subjects and scopes it is for. The first rule that matches both the caller
//! and the item decides; when none does, the policy's default does.
//!
//! The form in the configuration file is on [`Policy`].

use serde::Deserialize;

/// Most rules in one policy (1,000; a configuration with more is refused).
pub(crate) const MAX_POLICY_RULES: usize = 1000;

/// What a rule, or the default, decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Effect {
    /// The item is listed and may be used.
    #[default]
    Allow,
    /// The item is left out of the lists and refused when used.
    Deny,
}

/// One allow or deny rule. Every key given must match (an absent key matches anything).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Rule {
    /// Allow or deny.
    pub effect: Effect,
    /// The token subjects (`sub`) the rule is for; `None`: anyone.
    #[serde(default)]
    pub subjects: Option<Vec<String>>,
    /// Scopes the token must hold, every one (empty: any caller).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The upstreams whose items the rule is about; `None`: every upstream.
    #[serde(default)]
    pub upstreams: Option<Vec<String>>,
    /// Tool names (the gateway's, with their prefix; `*` matches any run of characters);
    /// `None`: every item of the upstreams, prompts and resources included.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
}

impl Rule {
    /// A rule deciding `effect` for everyone and everything (narrow it with the fields).
    pub fn new(effect: Effect) -> Self {
        Rule {
            effect,
            ..Rule::default()
        }
    }

    /// Only for these token subjects.
    pub fn subjects<I: IntoIterator<Item = S>, S: Into<String>>(mut self, subjects: I) -> Self {
        self.subjects = Some(subjects.into_iter().map(Into::into).collect());
        self
    }

    /// Only for tokens holding every one of these scopes.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Only about the items of these upstreams.
    pub fn upstreams<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.upstreams = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Only about these tools (gateway names, `*` for any run of characters).
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, patterns: I) -> Self {
        self.tools = Some(patterns.into_iter().map(Into::into).collect());
        self
    }

    fn is_for(&self, caller: &Caller<'_>) -> bool {
        let subject_ok = match &self.subjects {
            None => true,
            Some(list) => caller.subject.is_some_and(|s| list.iter().any(|l| l == s)),
        };
        subject_ok
            && self
                .scopes
                .iter()
                .all(|want| caller.scopes.iter().any(|have| have == want))
    }

    fn about_upstream(&self, upstream: Option<&str>) -> bool {
        match &self.upstreams {
            None => true,
            Some(list) => upstream.is_some_and(|u| list.iter().any(|l| l == u)),
        }
    }
}

/// Who is asking: the token's subject and scopes (none without a token).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caller<'a> {
    /// The token's subject.
    pub(crate) subject: Option<&'a str>,
    /// The token's scopes.
    pub(crate) scopes: &'a [String],
}

/// The gateway's policy: rules in order, and the default when none matches.
///
/// In the configuration file:
///
/// ```toml
/// [policy]
/// default = "allow"              # what no rule decides: "allow" (the default) or "deny"
///
/// [[policy.rule]]
/// effect = "allow"               # or "deny"
/// scopes = ["calc:admin"]        # the token holds every one of these (absent: any caller)
/// subjects = ["alice"]           # the token's subject is one of these (absent: any caller)
/// upstreams = ["calc"]           # items of these upstreams (absent: every upstream)
/// tools = ["calc_delete*"]       # these tools, by the gateway's name; `*` matches any run
///                                # of characters (absent: every tool, prompt and resource)
/// ```
///
/// A rule with `tools` applies to tools only; one without applies to everything of its
/// upstreams (tools, prompts, resources and templates). A caller without a token (stdio, or
/// HTTP without `--auth-issuer`) has no subject and no scopes: rules naming `subjects` or
/// `scopes` never match it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Policy {
    /// What no rule decides.
    #[serde(default)]
    pub default: Effect,
    /// The rules, first match wins.
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

impl Policy {
    /// A policy of `rules` with `default` for what none of them decides.
    pub fn new(default: Effect, rules: Vec<Rule>) -> Self {
        Policy { default, rules }
    }

    /// Whether the policy lets everyone use everything (no rule, default allow): the gateway
    /// then skips the checks.
    pub(crate) fn is_open(&self) -> bool {
        self.rules.is_empty() && self.default == Effect::Allow
    }

    /// Whether `caller` may see and call tool `tool` (the gateway's name) of `upstream`
    /// (`None`: a tool of the gateway's own, such as `search_tools`).
    pub(crate) fn allows_tool(
        &self,
        caller: &Caller<'_>,
        upstream: Option<&str>,
        tool: &str,
    ) -> bool {
        self.decide(caller, upstream, Some(tool))
    }

    /// Whether `caller` may see and use the prompts, resources and templates of `upstream`.
    pub(crate) fn allows_upstream(&self, caller: &Caller<'_>, upstream: &str) -> bool {
        self.decide(caller, Some(upstream), None)
    }

    fn decide(&self, caller: &Caller<'_>, upstream: Option<&str>, tool: Option<&str>) -> bool {
        let hit = self.rules.iter().find(|r| {
            r.is_for(caller)
                && r.about_upstream(upstream)
                && match (&r.tools, tool) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(patterns), Some(t)) => patterns.iter().any(|p| glob(p, t)),
                }
        });
        hit.map_or(self.default, |r| r.effect) == Effect::Allow
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (none included).
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller<'a>(subject: Option<&'a str>, scopes: &'a [String]) -> Caller<'a> {
        Caller { subject, scopes }
    }

    #[test]
    fn globs_match_runs_of_characters() {
        assert!(glob("calc_*", "calc_add"));
        assert!(glob("calc_*", "calc_"));
        assert!(!glob("calc_*", "calx_add"));
        assert!(glob("*_delete*", "files_delete_all"));
        assert!(!glob("*_delete*", "files_remove"));
        assert!(glob("a*b*c", "abc"));
        assert!(!glob("a*bc", "abc_"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
        assert!(glob("*", ""));
        assert!(!glob("ab*ab", "ab"));
    }

    #[test]
    fn the_first_matching_rule_decides_and_the_default_the_rest() {
        let admin = vec!["calc:admin".to_owned()];
        let none: Vec<String> = Vec::new();
        let policy = Policy::new(
            Effect::Allow,
            vec![
                Rule {
                    scopes: admin.clone(),
                    upstreams: Some(vec!["calc".into()]),
                    ..Rule::new(Effect::Allow)
                },
                Rule {
                    upstreams: Some(vec!["calc".into()]),
                    tools: Some(vec!["calc_delete*".into()]),
                    ..Rule::new(Effect::Deny)
                },
                Rule {
                    subjects: Some(vec!["mallory".into()]),
                    ..Rule::new(Effect::Deny)
                },
            ],
        );
        // Holders of calc:admin may do anything with calc.
        let a = caller(Some("alice"), &admin);
        assert!(policy.allows_tool(&a, Some("calc"), "calc_delete_all"));
        // Others may not delete, but may add, and see calc's prompts.
        let b = caller(Some("bob"), &none);
        assert!(!policy.allows_tool(&b, Some("calc"), "calc_delete_all"));
        assert!(policy.allows_tool(&b, Some("calc"), "calc_add"));
        assert!(policy.allows_upstream(&b, "calc"));
        // Mallory may use nothing, but an admin token decides calc first.
        let m = caller(Some("mallory"), &none);
        assert!(!policy.allows_tool(&m, Some("text"), "text_add"));
        assert!(!policy.allows_upstream(&m, "text"));
        let m_admin = caller(Some("mallory"), &admin);
        assert!(policy.allows_tool(&m_admin, Some("calc"), "calc_add"));
        // No token: no subject, no scopes.
        let anon = caller(None, &none);
        assert!(!policy.allows_tool(&anon, Some("calc"), "calc_delete_x"));
        assert!(policy.allows_tool(&anon, None, "search_tools"));
    }

    #[test]
    fn a_deny_default_allows_only_what_a_rule_allows() {
        let read = vec!["files:read".to_owned()];
        let policy = Policy::new(
            Effect::Deny,
            vec![Rule {
                scopes: read.clone(),
                upstreams: Some(vec!["files".into()]),
                ..Rule::new(Effect::Allow)
            }],
        );
        assert!(!policy.is_open());
        assert!(policy.allows_tool(&caller(Some("x"), &read), Some("files"), "files_get"));
        assert!(!policy.allows_tool(&caller(Some("x"), &read), Some("calc"), "calc_add"));
        assert!(!policy.allows_tool(&caller(Some("x"), &[]), Some("files"), "files_get"));
        assert!(Policy::default().is_open());
    }
}

//! The URI template matcher (`switchboard_server::uri_template`), as `resources/read` matches a
//! client's URI against the server's resource templates.
//!
//! Input, split at line feeds: a template, a URI to match, then values for the template's
//! variables (in order; missing ones default to `v`). Checked:
//! * a template that parses gives back its text, and expands;
//! * a URI that matches binds exactly the template's variables, each to a non-empty value;
//! * a URI expanded from values, when no character of their encoded forms occurs in the
//!   template's literal text (so that the split is unambiguous), matches back to those values.

use std::collections::{BTreeMap, BTreeSet};

use switchboard_server::UriTemplate;

/// The entry function.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let template = lines.next().unwrap_or_default();
    let uri = lines.next().unwrap_or_default();
    let values: Vec<&str> = lines.collect();
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    assert_eq!(t.as_str(), template);
    let names: BTreeSet<String> = t.variables().map(str::to_owned).collect();
    if let Some(vars) = t.matches(uri) {
        check_bindings(&names, &vars, uri);
    }

    let mut vars = BTreeMap::new();
    for (i, name) in t.variables().enumerate() {
        let v = values
            .get(i)
            .copied()
            .filter(|v| !v.is_empty())
            .unwrap_or("v");
        vars.entry(name.to_owned()).or_insert_with(|| v.to_owned());
    }
    let expanded = t.expand(&vars);
    // The literal text is the template without its variables.
    let literal: BTreeSet<char> = strip_variables(template).chars().collect();
    let encoded = encoded_chars(&t, &vars);
    if encoded.is_disjoint(&literal) {
        assert_eq!(
            t.matches(&expanded),
            Some(vars),
            "{template:?} expanded to {expanded:?} does not match back"
        );
    }
}

fn check_bindings(names: &BTreeSet<String>, vars: &BTreeMap<String, String>, uri: &str) {
    let bound: BTreeSet<String> = vars.keys().cloned().collect();
    assert_eq!(&bound, names, "variables bound by matching {uri:?}");
    assert!(
        vars.values().all(|v| !v.is_empty()),
        "an empty value from {uri:?}: {vars:?}"
    );
}

/// Every character the expansion writes for the variables' values.
fn encoded_chars(t: &UriTemplate, vars: &BTreeMap<String, String>) -> BTreeSet<char> {
    let mut out = BTreeSet::new();
    for name in t.variables() {
        for form in ["{v}", "{+v}"] {
            let one = UriTemplate::parse(form).expect("a one-variable template parses");
            let value = BTreeMap::from([("v".to_owned(), vars[name].clone())]);
            out.extend(one.expand(&value).chars());
        }
    }
    out
}

/// The template's text outside its `{...}` expressions.
fn strip_variables(template: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in template.chars() {
        match c {
            '{' => inside = true,
            '}' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

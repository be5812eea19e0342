//! The method-name constants match the method names of the official schemas exactly.

use std::collections::BTreeSet;

use serde_json::Value;
use switchboard_types::methods;

/// Every `method` constant of a revision's schema.
fn schema_methods(rev: &str) -> BTreeSet<String> {
    let defs = switchboard_test_support::Schemas::get(rev).defs();
    defs.values()
        .filter_map(|d| {
            d.pointer("/properties/method/const")
                .and_then(Value::as_str)
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn constants_are_exactly_the_schema_methods() {
    let mut all = BTreeSet::new();
    for rev in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        for m in schema_methods(rev) {
            assert!(methods::is_known(&m), "{rev}: {m} has no constant");
            all.insert(m);
        }
    }
    let ours: BTreeSet<String> = methods::REQUESTS
        .iter()
        .chain(methods::NOTIFICATIONS.iter())
        .map(|m| (*m).to_owned())
        .collect();
    assert_eq!(ours, all, "constants that no revision defines");
}

#[test]
fn requests_and_notifications_are_told_apart() {
    for m in methods::REQUESTS {
        assert!(
            methods::is_request(m) && !methods::is_notification(m),
            "{m}"
        );
    }
    for m in methods::NOTIFICATIONS {
        assert!(
            m.starts_with("notifications/") && methods::is_notification(m),
            "{m}"
        );
    }
}

/// `(method, direction)` pairs a revision's schema defines, read from its four message unions.
fn schema_directions(rev: &str) -> BTreeSet<(String, &'static str)> {
    let defs = switchboard_test_support::Schemas::get(rev).defs();
    let mut out = BTreeSet::new();
    for (union, dir) in [
        ("ClientRequest", "c2s"),
        ("ClientNotification", "c2s"),
        ("ServerRequest", "s2c"),
        ("ServerNotification", "s2c"),
    ] {
        // 2026-07-28 has no server requests, and a union of one member is that member.
        let Some(def) = defs.get(union) else { continue };
        let members = match def.get("anyOf").and_then(Value::as_array) {
            Some(members) => members.clone(),
            None => {
                vec![serde_json::json!({"$ref": format!("#/$defs/{}", def_name_of(defs, def))})]
            }
        };
        for r in &members {
            let name = r["$ref"]
                .as_str()
                .expect("ref")
                .rsplit('/')
                .next()
                .expect("name");
            let method = defs[name]
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
                .expect("method const");
            out.insert((method.to_owned(), dir));
        }
    }
    out
}

/// The name of the definition `def` is a copy of (a one-member union is inlined in the schema).
fn def_name_of(defs: &serde_json::Map<String, Value>, def: &Value) -> String {
    let method = def.pointer("/properties/method/const").expect("method");
    defs.iter()
        .find(|(name, d)| {
            name.ends_with("Notification") && d.pointer("/properties/method/const") == Some(method)
        })
        .map(|(n, _)| n.clone())
        .expect("a definition with that method")
}

#[test]
fn catalogue_revisions_and_directions_match_each_schema() {
    use switchboard_types::ProtocolVersion;
    use switchboard_types::catalogue::{CATALOGUE, Direction};
    for rev in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let v = ProtocolVersion::parse(rev).expect("known");
        let ours: BTreeSet<(String, &'static str)> = CATALOGUE
            .iter()
            .filter(|s| s.exists_in(v))
            .flat_map(|s| {
                [Direction::ClientToServer, Direction::ServerToClient]
                    .into_iter()
                    .filter(|d| s.sender.sends(*d))
                    .map(|d| (s.name.to_owned(), d.as_str()))
            })
            // 2026-07-28 has no server requests, so a client never reports progress on one.
            .filter(|(m, d)| {
                !(v.is_modern() && m == methods::NOTIFICATIONS_PROGRESS && *d == "c2s")
            })
            .collect();
        assert_eq!(ours, schema_directions(rev), "{rev}");
    }
}

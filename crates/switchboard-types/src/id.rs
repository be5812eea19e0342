//! Request ids and progress tokens: a string or an integer, never `null` (`[JR-3]`, `[JR-4]`).
//!
//! Applies to both sides. The JSON type of an id is kept exactly: `"7"` and `7` are different ids,
//! and a response carries the id of its request with the same type and value (`[JR-6]`).

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON-RPC request id: a string or an integer (the full `i64` and `u64` ranges).
///
/// `Display` shows a string id quoted (`"7"`) and an integer bare (`7`), so the two never look alike
/// in logs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(IdRepr);

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IdRepr {
    Int(i64),
    UInt(u64),
    Str(String),
}

impl RequestId {
    /// An integer id.
    pub const fn int(n: i64) -> Self {
        RequestId(IdRepr::Int(n))
    }

    /// A string id.
    pub fn string(s: impl Into<String>) -> Self {
        RequestId(IdRepr::Str(s.into()))
    }

    /// The id as an `i64`, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Int(n) => Some(*n),
            IdRepr::UInt(n) => i64::try_from(*n).ok(),
            IdRepr::Str(_) => None,
        }
    }

    /// The id as a string slice, when it is a string id.
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this id is a JSON string (as opposed to a number).
    pub fn is_string(&self) -> bool {
        matches!(self.0, IdRepr::Str(_))
    }

    /// Reads an id from a JSON value: a string or an integer. Anything else (null, a fraction, a bool,
    /// an object) is `None`.
    pub fn from_value(v: &serde_json::Value) -> Option<Self> {
        match v {
            serde_json::Value::String(s) => Some(RequestId::string(s.clone())),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(RequestId::int(i))
                } else {
                    n.as_u64().map(|u| RequestId(IdRepr::UInt(u)))
                }
            }
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        match &self.0 {
            IdRepr::Int(n) => (*n).into(),
            IdRepr::UInt(n) => (*n).into(),
            IdRepr::Str(s) => s.clone().into(),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::int(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::string(s)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::string(s)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Int(n) => write!(f, "{n}"),
            IdRepr::UInt(n) => write!(f, "{n}"),
            IdRepr::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Int(n) => s.serialize_i64(*n),
            IdRepr::UInt(n) => s.serialize_u64(*n),
            IdRepr::Str(v) => s.serialize_str(v),
        }
    }
}

struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer (a request id or progress token)")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => RequestId::int(i),
            Err(_) => RequestId(IdRepr::UInt(v)),
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::string(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
        Ok(RequestId::string(v))
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

/// A progress token (`params._meta.progressToken`): the same string-or-integer shape as a request id.
pub type ProgressToken = RequestId;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jr_6_string_and_integer_ids_stay_distinct() {
        let s: RequestId = serde_json::from_str("\"7\"").unwrap();
        let n: RequestId = serde_json::from_str("7").unwrap();
        assert_ne!(s, n);
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"7\"");
        assert_eq!(serde_json::to_string(&n).unwrap(), "7");
        assert_eq!(s.to_string(), "\"7\"");
        assert_eq!(n.to_string(), "7");
    }

    #[test]
    fn jr_3_ids_beyond_i32_and_i64_round_trip() {
        for text in [
            "4294967296",
            "9223372036854775807",
            "18446744073709551615",
            "-9223372036854775808",
        ] {
            let id: RequestId = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&id).unwrap(), text);
        }
    }

    #[test]
    fn jr_4_null_fraction_and_bool_are_not_ids() {
        for text in ["null", "1.5", "true", "{}", "[]"] {
            assert!(serde_json::from_str::<RequestId>(text).is_err(), "{text}");
        }
    }
}

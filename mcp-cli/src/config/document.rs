//! The configuration file as JSON, with the order of its keys kept (server
//! order is registration order, and `mcp add` rewrites the file without
//! shuffling it).

use std::fmt;
use std::path::Path;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{CliError, ConfigProblem};

/// A JSON object whose keys keep their order (and duplicates, so that they
/// can be reported).
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderedObject<V>(pub(crate) Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedObject<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Ordered<V> {
            type Value = OrderedObject<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(OrderedObject(out))
            }
        }
        d.deserialize_map(Ordered(std::marker::PhantomData))
    }
}

impl<V: Serialize> Serialize for OrderedObject<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The key of the servers object.
pub(crate) const SERVERS_KEY: &str = "mcpServers";

/// A whole configuration document.
#[derive(Debug, Default)]
pub(crate) struct Document {
    /// Top-level members other than `mcpServers`, in order, as they were.
    pub(crate) top: Vec<(String, Value)>,
    /// Where `mcpServers` stood among the top-level members.
    pub(crate) servers_at: Option<usize>,
    /// The servers, in file order.
    pub(crate) servers: Vec<(String, Value)>,
}

impl Document {
    /// Parses `text` read from `file`.
    pub(crate) fn parse(file: &Path, text: &str) -> Result<Self, CliError> {
        let syntax = |source: serde_json::Error| CliError::ConfigSyntax {
            file: file.to_path_buf(),
            line: source.line(),
            column: source.column(),
            source,
        };
        // Parsed once as a plain value for the syntax and the root's type,
        // then again keeping the order of keys.
        let plain: Value = serde_json::from_str(text).map_err(syntax)?;
        if !plain.is_object() {
            return Err(CliError::config(
                file,
                "(root)",
                ConfigProblem::WrongType {
                    expected: "an object with `mcpServers`",
                    found: json_type(&plain),
                },
            ));
        }
        let top: OrderedObject<Box<RawValue>> = serde_json::from_str(text).map_err(syntax)?;
        let mut doc = Document::default();
        let mut seen = Vec::new();
        for (key, raw) in top.0 {
            if seen.contains(&key) {
                return Err(CliError::config(file, &key, ConfigProblem::DuplicateKey));
            }
            seen.push(key.clone());
            if key == SERVERS_KEY {
                let value: Value = serde_json::from_str(raw.get()).map_err(syntax)?;
                if !value.is_object() {
                    return Err(CliError::config(
                        file,
                        SERVERS_KEY,
                        ConfigProblem::WrongType {
                            expected: "an object of servers by name",
                            found: json_type(&value),
                        },
                    ));
                }
                let servers: OrderedObject<Value> =
                    serde_json::from_str(raw.get()).map_err(syntax)?;
                doc.servers_at = Some(doc.top.len());
                doc.servers = servers.0;
            } else {
                let value: Value = serde_json::from_str(raw.get()).map_err(syntax)?;
                doc.top.push((key, value));
            }
        }
        Ok(doc)
    }

    /// The document as pretty JSON, top-level and server order kept.
    pub(crate) fn to_pretty(&self) -> String {
        let mut top: Vec<(String, Value)> = self.top.clone();
        let servers = Value::Object(serde_json::Map::new());
        let at = self.servers_at.unwrap_or(top.len()).min(top.len());
        top.insert(at, (SERVERS_KEY.to_owned(), servers));
        // Serialised by hand around the ordered servers object.
        let mut out = String::from("{\n");
        for (i, (key, value)) in top.iter().enumerate() {
            let key_json = Value::String(key.clone()).to_string();
            let body = if key == SERVERS_KEY {
                pretty(&OrderedObject(self.servers.clone()))
            } else {
                pretty(value)
            };
            out.push_str("  ");
            out.push_str(&key_json);
            out.push_str(": ");
            out.push_str(&indent(&body));
            if i + 1 < top.len() {
                out.push(',');
            }
            out.push('\n');
        }
        out.push_str("}\n");
        out
    }
}

fn pretty<T: Serialize>(value: &T) -> String {
    // Serialising a JSON value (or ordered object of them) cannot fail: all
    // keys are strings.
    serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned())
}

fn indent(text: &str) -> String {
    text.replace('\n', "\n  ")
}

/// The JSON type of `value`, in words.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_servers_and_top_level_keys_survives_a_rewrite() {
        let text = r#"{"z": 1, "mcpServers": {"b": {"command": "x"}, "a": {"url": "https://e"}}, "a": [true]}"#;
        let doc = Document::parse(Path::new("f.json"), text).unwrap();
        let names: Vec<_> = doc.servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        let again = doc.to_pretty();
        let z = again.find("\"z\"").unwrap();
        let servers = again.find("\"mcpServers\"").unwrap();
        let a = again.find("\"a\": [").unwrap();
        assert!(z < servers && servers < a, "{again}");
        assert!(again.find("\"b\"").unwrap() < again.find("\"a\": {").unwrap());
        let reparsed: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(reparsed["mcpServers"]["a"]["url"], "https://e");
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = Document::parse(Path::new("f.json"), "{\n  \"mcpServers\": {,}\n}").unwrap_err();
        match err {
            CliError::ConfigSyntax { line, .. } => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicate_top_level_keys_are_reported() {
        let err = Document::parse(
            Path::new("f.json"),
            r#"{"mcpServers": {}, "mcpServers": {}}"#,
        )
        .unwrap_err();
        assert!(matches!(
            err,
            CliError::Config {
                problem: ConfigProblem::DuplicateKey,
                ..
            }
        ));
    }
}

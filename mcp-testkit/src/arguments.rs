//! Made-up tool arguments, for drivers that call tools they did not write
//! (the conformance client, the interop runner).

use serde_json::{Map, Value, json};

/// Plausible values for the required properties of a tool's input schema,
/// as a user might type them: the property's `default`, else its first
/// `enum` value, else a placeholder of its `type` (`filler` for strings).
pub fn example_arguments(schema: &Value, filler: &str) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return out;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, property) in properties {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = if let Some(default) = property.get("default") {
            default.clone()
        } else if let Some(first) = property.get("enum").and_then(|e| e.get(0)) {
            first.clone()
        } else {
            match property.get("type").and_then(Value::as_str) {
                Some("number") | Some("integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!(filler),
            }
        };
        out.insert(name.clone(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_defaults_enums_or_placeholders() {
        let schema = json!({"type": "object", "required": ["a", "b", "c", "d"], "properties": {
            "a": {"type": "integer"}, "b": {"type": "string", "default": "x"},
            "c": {"enum": ["red", "blue"]}, "d": {"type": "string"}, "e": {"type": "string"}}});
        let args = example_arguments(&schema, "test");
        assert_eq!(
            Value::Object(args),
            json!({"a": 1, "b": "x", "c": "red", "d": "test"})
        );
    }
}

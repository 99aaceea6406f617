//! A checker for the plain JSON Schemas most tools declare: objects of typed
//! properties, `required`, `additionalProperties`, `items`, string `enum`s and
//! the numeric and length bounds. A schema that uses anything else (`$ref`,
//! combinators, `pattern`, `format`, numeric `enum`s, another draft) is not
//! taken: [`PlainSchema::parse`] answers `None` and the full validator
//! (`jsonschema`) is used instead.
//!
//! Why it exists: compiling a full validator also checks the schema against
//! its meta-schema and builds a resolver: per schema, a few kilobytes and
//! tens of microseconds, and, the first time in a process, megabytes of code
//! paged in. A host with a hundred servers pays that on the first call of
//! each. The verdicts are the full validator's (a differential test compares
//! them on thousands of generated schemas and instances).

use serde_json::{Map, Value};

/// Drafts whose meaning of the keywords below is the same.
const DRAFTS: &[&str] = &[
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
];

/// Keywords that assert nothing (with every `x-` extension).
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// At most this many failures are reported (as with the full validator).
const MAX_FAILURES: usize = 20;

/// A parsed plain schema.
#[derive(Debug)]
pub(crate) struct PlainSchema {
    root: Node,
}

#[derive(Debug, Default)]
struct Node {
    /// Bit `i` set: `TYPES[i]` allowed. `None`: any type.
    types: Option<u8>,
    properties: Vec<(String, Node)>,
    required: Vec<String>,
    additional: Additional,
    items: Option<Box<Node>>,
    enumeration: Option<Vec<Value>>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
}

#[derive(Debug, Default)]
enum Additional {
    #[default]
    Any,
    Forbidden,
    Schema(Box<Node>),
}

impl PlainSchema {
    /// The schema as a plain schema, or `None` when it uses anything this
    /// checker does not take.
    pub(crate) fn parse(schema: &Value) -> Option<Self> {
        let object = schema.as_object()?;
        if let Some(draft) = object.get("$schema")
            && !DRAFTS.contains(&draft.as_str()?)
        {
            return None;
        }
        node(object, true).map(|root| Self { root })
    }

    /// What is wrong with `instance`, one line per failing path (never the
    /// values themselves); empty when it is valid.
    pub(crate) fn failures(&self, instance: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let mut path = String::new();
        check(&self.root, instance, &mut path, &mut out);
        out
    }
}

fn node(object: &Map<String, Value>, root: bool) -> Option<Node> {
    let mut n = Node::default();
    for (key, value) in object {
        match key.as_str() {
            "$schema" if root => {}
            "type" => n.types = Some(types(value)?),
            "properties" => {
                for (name, schema) in value.as_object()? {
                    n.properties
                        .push((name.clone(), node(schema.as_object()?, false)?));
                }
            }
            "required" => {
                for name in value.as_array()? {
                    let name = name.as_str()?;
                    if n.required.iter().any(|r| r == name) {
                        return None;
                    }
                    n.required.push(name.to_owned());
                }
            }
            "additionalProperties" => {
                n.additional = match value {
                    Value::Bool(true) => Additional::Any,
                    Value::Bool(false) => Additional::Forbidden,
                    Value::Object(schema) => Additional::Schema(Box::new(node(schema, false)?)),
                    _ => return None,
                }
            }
            "items" => n.items = Some(Box::new(node(value.as_object()?, false)?)),
            "enum" => {
                let values = value.as_array()?;
                let plain =
                    |v: &Value| matches!(v, Value::String(_) | Value::Bool(_) | Value::Null);
                if values.is_empty() || !values.iter().all(plain) {
                    return None;
                }
                n.enumeration = Some(values.clone());
            }
            "minLength" => n.min_length = Some(value.as_u64()?),
            "maxLength" => n.max_length = Some(value.as_u64()?),
            "minItems" => n.min_items = Some(value.as_u64()?),
            "maxItems" => n.max_items = Some(value.as_u64()?),
            "minimum" => n.minimum = Some(value.as_f64()?),
            "maximum" => n.maximum = Some(value.as_f64()?),
            "exclusiveMinimum" => n.exclusive_minimum = Some(value.as_f64()?),
            "exclusiveMaximum" => n.exclusive_maximum = Some(value.as_f64()?),
            other if ANNOTATIONS.contains(&other) || other.starts_with("x-") => {}
            _ => return None,
        }
    }
    Some(n)
}

fn types(value: &Value) -> Option<u8> {
    let bit = |name: &str| TYPES.iter().position(|t| *t == name).map(|i| 1u8 << i);
    match value {
        Value::String(name) => bit(name),
        Value::Array(names) if !names.is_empty() => {
            let mut mask = 0u8;
            for name in names {
                let b = bit(name.as_str()?)?;
                if mask & b != 0 {
                    return None;
                }
                mask |= b;
            }
            Some(mask)
        }
        _ => None,
    }
}

fn type_bits(instance: &Value) -> u8 {
    let bit = |name: &str| {
        TYPES
            .iter()
            .position(|t| *t == name)
            .map_or(0, |i| 1u8 << i)
    };
    match instance {
        Value::Null => bit("null"),
        Value::Bool(_) => bit("boolean"),
        Value::Object(_) => bit("object"),
        Value::Array(_) => bit("array"),
        Value::String(_) => bit("string"),
        Value::Number(n) => {
            let integral = n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0);
            bit("number") | if integral { bit("integer") } else { 0 }
        }
    }
}

fn fail(path: &str, what: &str, out: &mut Vec<String>) {
    if out.len() < MAX_FAILURES {
        let path = if path.is_empty() { "/" } else { path };
        out.push(format!("{path}: {what}"));
    }
}

/// Appends a JSON Pointer segment.
fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    for c in segment.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

fn check(n: &Node, instance: &Value, path: &mut String, out: &mut Vec<String>) {
    if let Some(mask) = n.types
        && type_bits(instance) & mask == 0
    {
        let names: Vec<&str> = TYPES
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, t)| *t)
            .collect();
        fail(
            path,
            &format!("value is not of type {}", names.join(" or ")),
            out,
        );
    }
    if let Some(values) = &n.enumeration
        && !values.contains(instance)
    {
        fail(path, "value is not one of the allowed values", out);
    }
    match instance {
        Value::Object(map) => check_object(n, map, path, out),
        Value::Array(items) => {
            let len = items.len() as u64;
            if n.min_items.is_some_and(|m| len < m) {
                fail(path, "array has too few items", out);
            }
            if n.max_items.is_some_and(|m| len > m) {
                fail(path, "array has too many items", out);
            }
            if let Some(item) = &n.items {
                for (i, value) in items.iter().enumerate() {
                    let mark = path.len();
                    push_segment(path, &i.to_string());
                    check(item, value, path, out);
                    path.truncate(mark);
                }
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if n.min_length.is_some_and(|m| len < m) {
                fail(path, "string is too short", out);
            }
            if n.max_length.is_some_and(|m| len > m) {
                fail(path, "string is too long", out);
            }
        }
        Value::Number(number) => {
            let Some(x) = number.as_f64() else { return };
            if n.minimum.is_some_and(|m| x < m) {
                fail(path, "number is below the minimum", out);
            }
            if n.maximum.is_some_and(|m| x > m) {
                fail(path, "number is above the maximum", out);
            }
            if n.exclusive_minimum.is_some_and(|m| x <= m) {
                fail(path, "number is not above the exclusive minimum", out);
            }
            if n.exclusive_maximum.is_some_and(|m| x >= m) {
                fail(path, "number is not below the exclusive maximum", out);
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

fn check_object(n: &Node, map: &Map<String, Value>, path: &mut String, out: &mut Vec<String>) {
    for name in &n.required {
        if !map.contains_key(name) {
            fail(path, &format!("\"{name}\" is a required property"), out);
        }
    }
    for (name, schema) in &n.properties {
        if let Some(value) = map.get(name) {
            let mark = path.len();
            push_segment(path, name);
            check(schema, value, path, out);
            path.truncate(mark);
        }
    }
    match &n.additional {
        Additional::Any => {}
        Additional::Forbidden => {
            let extra = map
                .keys()
                .filter(|k| !n.properties.iter().any(|(name, _)| name == *k))
                .count();
            if extra > 0 {
                fail(path, "additional properties are not allowed", out);
            }
        }
        Additional::Schema(schema) => {
            for (key, value) in map {
                if n.properties.iter().any(|(name, _)| name == key) {
                    continue;
                }
                let mark = path.len();
                push_segment(path, key);
                check(schema, value, path, out);
                path.truncate(mark);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// xorshift64*: deterministic, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
    }

    const KEYS: [&str; 4] = ["a", "b", "c/d", "e~f"];

    fn schema(rng: &mut Rng, depth: u32) -> Value {
        let mut s = Map::new();
        if rng.chance(80) {
            let t = TYPES[rng.below(7) as usize];
            if rng.chance(15) {
                let u = TYPES[rng.below(7) as usize];
                if u != t {
                    s.insert("type".into(), json!([t, u]));
                } else {
                    s.insert("type".into(), json!(t));
                }
            } else {
                s.insert("type".into(), json!(t));
            }
        }
        if depth < 2 && rng.chance(50) {
            let mut props = Map::new();
            for k in KEYS {
                if rng.chance(50) {
                    props.insert(k.into(), schema(rng, depth + 1));
                }
            }
            s.insert("properties".into(), Value::Object(props));
        }
        if rng.chance(40) {
            let req: Vec<&str> = KEYS.iter().copied().filter(|_| rng.chance(40)).collect();
            s.insert("required".into(), json!(req));
        }
        match rng.below(4) {
            0 => {
                s.insert("additionalProperties".into(), json!(false));
            }
            1 if depth < 2 => {
                s.insert("additionalProperties".into(), schema(rng, depth + 1));
            }
            _ => {}
        }
        if depth < 2 && rng.chance(25) {
            s.insert("items".into(), schema(rng, depth + 1));
        }
        if rng.chance(15) {
            s.insert("enum".into(), json!(["x", "héllo", true, null]));
        }
        for (kw, max) in [
            ("minLength", 4),
            ("maxLength", 6),
            ("minItems", 3),
            ("maxItems", 4),
        ] {
            if rng.chance(15) {
                s.insert(kw.into(), json!(rng.below(max)));
            }
        }
        for kw in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if rng.chance(12) {
                let v = rng.below(7) as i64 - 3;
                if rng.chance(30) {
                    s.insert(kw.into(), json!(v as f64 + 0.5));
                } else {
                    s.insert(kw.into(), json!(v));
                }
            }
        }
        if rng.chance(20) {
            s.insert("description".into(), json!("about it"));
        }
        Value::Object(s)
    }

    fn instance(rng: &mut Rng, depth: u32) -> Value {
        match rng.below(if depth < 2 { 10 } else { 8 }) {
            0 => Value::Null,
            1 => json!(rng.chance(50)),
            2 => json!(rng.below(9) as i64 - 4),
            3 => json!([1.0, 2.5, -0.5, 3.0, -2.0][rng.below(5) as usize]),
            4 => json!(["", "x", "héllo", "abcdefgh", "é"][rng.below(5) as usize]),
            5 | 6 => json!(["x", "héllo", "ab"][rng.below(3) as usize]),
            7 => json!(u64::MAX - rng.below(2)),
            8 => Value::Array(
                (0..rng.below(5))
                    .map(|_| instance(rng, depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = Map::new();
                for k in KEYS.iter().chain(["zz"].iter()) {
                    if rng.chance(50) {
                        m.insert((*k).into(), instance(rng, depth + 1));
                    }
                }
                Value::Object(m)
            }
        }
    }

    #[test]
    fn verdicts_match_the_full_validator() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut valid, mut invalid) = (0, 0);
        for _ in 0..3000 {
            let s = schema(&mut rng, 0);
            let plain = PlainSchema::parse(&s).expect("generated schemas are plain");
            let full = jsonschema::validator_for(&s).expect("a valid schema");
            for _ in 0..8 {
                let i = instance(&mut rng, 0);
                let ours = plain.failures(&i);
                let theirs = full.is_valid(&i);
                assert_eq!(ours.is_empty(), theirs, "schema {s} instance {i}: {ours:?}");
                if theirs {
                    valid += 1;
                } else {
                    invalid += 1;
                }
            }
        }
        // Both verdicts were exercised.
        assert!(
            valid > 2000 && invalid > 2000,
            "{valid} valid, {invalid} invalid"
        );
    }

    #[test]
    fn anything_else_is_left_to_the_full_validator() {
        for s in [
            json!(true),
            json!({"$ref": "#/$defs/x", "$defs": {"x": {}}}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"type": "string", "pattern": "^a"}),
            json!({"type": "string", "format": "email"}),
            json!({"enum": [1, 2]}),
            json!({"type": "number", "multipleOf": 2}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}),
            json!({"type": "strin"}),
            json!({"required": ["a", "a"]}),
            json!({"minLength": -1}),
            json!({"items": [{"type": "string"}]}),
            json!({"properties": {"a": {"unknownKeyword": 1}}}),
        ] {
            assert!(PlainSchema::parse(&s).is_none(), "{s}");
        }
        let typical = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"text": {"type": "string", "description": "what", "x-mcp-header": "T"}},
            "required": ["text"],
            "additionalProperties": false
        });
        assert!(PlainSchema::parse(&typical).is_some());
    }

    #[test]
    fn failures_name_the_path_and_never_the_value() {
        let s = PlainSchema::parse(&json!({
            "type": "object",
            "properties": {
                "a/b": {"type": "integer"},
                "list": {"type": "array", "items": {"type": "string", "maxLength": 3}}
            },
            "required": ["must"],
            "additionalProperties": false
        }))
        .unwrap();
        let failures = s.failures(&json!({
            "a/b": "hunter2",
            "list": ["ok", "hunter2"],
            "extra": "hunter2"
        }));
        assert_eq!(
            failures,
            vec![
                "/: \"must\" is a required property",
                "/a~1b: value is not of type integer",
                "/list/1: string is too long",
                "/: additional properties are not allowed",
            ]
        );
        assert!(failures.iter().all(|f| !f.contains("hunter2")));
    }
}

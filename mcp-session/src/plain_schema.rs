//! A checker for the plain JSON Schemas most tools declare: objects of typed
//! properties, `required`, `additionalProperties`, `items`, string `enum`s and
//! the numeric and length bounds. A schema that uses anything else (`$ref`,
//! combinators, `pattern`, `format`, numeric `enum`s, another draft) is not
//! taken: [`PlainSchema::from_json`] answers `None` and the full validator
//! (`jsonschema`) is used instead.
//!
//! Why it exists: compiling a full validator also checks the schema against
//! its meta-schema and builds a resolver: per schema, a few kilobytes and
//! tens of microseconds, and, the first time in a process, megabytes of code
//! paged in. A host with a hundred servers pays that on the first call of
//! each. The verdicts are the full validator's (a differential test compares
//! them on thousands of generated schemas and instances).

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
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
    /// The schema, read from its JSON text, as a plain schema; `None` when
    /// it uses anything this checker does not take, repeats a keyword or a
    /// property name (the full validator then reads it), or is not JSON.
    ///
    /// It is read straight from the text, with no `serde_json::Value` tree
    /// in between: the first call of each tool pays for this read (5k
    /// instructions for a one-property schema, against 11k through a tree).
    pub(crate) fn from_json(text: &str) -> Option<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let root = NodeSeed { root: true }.deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(Self { root })
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

/// The error that ends a read: the schema is not plain (or not JSON). Its
/// text is never shown; the caller only learns `None`.
fn not_plain<E: de::Error>() -> E {
    E::custom("not a plain schema")
}

/// `DeserializeSeed` for a seed that is its own visitor: the seed asks
/// the deserializer for what its visitor takes (`deserialize_map` for a
/// schema object, `deserialize_any` where several JSON types are allowed).
macro_rules! seeds_by_visitor {
    ($($seed:ty => $method:ident),* $(,)?) => {$(
        impl<'de> DeserializeSeed<'de> for $seed {
            type Value = <$seed as Visitor<'de>>::Value;
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.$method(self)
            }
        }
    )*};
}

seeds_by_visitor! {
    KeywordSeed => deserialize_str,
    NodeSeed => deserialize_map,
    TypeSeed => deserialize_any,
    PropertiesSeed => deserialize_map,
    RequiredSeed => deserialize_seq,
    AdditionalSeed => deserialize_any,
    EnumSeed => deserialize_seq,
    EnumValueSeed => deserialize_any,
    CountSeed => deserialize_any,
    BoundSeed => deserialize_any,
}

/// The keywords a plain schema may use; `Annotation` is any keyword that
/// asserts nothing (its value is skipped).
#[derive(Clone, Copy)]
enum Keyword {
    Schema,
    Type,
    Properties,
    Required,
    AdditionalProperties,
    Items,
    Enum,
    MinLength,
    MaxLength,
    MinItems,
    MaxItems,
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
    Annotation,
}

struct KeywordSeed;

impl Visitor<'_> for KeywordSeed {
    type Value = Keyword;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a plain schema keyword")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Keyword, E> {
        Ok(match key {
            "$schema" => Keyword::Schema,
            "type" => Keyword::Type,
            "properties" => Keyword::Properties,
            "required" => Keyword::Required,
            "additionalProperties" => Keyword::AdditionalProperties,
            "items" => Keyword::Items,
            "enum" => Keyword::Enum,
            "minLength" => Keyword::MinLength,
            "maxLength" => Keyword::MaxLength,
            "minItems" => Keyword::MinItems,
            "maxItems" => Keyword::MaxItems,
            "minimum" => Keyword::Minimum,
            "maximum" => Keyword::Maximum,
            "exclusiveMinimum" => Keyword::ExclusiveMinimum,
            "exclusiveMaximum" => Keyword::ExclusiveMaximum,
            other if ANNOTATIONS.contains(&other) || other.starts_with("x-") => Keyword::Annotation,
            _ => return Err(not_plain()),
        })
    }
}

/// A schema object (the root when `root`: only there may `$schema` be).
struct NodeSeed {
    root: bool,
}

impl<'de> Visitor<'de> for NodeSeed {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a schema object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut n = Node::default();
        // Keywords seen, by `Keyword as u32` (a repeat is not plain: which
        // one counts is the full validator's business).
        let mut seen = 0u32;
        while let Some(keyword) = map.next_key_seed(KeywordSeed)? {
            if let Keyword::Annotation = keyword {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let bit = 1u32 << (keyword as u32);
            if seen & bit != 0 {
                return Err(not_plain());
            }
            seen |= bit;
            match keyword {
                Keyword::Schema => {
                    let draft = map.next_value::<String>()?;
                    if !self.root || !DRAFTS.contains(&draft.as_str()) {
                        return Err(not_plain());
                    }
                }
                Keyword::Type => n.types = Some(map.next_value_seed(TypeSeed)?),
                Keyword::Properties => n.properties = map.next_value_seed(PropertiesSeed)?,
                Keyword::Required => n.required = map.next_value_seed(RequiredSeed)?,
                Keyword::AdditionalProperties => {
                    n.additional = map.next_value_seed(AdditionalSeed)?;
                }
                Keyword::Items => {
                    n.items = Some(Box::new(map.next_value_seed(NodeSeed { root: false })?));
                }
                Keyword::Enum => n.enumeration = Some(map.next_value_seed(EnumSeed)?),
                Keyword::MinLength => n.min_length = Some(map.next_value_seed(CountSeed)?),
                Keyword::MaxLength => n.max_length = Some(map.next_value_seed(CountSeed)?),
                Keyword::MinItems => n.min_items = Some(map.next_value_seed(CountSeed)?),
                Keyword::MaxItems => n.max_items = Some(map.next_value_seed(CountSeed)?),
                Keyword::Minimum => n.minimum = Some(map.next_value_seed(BoundSeed)?),
                Keyword::Maximum => n.maximum = Some(map.next_value_seed(BoundSeed)?),
                Keyword::ExclusiveMinimum => {
                    n.exclusive_minimum = Some(map.next_value_seed(BoundSeed)?);
                }
                Keyword::ExclusiveMaximum => {
                    n.exclusive_maximum = Some(map.next_value_seed(BoundSeed)?);
                }
                Keyword::Annotation => unreachable!("skipped above"),
            }
        }
        Ok(n)
    }
}

/// `type`: one type name, or a non-empty list of different ones.
struct TypeSeed;

/// The bit of the type named `name` (in a mask of [`TYPES`]).
fn type_bit(name: &str) -> Option<u8> {
    TYPES.iter().position(|t| *t == name).map(|i| 1u8 << i)
}

impl<'de> Visitor<'de> for TypeSeed {
    type Value = u8;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a type name or a list of them")
    }
    fn visit_str<E: de::Error>(self, name: &str) -> Result<u8, E> {
        type_bit(name).ok_or_else(not_plain)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u8, A::Error> {
        let mut mask = 0u8;
        while let Some(name) = seq.next_element::<String>()? {
            let bit = type_bit(&name).ok_or_else(not_plain::<A::Error>)?;
            if mask & bit != 0 {
                return Err(not_plain());
            }
            mask |= bit;
        }
        if mask == 0 {
            return Err(not_plain());
        }
        Ok(mask)
    }
}

/// `properties`: names to schemas, kept in name order (a `Value` map's
/// order); a name twice is not plain.
struct PropertiesSeed;

impl<'de> Visitor<'de> for PropertiesSeed {
    type Value = Vec<(String, Node)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of schemas")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut properties = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            properties.push((name, map.next_value_seed(NodeSeed { root: false })?));
        }
        properties.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if properties.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(not_plain());
        }
        Ok(properties)
    }
}

/// `required`: property names, in the schema's order; a name twice is not
/// plain.
struct RequiredSeed;

impl<'de> Visitor<'de> for RequiredSeed {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of property names")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut names = Vec::new();
        while let Some(name) = seq.next_element::<String>()? {
            names.push(name);
        }
        // Sorted references, so a long hostile list costs n log n.
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(not_plain());
        }
        Ok(names)
    }
}

/// `additionalProperties`: `true`, `false` or a schema.
struct AdditionalSeed;

impl<'de> Visitor<'de> for AdditionalSeed {
    type Value = Additional;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean or a schema")
    }
    fn visit_bool<E: de::Error>(self, allowed: bool) -> Result<Additional, E> {
        Ok(if allowed {
            Additional::Any
        } else {
            Additional::Forbidden
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Additional, A::Error> {
        NodeSeed { root: false }
            .visit_map(map)
            .map(|n| Additional::Schema(Box::new(n)))
    }
}

/// `enum`: a non-empty list of strings, booleans and nulls (numbers compare
/// by the full validator's rules, so they are not plain).
struct EnumSeed;

impl<'de> Visitor<'de> for EnumSeed {
    type Value = Vec<Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of strings, booleans and nulls")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut values = Vec::new();
        while let Some(value) = seq.next_element_seed(EnumValueSeed)? {
            values.push(value);
        }
        if values.is_empty() {
            return Err(not_plain());
        }
        Ok(values)
    }
}

struct EnumValueSeed;

impl Visitor<'_> for EnumValueSeed {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, a boolean or null")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// A length or item count: a non-negative integer (`3.0` is not, as with
/// `Value::as_u64`).
struct CountSeed;

impl Visitor<'_> for CountSeed {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative integer")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| not_plain())
    }
}

/// A numeric bound: any number, as `f64` (as with `Value::as_f64`).
struct BoundSeed;

impl Visitor<'_> for BoundSeed {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }
}

fn type_bits(instance: &Value) -> u8 {
    let bit = |name: &str| type_bit(name).unwrap_or(0);
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

    /// The schema `s` read from its JSON text.
    fn plain(s: &Value) -> Option<PlainSchema> {
        PlainSchema::from_json(&s.to_string())
    }

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
            let plain = plain(&s).expect("generated schemas are plain");
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
            assert!(plain(&s).is_none(), "{s}");
        }
        let typical = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"text": {"type": "string", "description": "what", "x-mcp-header": "T"}},
            "required": ["text"],
            "additionalProperties": false
        });
        assert!(plain(&typical).is_some());
    }

    #[test]
    fn text_a_value_tree_would_hide_is_not_plain() {
        // A repeated keyword or property name (a `Value` keeps the last one:
        // the full validator decides), `$schema` below the root, counts that
        // are not integers, empty lists, and text that is not one JSON value.
        for text in [
            r#"{"type":"string","type":"number"}"#,
            r#"{"properties":{"a":{},"a":{"type":"string"}}}"#,
            r#"{"properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#"}}}"#,
            r#"{"minLength":3.0}"#,
            r#"{"maxItems":-1}"#,
            r#"{"enum":[]}"#,
            r#"{"type":[]}"#,
            r#"{"type":["string","string"]}"#,
            r#"{"additionalProperties":"no"}"#,
            r#"{"type":"string"} {}"#,
            r#"{"type":"string""#,
            "[]",
        ] {
            assert!(PlainSchema::from_json(text).is_none(), "{text}");
        }
        // Escaped keys are read as what they spell; annotations may hold
        // anything, repeated or not.
        let s = PlainSchema::from_json(
            r#"{"typ\u0065":"integer","description":{"deep":[1,{"x":null}]},"description":"again","x-extra":[true]}"#,
        )
        .expect("plain");
        assert_eq!(
            s.failures(&json!("7")),
            vec!["/: value is not of type integer"]
        );
        assert!(s.failures(&json!(7)).is_empty());
        let bounds = PlainSchema::from_json(r#"{"minimum":-1.5,"exclusiveMaximum":3}"#).unwrap();
        assert!(bounds.failures(&json!(-1.5)).is_empty());
        assert_eq!(bounds.failures(&json!(3)).len(), 1);
        assert_eq!(bounds.failures(&json!(-2)).len(), 1);
    }

    #[test]
    fn properties_are_checked_in_name_order_whatever_the_text_order() {
        let s = PlainSchema::from_json(
            r#"{"properties":{"b":{"type":"string"},"a":{"type":"string"}},"required":["z","y"]}"#,
        )
        .unwrap();
        assert_eq!(
            s.failures(&json!({"a": 1, "b": 2})),
            vec![
                "/: \"z\" is a required property",
                "/: \"y\" is a required property",
                "/a: value is not of type string",
                "/b: value is not of type string",
            ]
        );
    }

    #[test]
    fn a_long_required_list_is_read_in_n_log_n() {
        // 100k distinct names, then the same list with one name repeated at
        // the end: both read (the second refused) without a quadratic scan.
        let names: Vec<String> = (0..100_000).map(|i| format!("p{i}")).collect();
        let text = json!({ "required": names }).to_string();
        assert_eq!(
            PlainSchema::from_json(&text).unwrap().root.required.len(),
            100_000
        );
        let mut repeated = names.clone();
        repeated.push("p0".into());
        assert!(PlainSchema::from_json(&json!({ "required": repeated }).to_string()).is_none());
    }

    #[test]
    fn failures_name_the_path_and_never_the_value() {
        let s = plain(&json!({
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

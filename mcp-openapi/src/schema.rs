//! OpenAPI schemas → JSON Schema 2020-12, bundled per tool.
//!
//! Every schema a tool uses is converted once: 3.0's `nullable` becomes a
//! `"null"` type (or an `anyOf` with one), boolean `exclusiveMinimum` /
//! `exclusiveMaximum` become numbers, `example` becomes `examples`, a
//! 3.0 `$ref`'s siblings are dropped (but `description`, `title` and
//! `nullable`), and OpenAPI-only annotations (`discriminator`, `xml`,
//! `externalDocs`, `x-…`) are left out. A `$ref` stays a reference: each
//! referenced schema (`#/components/schemas/Pet`) becomes an entry of the
//! tool schema's `$defs` (`#/$defs/Pet`), so a recursive type stays
//! recursive and a schema shared by many operations is converted once.
//! A tool's schema carries exactly the definitions it reaches.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::document::{Document, Version, child, local_pointer};
use crate::error::OpenApiError;

/// A reference from a converted schema to another schema of the document.
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    /// The JSON pointer of the target.
    pub(crate) target: String,
    /// Whether the reference applies to the same instance as the schema
    /// holding it (through `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/
    /// `else`, `dependentSchemas` or directly), rather than below it (a
    /// property, an item). A cycle of such references never ends.
    pub(crate) in_place: bool,
}

/// A converted schema and its references.
#[derive(Clone, Debug)]
pub(crate) struct Converted {
    pub(crate) value: Value,
    pub(crate) edges: Vec<Edge>,
}

/// One definition: a referenced schema, converted.
struct Def {
    name: String,
    value: Value,
    edges: Vec<Edge>,
    /// Its JSON text, made once.
    text: Option<String>,
}

/// The converted schemas of one document.
pub(crate) struct SchemaSet<'d> {
    doc: &'d Document,
    defs: HashMap<String, Def>,
    /// Definition names in use, to their pointer (two pointers never share
    /// a name).
    names: HashMap<String, String>,
}

/// The `$defs` name of a referenced schema: a component's own name when it
/// is plain (`[A-Za-z0-9._-]`, what OpenAPI requires of component names),
/// else `@` and a hash of its pointer (no component name holds `@`).
fn def_name(pointer: &str) -> String {
    if let Some(name) = pointer.strip_prefix("/components/schemas/")
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
    {
        return name.to_owned();
    }
    format!("@{:016x}", crate::names::fnv1a64(pointer.as_bytes()))
}

/// Keywords whose value is one schema applied below the instance.
const BELOW_ONE: &[&str] = &[
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is one schema applied to the instance itself.
const IN_PLACE_ONE: &[&str] = &["not", "if", "then", "else"];
/// Keywords whose value is an array of schemas applied to the instance.
const IN_PLACE_MANY: &[&str] = &["allOf", "anyOf", "oneOf"];
/// OpenAPI annotations that mean nothing to a JSON Schema validator and
/// only cost bytes in a tool schema.
const DROPPED: &[&str] = &[
    "discriminator",
    "xml",
    "externalDocs",
    "$schema",
    "$comment",
];

impl<'d> SchemaSet<'d> {
    pub(crate) fn new(doc: &'d Document) -> Self {
        Self {
            doc,
            defs: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// Converts a schema written inline at `at` (not kept as a definition).
    pub(crate) fn convert(&self, schema: &Value, at: &str) -> Result<Converted, OpenApiError> {
        let mut edges = Vec::new();
        let value = self.convert_value(schema, at, true, &mut edges)?;
        Ok(Converted { value, edges })
    }

    fn convert_value(
        &self,
        schema: &Value,
        at: &str,
        in_place: bool,
        edges: &mut Vec<Edge>,
    ) -> Result<Value, OpenApiError> {
        let map = match schema {
            Value::Bool(_) => return Ok(schema.clone()),
            Value::Object(map) => map,
            _ => {
                return Err(OpenApiError::invalid(
                    at,
                    "a schema must be an object (or, in 3.1, a boolean)",
                ));
            }
        };
        let mut out = Map::new();
        if let Some(reference) = map.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(OpenApiError::invalid(at, "`$ref` is not a string"));
            };
            let target = local_pointer(reference, at)?;
            self.doc.count_ref()?;
            let name = def_name(&target);
            edges.push(Edge { target, in_place });
            out.insert("$ref".to_owned(), Value::String(format!("#/$defs/{name}")));
            if self.doc.version == Version::V30 {
                // 3.0: a reference's siblings are ignored; the annotations
                // that tools show are kept, and `nullable`, which authors
                // write beside a reference and mean.
                for key in ["description", "title"] {
                    if let Some(v) = map.get(key) {
                        out.insert(key.to_owned(), v.clone());
                    }
                }
                if map.get("nullable") == Some(&Value::Bool(true)) {
                    return Ok(or_null(Value::Object(out)));
                }
                return Ok(Value::Object(out));
            }
        }
        for (key, value) in map {
            let key_at = || child(at, key);
            match key.as_str() {
                "$ref" | "nullable" | "example" => {}
                "$id" => return Err(unsupported(key_at(), "$id")),
                "$dynamicRef" => return Err(unsupported(key_at(), "$dynamicRef")),
                "$recursiveRef" => return Err(unsupported(key_at(), "$recursiveRef")),
                k if DROPPED.contains(&k) || k.starts_with("x-") => {}
                "properties" | "patternProperties" | "$defs" | "definitions" => {
                    let below = self.convert_map(value, &key_at(), false, edges)?;
                    out.insert(key.clone(), below);
                }
                "dependentSchemas" => {
                    let same = self.convert_map(value, &key_at(), in_place, edges)?;
                    out.insert(key.clone(), same);
                }
                "prefixItems" => {
                    let items = self.convert_array(value, &key_at(), false, edges)?;
                    out.insert(key.clone(), items);
                }
                // Draft 4 tuple form, not valid in 2020-12.
                "items" if value.is_array() => {
                    let items = self.convert_array(value, &key_at(), false, edges)?;
                    out.insert("prefixItems".to_owned(), items);
                }
                k if BELOW_ONE.contains(&k) => {
                    let v = self.convert_value(value, &key_at(), false, edges)?;
                    out.insert(key.clone(), v);
                }
                k if IN_PLACE_ONE.contains(&k) => {
                    let v = self.convert_value(value, &key_at(), in_place, edges)?;
                    out.insert(key.clone(), v);
                }
                k if IN_PLACE_MANY.contains(&k) => {
                    let v = self.convert_array(value, &key_at(), in_place, edges)?;
                    out.insert(key.clone(), v);
                }
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {}
                // 3.0 has no `examples` in schemas; one that is not an array
                // is not 2020-12's either.
                "examples" if !value.is_array() => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        // 3.0's boolean exclusive bounds turn the plain bound exclusive.
        for (flag, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if map.get(flag) == Some(&Value::Bool(true))
                && let Some(limit) = out.remove(bound)
            {
                out.insert(flag.to_owned(), limit);
            }
        }
        if let Some(example) = map.get("example")
            && !out.contains_key("examples")
        {
            out.insert("examples".to_owned(), Value::Array(vec![example.clone()]));
        }
        let nullable = map.get("nullable") == Some(&Value::Bool(true));
        if nullable {
            if let Some(Value::Array(values)) = out.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
            match out.get_mut("type") {
                Some(Value::String(t)) => {
                    let t = std::mem::take(t);
                    out.insert(
                        "type".to_owned(),
                        Value::Array(vec![Value::String(t), Value::String("null".into())]),
                    );
                }
                Some(Value::Array(types)) => {
                    let null = Value::String("null".into());
                    if !types.contains(&null) {
                        types.push(null);
                    }
                }
                _ => return Ok(or_null(Value::Object(out))),
            }
        }
        Ok(Value::Object(out))
    }

    fn convert_map(
        &self,
        value: &Value,
        at: &str,
        in_place: bool,
        edges: &mut Vec<Edge>,
    ) -> Result<Value, OpenApiError> {
        let Some(map) = value.as_object() else {
            return Err(OpenApiError::invalid(at, "expected an object of schemas"));
        };
        let mut out = Map::new();
        for (key, schema) in map {
            let v = self.convert_value(schema, &child(at, key), in_place, edges)?;
            out.insert(key.clone(), v);
        }
        Ok(Value::Object(out))
    }

    fn convert_array(
        &self,
        value: &Value,
        at: &str,
        in_place: bool,
        edges: &mut Vec<Edge>,
    ) -> Result<Value, OpenApiError> {
        let Some(items) = value.as_array() else {
            return Err(OpenApiError::invalid(at, "expected an array of schemas"));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, schema) in items.iter().enumerate() {
            out.push(self.convert_value(schema, &child(at, &i.to_string()), in_place, edges)?);
        }
        Ok(Value::Array(out))
    }

    /// Converts the schema at `pointer` into a definition, once.
    fn ensure_def(&mut self, pointer: &str, from: &str) -> Result<(), OpenApiError> {
        if self.defs.contains_key(pointer) {
            return Ok(());
        }
        let schema = self
            .doc
            .at(pointer)
            .ok_or_else(|| OpenApiError::RefNotFound {
                reference: format!("#{pointer}"),
                at: from.to_owned(),
            })?;
        let Converted { value, edges } = self.convert(schema, pointer)?;
        let name = def_name(pointer);
        if let Some(other) = self.names.insert(name.clone(), pointer.to_owned())
            && other != pointer
        {
            return Err(OpenApiError::invalid(
                pointer,
                "two referenced schemas would share one definition name",
            ));
        }
        self.defs.insert(
            pointer.to_owned(),
            Def {
                name,
                value,
                edges,
                text: None,
            },
        );
        Ok(())
    }

    /// When `converted` is only a reference (an alias, perhaps with a
    /// description), the schema it finally names, converted; else itself.
    /// Lets a request body or response written as `$ref: Pet` be seen as
    /// the object it is.
    pub(crate) fn resolve_alias(
        &mut self,
        mut converted: Converted,
        at: &str,
    ) -> Result<Converted, OpenApiError> {
        let mut hops = 0;
        loop {
            let Some(map) = converted.value.as_object() else {
                return Ok(converted);
            };
            let alias = map.contains_key("$ref")
                && map
                    .keys()
                    .all(|k| k == "$ref" || k == "description" || k == "title");
            if !alias || converted.edges.len() != 1 {
                return Ok(converted);
            }
            hops += 1;
            if hops > self.doc.max_depth {
                return Err(OpenApiError::RefTooDeep {
                    limit: self.doc.max_depth,
                    at: at.to_owned(),
                });
            }
            let description = map.get("description").cloned();
            let target = converted.edges[0].target.clone();
            self.ensure_def(&target, at)?;
            let def = &self.defs[&target];
            let mut value = def.value.clone();
            if let (Some(d), Some(obj)) = (description, value.as_object_mut()) {
                obj.entry("description").or_insert(d);
            }
            converted = Converted {
                value,
                edges: def.edges.clone(),
            };
        }
    }

    /// The JSON text of `root` with a `$defs` holding every definition it
    /// reaches (breadth first, at most [`Limits::max_ref_depth`] references
    /// deep).
    ///
    /// [`Limits::max_ref_depth`]: crate::Limits
    pub(crate) fn bundle(
        &mut self,
        root: &Value,
        edges: &[Edge],
        at: &str,
    ) -> Result<String, OpenApiError> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut order: Vec<String> = Vec::new();
        let mut frontier: Vec<String> = edges.iter().map(|e| e.target.clone()).collect();
        let mut depth = 0;
        while !frontier.is_empty() {
            depth += 1;
            let mut next = Vec::new();
            for pointer in frontier {
                if seen.contains(&pointer) {
                    continue;
                }
                if depth > self.doc.max_depth {
                    return Err(OpenApiError::RefTooDeep {
                        limit: self.doc.max_depth,
                        at: format!("#{pointer}"),
                    });
                }
                self.ensure_def(&pointer, at)?;
                for edge in &self.defs[&pointer].edges {
                    if !seen.contains(&edge.target) {
                        next.push(edge.target.clone());
                    }
                }
                seen.insert(pointer.clone());
                order.push(pointer);
            }
            frontier = next;
        }
        let root_text = serde_json::to_string(root)
            .map_err(|_| OpenApiError::invalid(at, "a schema could not be written as JSON"))?;
        if order.is_empty() {
            return Ok(root_text);
        }
        let mut text = String::with_capacity(root_text.len() + order.len() * 256);
        // `root` is an object: its text ends with `}`.
        let body = &root_text[..root_text.len() - 1];
        text.push_str(body);
        if body.len() > 1 {
            text.push(',');
        }
        text.push_str("\"$defs\":{");
        order.sort_by(|a, b| self.defs[a].name.cmp(&self.defs[b].name));
        for (i, pointer) in order.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let def = self.defs.get_mut(pointer).expect("converted above");
            if def.text.is_none() {
                def.text = Some(serde_json::to_string(&def.value).map_err(|_| {
                    OpenApiError::invalid(pointer.as_str(), "a schema could not be written as JSON")
                })?);
            }
            // Definition names hold only `[A-Za-z0-9._-@]`: no escaping.
            text.push('"');
            text.push_str(&def.name);
            text.push_str("\":");
            text.push_str(def.text.as_deref().unwrap_or("true"));
        }
        text.push_str("}}");
        Ok(text)
    }

    /// Refuses a cycle of in-place references among the definitions made.
    pub(crate) fn check_cycles(&self) -> Result<(), OpenApiError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            Open,
            Done,
        }
        let mut marks: HashMap<&str, Mark> = HashMap::new();
        let mut pointers: Vec<&str> = self.defs.keys().map(String::as_str).collect();
        pointers.sort_unstable();
        for start in pointers {
            if marks.contains_key(start) {
                continue;
            }
            // Iterative depth-first search: (node, next edge index).
            let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
            marks.insert(start, Mark::Open);
            while let Some(top) = stack.last_mut() {
                let (node, next) = (top.0, &mut top.1);
                let edges = &self.defs[node].edges;
                while *next < edges.len() && !edges[*next].in_place {
                    *next += 1;
                }
                let Some(edge) = edges.get(*next) else {
                    marks.insert(node, Mark::Done);
                    stack.pop();
                    continue;
                };
                *next += 1;
                let target = edge.target.as_str();
                match marks.get(target) {
                    Some(Mark::Open) => {
                        return Err(OpenApiError::RefCycle {
                            reference: format!("#{target}"),
                        });
                    }
                    Some(Mark::Done) => {}
                    None => {
                        if self.defs.contains_key(target) {
                            marks.insert(target, Mark::Open);
                            stack.push((target, 0));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks every definition made against the JSON Schema 2020-12
    /// meta-schema (each once, however many tools use it).
    pub(crate) fn check_defs(&self) -> Result<(), OpenApiError> {
        let mut pointers: Vec<&String> = self.defs.keys().collect();
        pointers.sort_unstable();
        for pointer in pointers {
            meta_check(&self.defs[pointer].value, &format!("#{pointer}"))?;
        }
        Ok(())
    }
}

/// Checks one schema against the JSON Schema 2020-12 meta-schema.
pub(crate) fn meta_check(schema: &Value, at: &str) -> Result<(), OpenApiError> {
    jsonschema::draft202012::meta::validate(schema).map_err(|e| {
        let path = e.instance_path().to_string();
        OpenApiError::InvalidSchema {
            at: at.to_owned(),
            problem: format!(
                "{}: {}",
                if path.is_empty() { "/" } else { &path },
                e.masked()
            ),
        }
    })
}

fn unsupported(at: String, keyword: &'static str) -> OpenApiError {
    OpenApiError::UnsupportedKeyword { at, keyword }
}

/// `schema` or `null`.
fn or_null(schema: Value) -> Value {
    let mut out = Map::new();
    out.insert(
        "anyOf".to_owned(),
        Value::Array(vec![schema, serde_json::json!({"type": "null"})]),
    );
    Value::Object(out)
}

/// Whether a converted schema describes a JSON object (its `type` is
/// `object`).
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.len() == 1 && types[0] == "object",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use serde_json::json;

    fn doc(version: Version, root: Value) -> Document {
        Document::new(root, version, &Limits::default())
    }

    #[test]
    fn openapi_30_keywords_become_2020_12() {
        let d = doc(Version::V30, json!({}));
        let set = SchemaSet::new(&d);
        let c = set
            .convert(
                &json!({
                    "type": "integer", "nullable": true, "minimum": 1, "exclusiveMinimum": true,
                    "maximum": 9, "exclusiveMaximum": false, "example": 3,
                    "x-internal": 1, "xml": {"name": "n"}, "enum": [1, 2]
                }),
                "/s",
            )
            .unwrap();
        assert_eq!(
            c.value,
            json!({"type": ["integer", "null"], "exclusiveMinimum": 1, "maximum": 9,
                   "examples": [3], "enum": [1, 2, null]})
        );
        let c = set
            .convert(
                &json!({"allOf": [{"$ref": "#/components/schemas/A", "type": "string"}], "nullable": true}),
                "/s",
            )
            .unwrap();
        assert_eq!(
            c.value,
            json!({"anyOf": [{"allOf": [{"$ref": "#/$defs/A"}]}, {"type": "null"}]})
        );
        assert_eq!(c.edges.len(), 1);
        assert!(c.edges[0].in_place);
    }

    #[test]
    fn openapi_31_ref_siblings_stay() {
        let d = doc(Version::V31, json!({}));
        let set = SchemaSet::new(&d);
        let c = set
            .convert(
                &json!({"properties": {"a": {"$ref": "#/components/schemas/A", "maxLength": 3}}}),
                "/s",
            )
            .unwrap();
        assert_eq!(
            c.value,
            json!({"properties": {"a": {"$ref": "#/$defs/A", "maxLength": 3}}})
        );
        assert!(!c.edges[0].in_place);
    }

    #[test]
    fn data_is_not_converted() {
        let d = doc(Version::V30, json!({}));
        let set = SchemaSet::new(&d);
        let data = json!({"nullable": true, "$ref": "x", "x-y": 1});
        let c = set
            .convert(
                &json!({"default": data, "enum": [data], "const": data}),
                "/s",
            )
            .unwrap();
        assert_eq!(c.value["default"], data);
        assert_eq!(c.value["enum"][0], data);
        assert!(c.edges.is_empty());
    }

    #[test]
    fn bundles_carry_what_they_reach_and_recursion_is_kept() {
        let d = doc(
            Version::V30,
            json!({"components": {"schemas": {
                "Node": {"type": "object", "properties": {
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                    "tag": {"$ref": "#/components/schemas/Tag"}}},
                "Tag": {"type": "string"},
                "Unused": {"type": "string"}
            }}}),
        );
        let mut set = SchemaSet::new(&d);
        let c = set
            .convert(&json!({"$ref": "#/components/schemas/Node"}), "/r")
            .unwrap();
        let text = set.bundle(&c.value, &c.edges, "/r").unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["$ref"], "#/$defs/Node");
        assert!(v["$defs"]["Node"].is_object());
        assert_eq!(v["$defs"]["Tag"], json!({"type": "string"}));
        assert!(v["$defs"].get("Unused").is_none());
        set.check_cycles().unwrap();
        set.check_defs().unwrap();
        let validator = jsonschema::draft202012::new(&v).unwrap();
        assert!(validator.is_valid(&json!({"children": [{"children": [], "tag": "a"}]})));
        assert!(!validator.is_valid(&json!({"children": [{"tag": 1}]})));
    }

    #[test]
    fn in_place_cycles_are_refused() {
        let d = doc(
            Version::V30,
            json!({"components": {"schemas": {
                "A": {"allOf": [{"$ref": "#/components/schemas/B"}]},
                "B": {"$ref": "#/components/schemas/A"}
            }}}),
        );
        let mut set = SchemaSet::new(&d);
        let c = set
            .convert(&json!({"$ref": "#/components/schemas/A"}), "/r")
            .unwrap();
        set.bundle(&c.value, &c.edges, "/r").unwrap();
        assert!(matches!(
            set.check_cycles(),
            Err(OpenApiError::RefCycle { .. })
        ));
    }

    #[test]
    fn aliases_resolve_to_the_object() {
        let d = doc(
            Version::V30,
            json!({"components": {"schemas": {
                "A": {"$ref": "#/components/schemas/B"},
                "B": {"type": "object", "properties": {"x": {"type": "string"}}}
            }}}),
        );
        let mut set = SchemaSet::new(&d);
        let c = set
            .convert(&json!({"$ref": "#/components/schemas/A"}), "/r")
            .unwrap();
        let r = set.resolve_alias(c, "/r").unwrap();
        assert!(is_object_schema(&r.value));
        assert!(r.edges.is_empty());
    }

    #[test]
    fn base_moving_keywords_are_refused() {
        let d = doc(Version::V31, json!({}));
        let set = SchemaSet::new(&d);
        assert!(matches!(
            set.convert(&json!({"properties": {"a": {"$id": "x"}}}), "/s"),
            Err(OpenApiError::UnsupportedKeyword { keyword: "$id", .. })
        ));
        assert!(matches!(
            set.convert(&json!({"$ref": "other.json#/A"}), "/s"),
            Err(OpenApiError::RemoteRef { .. })
        ));
    }
}

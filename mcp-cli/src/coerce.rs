//! Tool arguments typed on the command line, read as the tool's
//! `inputSchema` says.
//!
//! `key=value` takes the property's declared `type`: `integer` and `number`
//! parse as numbers, `boolean` as `true`/`false`, `array` as JSON (`[1,2]`)
//! or else comma-separated items read by `items.type`, `object` as JSON,
//! `null` as `null`; a union such as `["integer", "null"]` tries each in
//! order; a property without a type stays a string. `key:=JSON` takes the
//! JSON as it is. Whether the result satisfies the whole schema (required
//! properties, ranges, enums) is checked by the session before anything is
//! sent.

use std::io::Read;

use serde_json::{Map, Value};

use crate::error::{ArgumentProblem, CliError, ENUM_SHOWN};

/// Largest `--args` read from a file or standard input (4 MiB). What is
/// sent is bounded again by the session (1 MiB of arguments).
pub(crate) const MAX_ARGS_BYTES: u64 = 4 * 1024 * 1024;

/// The JSON text of `--args VALUE`: `@FILE` reads the file, `-` standard
/// input, anything else is the JSON itself. More than [`MAX_ARGS_BYTES`] is
/// refused by name, never cut.
pub(crate) fn args_text(value: &str) -> Result<String, CliError> {
    let (from, reader): (String, Box<dyn Read>) = if value == "-" {
        ("standard input".to_owned(), Box::new(std::io::stdin()))
    } else if let Some(path) = value.strip_prefix('@') {
        let from = format!("file {path}");
        match std::fs::File::open(path) {
            Ok(file) => (from, Box::new(file)),
            Err(source) => return Err(CliError::ArgsRead { from, source }),
        }
    } else {
        return Ok(value.to_owned());
    };
    let mut bytes = Vec::new();
    reader
        .take(MAX_ARGS_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| CliError::ArgsRead {
            from: from.clone(),
            source,
        })?;
    if bytes.len() as u64 > MAX_ARGS_BYTES {
        return Err(CliError::ArgsTooLarge {
            from,
            limit: MAX_ARGS_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| CliError::ArgsNotText { from })
}

/// Builds the argument object from `--args` and `key=value` words.
pub(crate) fn arguments(
    schema: Option<&Value>,
    args_json: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, CliError> {
    let mut out = match args_json {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(argument_error("--args", ArgumentProblem::ArgsNotObject)),
            Err(_) => return Err(argument_error("--args", ArgumentProblem::NotJson)),
        },
    };
    let mut from_pairs: Vec<String> = Vec::new();
    for pair in pairs {
        let (key, value) = parse_pair(schema, pair)?;
        if from_pairs.contains(&key) || out.contains_key(&key) {
            return Err(argument_error(&key, ArgumentProblem::Duplicate));
        }
        from_pairs.push(key.clone());
        out.insert(key, value);
    }
    check_enums(schema, &out)?;
    check_misspelt(schema, &out, &from_pairs)?;
    Ok(out)
}

/// Refuses a `key=value` whose key is not a property of the schema but is
/// close to a required property that was not given (`mesage=hi` for
/// `message`): sent, the call would be refused for the missing one without
/// a word about the typo. A schema that allows no other property refuses
/// the key already (`property_schema`).
fn check_misspelt(
    schema: Option<&Value>,
    arguments: &Map<String, Value>,
    keys: &[String],
) -> Result<(), CliError> {
    let Some(schema) = schema else {
        return Ok(());
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let missing: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| !arguments.contains_key(*name))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    for key in keys {
        if properties.is_some_and(|p| p.contains_key(key)) {
            continue;
        }
        let closest = crate::suggest::closest(key, missing.iter().copied());
        if !closest.is_empty() {
            return Err(argument_error(key, ArgumentProblem::Misspelt { closest }));
        }
    }
    Ok(())
}

/// Refuses a top-level argument outside its property's `enum`, listing
/// the allowed values (the session would refuse it too, without them).
fn check_enums(schema: Option<&Value>, arguments: &Map<String, Value>) -> Result<(), CliError> {
    let Some(properties) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return Ok(());
    };
    let root = schema.unwrap_or(&Value::Null);
    for (key, value) in arguments {
        let Some(allowed) = properties
            .get(key)
            .and_then(|p| enum_values(root, p, ENUM_DEPTH))
        else {
            continue;
        };
        if allowed.is_empty() || allowed.contains(value) {
            continue;
        }
        let shown = allowed
            .iter()
            .take(ENUM_SHOWN)
            .map(|v| crate::output::one_line(&v.to_string(), 80))
            .collect();
        return Err(argument_error(
            key,
            ArgumentProblem::NotOneOf {
                allowed: shown,
                more: allowed.len().saturating_sub(ENUM_SHOWN),
            },
        ));
    }
    Ok(())
}

/// How many `$ref` / `anyOf` levels [`enum_values`] looks through.
const ENUM_DEPTH: usize = 4;

/// The values a property schema allows, when it is a closed set: its own
/// `enum`, or one reached through a local `$ref` (`#/$defs/…`) or an
/// `anyOf` / `oneOf` whose every branch is such a set or `{"type": "null"}`
/// (as generated documents write an optional enum). `None` when the set is
/// open or deeper than `depth`.
fn enum_values(root: &Value, schema: &Value, depth: usize) -> Option<Vec<Value>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    let depth = depth.checked_sub(1)?;
    if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(pointer.strip_prefix('#')?)?;
        return enum_values(root, target, depth);
    }
    let branches = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)?;
    let mut all = Vec::new();
    for branch in branches {
        if branch.get("type").and_then(Value::as_str) == Some("null")
            && branch.as_object()?.len() == 1
        {
            all.push(Value::Null);
        } else {
            all.extend(enum_values(root, branch, depth)?);
        }
    }
    Some(all)
}

/// Whether `word` reads as an argument, `key=value` or `key:=JSON` (a key
/// of at least one character before the `=`), rather than a name.
pub(crate) fn is_pair(word: &str) -> bool {
    matches!(word.find('='), Some(eq) if eq > 0 && &word[..eq] != ":")
}

fn argument_error(name: &str, problem: ArgumentProblem) -> CliError {
    CliError::Argument {
        name: name.to_owned(),
        problem,
    }
}

/// One `key=value` or `key:=json`.
fn parse_pair(schema: Option<&Value>, pair: &str) -> Result<(String, Value), CliError> {
    let eq = pair
        .find('=')
        .filter(|&i| i > 0)
        .ok_or_else(|| argument_error(pair, ArgumentProblem::NotKeyValue))?;
    let (key, raw_json) = match pair[..eq].strip_suffix(':') {
        Some(key) if !key.is_empty() => (key, true),
        Some(_) => return Err(argument_error(pair, ArgumentProblem::NotKeyValue)),
        None => (&pair[..eq], false),
    };
    let text = &pair[eq + 1..];
    if raw_json {
        let value = serde_json::from_str(text)
            .map_err(|_| argument_error(key, ArgumentProblem::NotJson))?;
        return Ok((key.to_owned(), value));
    }
    let property = property_schema(schema, key)?;
    let value = coerce(key, text, property)?;
    Ok((key.to_owned(), value))
}

/// The schema of property `key`; an unknown key is refused when the schema
/// lists its properties and does not allow others.
fn property_schema<'a>(
    schema: Option<&'a Value>,
    key: &str,
) -> Result<Option<&'a Value>, CliError> {
    let Some(schema) = schema else {
        return Ok(None);
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(property) = properties.and_then(|p| p.get(key)) {
        return Ok(Some(property));
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    if closed {
        let known = properties
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        return Err(argument_error(
            key,
            ArgumentProblem::UnknownProperty { known },
        ));
    }
    Ok(None)
}

/// The declared types of a property schema, in order.
fn declared_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => {
            // `enum` / `const` of non-strings: read the value as JSON.
            let values = schema
                .get("enum")
                .and_then(Value::as_array)
                .map(|v| v.iter().collect::<Vec<_>>())
                .or_else(|| schema.get("const").map(|c| vec![c]))
                .unwrap_or_default();
            if !values.is_empty() && values.iter().all(|v| !v.is_string()) {
                vec!["json"]
            } else {
                Vec::new()
            }
        }
    }
}

fn coerce(key: &str, text: &str, property: Option<&Value>) -> Result<Value, CliError> {
    let Some(property) = property else {
        return Ok(Value::String(text.to_owned()));
    };
    let types = declared_types(property);
    if types.is_empty() {
        return Ok(Value::String(text.to_owned()));
    }
    for ty in &types {
        if let Some(value) = read_as(ty, text, property) {
            return Ok(value);
        }
    }
    Err(argument_error(
        key,
        ArgumentProblem::NotOfType {
            expected: types.iter().map(|t| type_words(t)).collect(),
        },
    ))
}

fn read_as(ty: &str, text: &str, property: &Value) -> Option<Value> {
    match ty {
        "string" => Some(Value::String(text.to_owned())),
        "integer" => text.trim().parse::<i64>().ok().map(Value::from),
        "number" => {
            let t = text.trim();
            t.parse::<i64>().map(Value::from).ok().or_else(|| {
                t.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(Value::from)
            })
        }
        "boolean" => match text.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => (text.trim() == "null").then_some(Value::Null),
        "object" => match serde_json::from_str(text) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => None,
        },
        "array" => {
            if text.trim_start().starts_with('[') {
                return match serde_json::from_str(text) {
                    Ok(v @ Value::Array(_)) => Some(v),
                    _ => None,
                };
            }
            if text.is_empty() {
                return Some(Value::Array(Vec::new()));
            }
            let items = property.get("items");
            let item_types = items.map(declared_types).unwrap_or_default();
            text.split(',')
                .map(|part| {
                    if item_types.is_empty() {
                        Some(Value::String(part.to_owned()))
                    } else {
                        item_types
                            .iter()
                            .find_map(|t| read_as(t, part, items.unwrap_or(&Value::Null)))
                    }
                })
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        "json" => serde_json::from_str(text).ok(),
        _ => None,
    }
}

fn type_words(ty: &str) -> &'static str {
    match ty {
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        "null" => "null",
        "object" => "a JSON object",
        "array" => "a JSON array or comma-separated items",
        "json" => "one of the listed JSON values",
        _ => "a value of another type",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pairs_are_told_from_names() {
        for word in ["a=1", "a:=[1]", "text=", "a=b=c", "k:=", "x:y=1"] {
            assert!(is_pair(word), "{word}");
        }
        for word in ["search", "notes/search", "=1", ":=1", "a:b", ""] {
            assert!(!is_pair(word), "{word}");
        }
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "ratio": {"type": "number"},
                "deep": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "filter": {"type": "object"},
                "maybe": {"type": ["integer", "null"]},
                "level": {"enum": [1, 2, 3]},
                "free": {}
            }
        })
    }

    fn args(pairs: &[&str]) -> Result<Value, CliError> {
        let pairs: Vec<String> = pairs.iter().map(|s| s.to_string()).collect();
        arguments(Some(&schema()), None, &pairs).map(Value::Object)
    }

    #[test]
    fn values_follow_the_schema() {
        let got = args(&[
            "query=42",
            "limit=5",
            "ratio=0.5",
            "deep=true",
            "tags=a,b",
            "ids=[1,2]",
            "filter={\"a\":1}",
            "maybe=null",
            "level=2",
            "free=true",
            "raw:=[1,\"x\"]",
            "empty=",
        ])
        .unwrap();
        assert_eq!(
            got,
            json!({
                "query": "42", "limit": 5, "ratio": 0.5, "deep": true, "tags": ["a", "b"],
                "ids": [1, 2], "filter": {"a": 1}, "maybe": null, "level": 2, "free": "true",
                "raw": [1, "x"], "empty": ""
            })
        );
        assert_eq!(args(&["ids=3,4"]).unwrap(), json!({"ids": [3, 4]}));
        assert_eq!(args(&["maybe=7"]).unwrap(), json!({"maybe": 7}));
    }

    #[test]
    fn readable_errors() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["limit=five"],
                "argument `limit`: the tool's inputSchema expects an integer",
            ),
            (
                &["deep=yes"],
                "argument `deep`: the tool's inputSchema expects true or false",
            ),
            (
                &["ids=1,x"],
                "argument `ids`: the tool's inputSchema expects a JSON array or comma-separated items",
            ),
            (
                &["query"],
                "argument `query`: expected KEY=VALUE or KEY:=JSON",
            ),
            (&["=x"], "argument `=x`: expected KEY=VALUE or KEY:=JSON"),
            (&["a=1", "a=2"], "argument `a`: given more than once"),
            (&["raw:={"], "argument `raw`: the value is not valid JSON"),
            (
                &["maybe=x"],
                "argument `maybe`: the tool's inputSchema expects an integer or null",
            ),
        ];
        for (pairs, message) in cases {
            assert_eq!(args(pairs).unwrap_err().to_string(), *message, "{pairs:?}");
        }
    }

    #[test]
    fn an_enum_behind_a_ref_or_an_optional_any_of_is_found() {
        let root = json!({
            "$defs": {"Kind": {"type": "string", "enum": ["dog", "cat"]}},
            "properties": {
                "kind": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]},
                "open": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "string"}]},
                "loop": {"$ref": "#/properties/loop"}
            }
        });
        let props = &root["properties"];
        assert_eq!(
            enum_values(&root, &props["kind"], ENUM_DEPTH),
            Some(vec![json!("dog"), json!("cat"), Value::Null])
        );
        assert_eq!(enum_values(&root, &props["open"], ENUM_DEPTH), None);
        assert_eq!(enum_values(&root, &props["loop"], ENUM_DEPTH), None);
        let mut arguments = Map::new();
        arguments.insert("kind".into(), json!("fish"));
        match check_enums(Some(&root), &arguments) {
            Err(CliError::Argument {
                problem: ArgumentProblem::NotOneOf { allowed, .. },
                ..
            }) => assert_eq!(allowed, ["\"dog\"", "\"cat\"", "null"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_outside_an_enum_are_refused_with_the_allowed_ones() {
        let schema = json!({"type": "object", "properties": {
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "level": {"enum": [1, 2]}
        }});
        let pairs = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let err = arguments(Some(&schema), None, &pairs(&["mode=medium"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "argument `mode`: the tool's inputSchema allows only \"fast\", \"slow\""
        );
        let err = arguments(Some(&schema), Some(r#"{"level": 3}"#), &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "argument `level`: the tool's inputSchema allows only 1, 2"
        );
        assert!(arguments(Some(&schema), None, &pairs(&["mode=slow", "level=2"])).is_ok());
    }

    #[test]
    fn args_json_merges_and_closed_schemas_refuse_unknown_keys() {
        let pairs = vec!["limit=2".to_owned()];
        let merged = arguments(Some(&schema()), Some(r#"{"query": "x"}"#), &pairs).unwrap();
        assert_eq!(Value::Object(merged), json!({"query": "x", "limit": 2}));
        let dup = arguments(Some(&schema()), Some(r#"{"limit": 1}"#), &pairs).unwrap_err();
        assert!(dup.to_string().contains("given more than once"));
        assert!(arguments(None, Some("[1]"), &[]).is_err());
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        let err = arguments(Some(&closed), None, &["b=1".to_owned()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "argument `b`: the tool has no such argument (it takes: a)"
        );
    }

    #[test]
    fn a_key_one_typo_from_a_missing_required_property_is_refused() {
        let open = json!({"type": "object",
            "properties": {"message": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["message"]});
        let call = |words: &[&str]| {
            let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            arguments(Some(&open), None, &words)
        };
        assert_eq!(
            call(&["mesage=hi"]).unwrap_err().to_string(),
            "argument `mesage`: the tool has no such argument; did you mean `message`?"
        );
        // The required one given, or nothing close: the key is sent as it is
        // (the schema allows other properties).
        assert!(call(&["message=hi", "mesage=x"]).is_ok());
        assert!(call(&["message=hi", "limt=2"]).is_ok());
        assert!(call(&["colour=red"]).is_ok());
    }
}

//! The 2026-07-28 HTTP request headers mirrored from the body: their names,
//! value encoding (`Mcp-Name`, `Mcp-Param-*`) and the `x-mcp-header`
//! annotations of a tool's `inputSchema`.
//!
//! Protocol rules, not transport ones: the session computes the headers of
//! each request with these functions and hands the transport finished
//! name/value pairs; the transport knows no tool schema. A server checks
//! what it received with [`check_param_headers`] (the server half's HTTP
//! binding and the testkit share it).
//!
//! Value encoding (spec, "Value Encoding"): strings are sent as they are when
//! every character is visible ASCII or an inner space, they have no leading or
//! trailing whitespace and do not look like the sentinel; anything else is
//! sent as `=?base64?<Base64 of the UTF-8>?=`. Integers are decimal, booleans
//! `true` / `false`; a `null` or absent value means the header is omitted.

use base64::Engine as _;
use serde_json::Value;

/// The header naming a request's method.
pub const MCP_METHOD: &str = "Mcp-Method";
/// The header naming the tool, prompt or resource a request is about.
pub const MCP_NAME: &str = "Mcp-Name";
/// The prefix of every parameter header: `Mcp-Param-{x-mcp-header}`.
pub const MCP_PARAM_PREFIX: &str = "Mcp-Param-";
/// The annotation keyword in a property's schema.
pub const X_MCP_HEADER: &str = "x-mcp-header";
/// The largest integer magnitude allowed in a parameter header (2^53 − 1,
/// JavaScript's safe range).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Encodes text for `Mcp-Name` or an `Mcp-Param-*` header: as it is when it
/// is safe, else in the Base64 sentinel form.
pub fn encode_header_value(text: &str) -> String {
    let safe_chars = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = text.starts_with(' ') || text.ends_with(' ');
    let looks_encoded = text.starts_with(SENTINEL_START) && text.ends_with(SENTINEL_END);
    if safe_chars && !padded && !looks_encoded {
        text.to_owned()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        format!("{SENTINEL_START}{encoded}{SENTINEL_END}")
    }
}

/// The header text of one argument value, or `None` when the header must be
/// omitted: `null`, and values a parameter header cannot carry (objects,
/// arrays, fractions, integers outside the safe range), which a valid
/// annotation never points at.
pub fn encode_param_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(encode_header_value(s)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            let int = n.as_i64().or_else(|| {
                // `42.0` is the integer 42 (servers compare numerically).
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64)
                    .map(|f| f as i64)
            })?;
            (int.abs() <= MAX_SAFE_INTEGER).then(|| int.to_string())
        }
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// One valid `x-mcp-header` annotation of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The annotation's value: the header is `Mcp-Param-{name}`.
    pub name: String,
    /// The chain of `properties` keys from the schema root to the property.
    pub path: Vec<String>,
}

impl ParamHeader {
    /// The full header name, `Mcp-Param-{name}`.
    pub fn header_name(&self) -> String {
        format!("{MCP_PARAM_PREFIX}{}", self.name)
    }

    /// The header for these call arguments, or `None` when the value is
    /// absent or `null` (then the header is omitted).
    pub fn header_for(&self, arguments: &Value) -> Option<(String, String)> {
        let mut value = arguments;
        for key in &self.path {
            value = value.get(key)?;
        }
        encode_param_value(value).map(|text| (self.header_name(), text))
    }
}

/// Why an `x-mcp-header` annotation makes its tool invalid. `location` is a
/// JSON pointer into the `inputSchema`.
///
/// `Display` leaves the location out: it is made of the server's property
/// names, which may hold control characters. Get it from
/// [`HeaderAnnotationProblem::location`] and show it escaped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderAnnotationProblem {
    /// The annotation is not a string.
    NotAString {
        /// Where the annotation is.
        location: String,
    },
    /// The annotation is empty.
    Empty {
        /// Where the annotation is.
        location: String,
    },
    /// The annotation is not an HTTP field-name token (space, colon,
    /// non-ASCII or control characters …).
    NotAToken {
        /// Where the annotation is.
        location: String,
    },
    /// The annotated property is not of type integer, string or boolean.
    NotPrimitive {
        /// Where the annotation is.
        location: String,
    },
    /// Two annotations share a name (compared case-insensitively).
    Duplicate {
        /// Where the second annotation is.
        location: String,
    },
    /// The annotation is not on a property reachable from the root through
    /// `properties` keys only (it is under `items`, `oneOf`, `$defs` …).
    NotReachable {
        /// Where the annotation is.
        location: String,
    },
}

impl std::fmt::Display for HeaderAnnotationProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeaderAnnotationProblem::NotAString { .. } => "x-mcp-header is not a string",
            HeaderAnnotationProblem::Empty { .. } => "x-mcp-header is empty",
            HeaderAnnotationProblem::NotAToken { .. } => {
                "x-mcp-header is not a valid header name token"
            }
            HeaderAnnotationProblem::NotPrimitive { .. } => {
                "x-mcp-header is on a property that is not integer, string or boolean"
            }
            HeaderAnnotationProblem::Duplicate { .. } => {
                "x-mcp-header repeats the name of another annotation"
            }
            HeaderAnnotationProblem::NotReachable { .. } => {
                "x-mcp-header is not on a statically reachable property"
            }
        })
    }
}

impl HeaderAnnotationProblem {
    /// Where the annotation is: a JSON pointer into the `inputSchema`, made
    /// of the server's property names (show it escaped).
    pub fn location(&self) -> &str {
        match self {
            HeaderAnnotationProblem::NotAString { location }
            | HeaderAnnotationProblem::Empty { location }
            | HeaderAnnotationProblem::NotAToken { location }
            | HeaderAnnotationProblem::NotPrimitive { location }
            | HeaderAnnotationProblem::Duplicate { location }
            | HeaderAnnotationProblem::NotReachable { location } => location,
        }
    }
}

/// [`param_headers`] of a schema still in its JSON text (as a listed tool
/// holds it). A text that cannot hold an annotation is not parsed: the key
/// written out is not in it, and neither is a `\u` escape that could spell
/// it (no other escape can: none of its characters has a short one). A
/// listing of 50 tools is read once, not twice, when none is annotated.
pub fn param_headers_of(
    schema: &crate::JsonSchemaDoc,
) -> Result<Vec<ParamHeader>, Vec<HeaderAnnotationProblem>> {
    let text = schema.as_raw().get();
    if !text.contains(X_MCP_HEADER) && !text.contains("\\u") {
        return Ok(Vec::new());
    }
    param_headers(&schema.to_value().unwrap_or(Value::Null))
}

/// Reads the `x-mcp-header` annotations of a tool's `inputSchema`.
///
/// `Ok` holds the headers of a valid tool (possibly none); `Err` every
/// problem found, in schema order: the spec says such a tool must be left
/// out of the tool list (with a warning naming the tool and the reason).
pub fn param_headers(
    input_schema: &Value,
) -> Result<Vec<ParamHeader>, Vec<HeaderAnnotationProblem>> {
    let mut found = Vec::new();
    let mut at = Position {
        steps: Vec::new(),
        names: Some(Vec::new()),
    };
    walk(input_schema, &mut at, &mut found);
    let mut problems = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut headers = Vec::new();
    for (location, path, annotation, schema) in found {
        let Some(name) = annotation.as_str() else {
            problems.push(HeaderAnnotationProblem::NotAString { location });
            continue;
        };
        let problem = if name.is_empty() {
            Some(HeaderAnnotationProblem::Empty { location })
        } else if !name.bytes().all(is_tchar) {
            Some(HeaderAnnotationProblem::NotAToken { location })
        } else if !is_primitive(schema) {
            Some(HeaderAnnotationProblem::NotPrimitive { location })
        } else if seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            Some(HeaderAnnotationProblem::Duplicate { location })
        } else if path.as_ref().is_none_or(Vec::is_empty) {
            Some(HeaderAnnotationProblem::NotReachable { location })
        } else {
            None
        };
        match problem {
            Some(problem) => problems.push(problem),
            None => {
                seen.push(name.to_owned());
                headers.push(ParamHeader {
                    name: name.to_owned(),
                    path: path.unwrap_or_default(),
                });
            }
        }
    }
    if problems.is_empty() {
        Ok(headers)
    } else {
        Err(problems)
    }
}

/// The `Mcp-Param-*` headers of one call, in annotation order.
pub fn param_header_values(headers: &[ParamHeader], arguments: &Value) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|h| h.header_for(arguments))
        .collect()
}

/// Decodes a received `Mcp-Name` or `Mcp-Param-*` value: the Base64
/// sentinel form (`=?base64?…?=`, canonical padding, UTF-8) is decoded, any
/// other text is taken literally. `None` for a sentinel form that does not
/// decode.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix(SENTINEL_START)
        .and_then(|rest| rest.strip_suffix(SENTINEL_END))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_owned()),
    }
}

/// Why a request's `Mcp-Param-*` headers disagree with its arguments (a
/// server answers `-32020`, HTTP 400). Each names the header by the tool's
/// annotation (a valid token); no value is carried.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamHeaderMismatch {
    /// The argument is present but its header is not.
    Missing {
        /// The full header name, `Mcp-Param-{name}`.
        header: String,
    },
    /// The header is present but the argument is absent or `null`.
    Unexpected {
        /// The full header name.
        header: String,
    },
    /// The header's value is not visible ASCII, or a Base64 sentinel form
    /// that does not decode (bad alphabet, bad padding, not UTF-8).
    Invalid {
        /// The full header name.
        header: String,
    },
    /// The header's (decoded) value is not the argument's.
    Different {
        /// The full header name.
        header: String,
    },
}

impl std::fmt::Display for ParamHeaderMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamHeaderMismatch::Missing { header } => {
                write!(f, "Header mismatch: the {header} header is required")
            }
            ParamHeaderMismatch::Unexpected { header } => write!(
                f,
                "Header mismatch: the {header} header is sent but its argument is not"
            ),
            ParamHeaderMismatch::Invalid { header } => write!(
                f,
                "Header mismatch: the {header} header has invalid characters or Base64"
            ),
            ParamHeaderMismatch::Different { header } => {
                write!(
                    f,
                    "Header mismatch: the {header} header does not match the body"
                )
            }
        }
    }
}

impl std::error::Error for ParamHeaderMismatch {}

/// Checks one `tools/call`'s `Mcp-Param-*` headers against its arguments
/// (a server's side of SEP-2243): for each of the tool's annotations the
/// header is present exactly when the argument is (and not `null`), and
/// its value, trimmed and decoded ([`decode_header_value`]), is the
/// argument's: a string equal, a boolean `true` / `false`, a number equal
/// as a number (`42.0` is `42`). An argument no header can carry (an
/// object, an array) is not checked. `sent` gives a header's raw value by
/// its full name (the caller matches names without regard to case),
/// `None` when absent.
pub fn check_param_headers<'a>(
    headers: &[ParamHeader],
    arguments: &Value,
    sent: impl Fn(&str) -> Option<&'a [u8]>,
) -> Result<(), ParamHeaderMismatch> {
    for annotation in headers {
        let header = annotation.header_name();
        let mut value = Some(arguments);
        for key in &annotation.path {
            value = value.and_then(|v| v.get(key));
        }
        let value = value.filter(|v| !v.is_null());
        let (value, raw) = match (value, sent(&header)) {
            (None, None) => continue,
            (None, Some(_)) => return Err(ParamHeaderMismatch::Unexpected { header }),
            (Some(Value::Array(_) | Value::Object(_)), _) => continue,
            (Some(_), None) => return Err(ParamHeaderMismatch::Missing { header }),
            (Some(value), Some(raw)) => (value, raw),
        };
        let Some(decoded) = std::str::from_utf8(raw)
            .ok()
            .filter(|text| {
                text.bytes()
                    .all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')
            })
            .map(|text| text.trim_matches([' ', '\t']))
            .and_then(decode_header_value)
        else {
            return Err(ParamHeaderMismatch::Invalid { header });
        };
        let same = match value {
            Value::String(s) => decoded == *s,
            Value::Bool(b) => decoded == b.to_string(),
            Value::Number(n) => decoded.parse::<f64>().ok().filter(|f| f.is_finite()) == n.as_f64(),
            _ => true,
        };
        if !same {
            return Err(ParamHeaderMismatch::Different { header });
        }
    }
    Ok(())
}

/// Keywords whose values are instance data, not schemas: an `x-mcp-header`
/// key inside them is not an annotation.
const DATA_KEYWORDS: [&str; 5] = ["const", "enum", "default", "examples", "example"];

type Found<'a> = (String, Option<Vec<String>>, &'a Value, &'a Value);

/// One step of the JSON pointer to the node being walked.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where the walk is: the pointer's steps, and the `properties` names from
/// the root while every step so far went through `properties` (`None` once
/// one did not). Strings are made only for an annotation found, not for
/// every node of every schema of a long tool list.
struct Position<'a> {
    steps: Vec<Step<'a>>,
    names: Option<Vec<&'a str>>,
}

impl Position<'_> {
    fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            out.push('/');
            match step {
                Step::Key(key) => out.push_str(&escape_pointer(key)),
                Step::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }
}

/// Collects every annotation: its JSON pointer, its `properties` path when it
/// is statically reachable, the annotation value and the schema holding it.
fn walk<'a>(schema: &'a Value, at: &mut Position<'a>, found: &mut Vec<Found<'a>>) {
    match schema {
        Value::Object(map) => {
            if let Some(annotation) = map.get(X_MCP_HEADER) {
                at.steps.push(Step::Key(X_MCP_HEADER));
                let location = at.pointer();
                at.steps.pop();
                let path = at
                    .names
                    .as_ref()
                    .map(|names| names.iter().map(|n| (*n).to_owned()).collect());
                found.push((location, path, annotation, schema));
            }
            for (key, sub) in map {
                if key == X_MCP_HEADER || DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                at.steps.push(Step::Key(key));
                match (key.as_str(), sub) {
                    ("properties", Value::Object(props)) => {
                        for (name, prop) in props {
                            at.steps.push(Step::Key(name));
                            if let Some(names) = &mut at.names {
                                names.push(name);
                            }
                            walk(prop, at, found);
                            if let Some(names) = &mut at.names {
                                names.pop();
                            }
                            at.steps.pop();
                        }
                    }
                    _ => unreachable_below(sub, at, found),
                }
                at.steps.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.steps.push(Step::Index(i));
                unreachable_below(item, at, found);
                at.steps.pop();
            }
        }
        _ => {}
    }
}

/// Walks `schema` as a node no `properties` path reaches statically.
fn unreachable_below<'a>(schema: &'a Value, at: &mut Position<'a>, found: &mut Vec<Found<'a>>) {
    if !matches!(schema, Value::Object(_) | Value::Array(_)) {
        return;
    }
    let names = at.names.take();
    walk(schema, at, found);
    at.names = names;
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `type` is integer, string or boolean (a list of one of them, maybe with
/// `null`, counts too).
fn is_primitive(schema: &Value) -> bool {
    let primitive = |t: &str| matches!(t, "integer" | "string" | "boolean");
    match schema.get("type") {
        Some(Value::String(t)) => primitive(t),
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            names.len() == types.len()
                && names.iter().filter(|t| primitive(t)).count() == 1
                && names.iter().all(|t| primitive(t) || *t == "null")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_encode_as_in_the_spec_examples() {
        // The table of "Value Encoding", 2026-07-28 streamable-http.mdx.
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn edge_values_encode_safely() {
        assert_eq!(encode_header_value(""), "");
        assert_eq!(encode_header_value("a b"), "a b");
        assert!(encode_header_value("\tindented").starts_with("=?base64?"));
        assert!(encode_header_value("a\tb").starts_with("=?base64?"));
        assert!(encode_header_value("x\r\n").starts_with("=?base64?"));
        assert!(encode_header_value("trailing ").starts_with("=?base64?"));
        assert_eq!(encode_param_value(&json!(42)), Some("42".into()));
        assert_eq!(encode_param_value(&json!(-7)), Some("-7".into()));
        assert_eq!(encode_param_value(&json!(42.0)), Some("42".into()));
        assert_eq!(encode_param_value(&json!(true)), Some("true".into()));
        assert_eq!(encode_param_value(&json!(false)), Some("false".into()));
        assert_eq!(encode_param_value(&json!(null)), None);
        assert_eq!(encode_param_value(&json!(3.5)), None);
        assert_eq!(encode_param_value(&json!(1_i64 << 53)), None);
        assert_eq!(encode_param_value(&json!({"a": 1})), None);
    }

    #[test]
    fn a_schema_text_is_parsed_only_when_it_can_hold_an_annotation() {
        let plain = crate::JsonSchemaDoc::from_json(
            r#"{"type":"object","properties":{"q":{"type":"string","description":"a \"quoted\" word"}}}"#,
        )
        .unwrap();
        assert_eq!(param_headers_of(&plain), Ok(Vec::new()));
        let region = ParamHeader {
            name: "Region".into(),
            path: vec!["region".into()],
        };
        let written = crate::JsonSchemaDoc::from_json(
            r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
        )
        .unwrap();
        assert_eq!(param_headers_of(&written), Ok(vec![region.clone()]));
        // The key spelled with an escape is the same key.
        let escaped = crate::JsonSchemaDoc::from_json(
            r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-head\u0065r":"Region"}}}"#,
        )
        .unwrap();
        assert_eq!(param_headers_of(&escaped), Ok(vec![region]));
        let broken = crate::JsonSchemaDoc::from_json(
            r#"{"type":"object","properties":{"n":{"type":"object","x-mcp-header":"N"}}}"#,
        )
        .unwrap();
        assert!(param_headers_of(&broken).is_err());
    }

    #[test]
    fn the_spec_example_tool_yields_its_header() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"}
            },
            "required": ["region", "query"]
        });
        let headers = param_headers(&schema).unwrap();
        assert_eq!(
            headers,
            [ParamHeader {
                name: "Region".into(),
                path: vec!["region".into()]
            }]
        );
        let args = json!({"region": "us-west1", "query": "SELECT * FROM users"});
        assert_eq!(
            param_header_values(&headers, &args),
            [("Mcp-Param-Region".to_owned(), "us-west1".to_owned())]
        );
        assert!(param_header_values(&headers, &json!({"region": null})).is_empty());
        assert!(param_header_values(&headers, &json!({})).is_empty());
    }

    /// A lookup of `pairs` by name without regard to case.
    fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a [u8]> {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_bytes())
        }
    }

    #[test]
    fn received_param_headers_are_checked_against_the_arguments() {
        let schema = json!({"type": "object", "properties": {
            "text": {"type": "string", "x-mcp-header": "Text"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "on": {"type": "boolean", "x-mcp-header": "On"}}});
        let headers = param_headers(&schema).unwrap();
        let check = |args: Value, pairs: &[(&str, &str)]| {
            check_param_headers(&headers, &args, lookup(pairs))
        };
        let text = |h: &str| h.to_owned();
        let hello = json!({"text": "Hello"});
        assert_eq!(check(hello.clone(), &[("mcp-param-text", "Hello")]), Ok(()));
        // The sentinel form decodes; a value without the whole sentinel is
        // literal (the SEP-2243 test-case table).
        assert_eq!(
            check(hello.clone(), &[("Mcp-Param-Text", "=?base64?SGVsbG8=?=")]),
            Ok(())
        );
        assert_eq!(
            check(
                json!({"text": "SGVsbG8="}),
                &[("Mcp-Param-Text", "SGVsbG8=")]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                json!({"text": "=?base64?SGVsbG8="}),
                &[("Mcp-Param-Text", "=?base64?SGVsbG8=")]
            ),
            Ok(())
        );
        let invalid = Err(ParamHeaderMismatch::Invalid {
            header: text("Mcp-Param-Text"),
        });
        assert_eq!(
            check(hello.clone(), &[("Mcp-Param-Text", "=?base64?SGVsbG8?=")]),
            invalid,
            "padding"
        );
        assert_eq!(
            check(
                hello.clone(),
                &[("Mcp-Param-Text", "=?base64?SGVs!!!bG8=?=")]
            ),
            invalid,
            "alphabet"
        );
        assert_eq!(
            check(hello.clone(), &[("Mcp-Param-Text", "H\u{e9}llo")]),
            invalid,
            "not visible ASCII"
        );
        assert_eq!(
            check(hello.clone(), &[("Mcp-Param-Text", "Bye")]),
            Err(ParamHeaderMismatch::Different {
                header: text("Mcp-Param-Text")
            })
        );
        assert_eq!(
            check(hello, &[]),
            Err(ParamHeaderMismatch::Missing {
                header: text("Mcp-Param-Text")
            })
        );
        assert_eq!(
            check(json!({"text": null}), &[("Mcp-Param-Text", "x")]),
            Err(ParamHeaderMismatch::Unexpected {
                header: text("Mcp-Param-Text")
            })
        );
        assert_eq!(check(json!({"text": null}), &[]), Ok(()));
        // Numbers compare as numbers, booleans by their words.
        assert_eq!(check(json!({"n": 42}), &[("Mcp-Param-N", "42.0")]), Ok(()));
        assert!(check(json!({"n": 42}), &[("Mcp-Param-N", "43")]).is_err());
        assert_eq!(
            check(json!({"on": true}), &[("Mcp-Param-On", "true")]),
            Ok(())
        );
        assert!(check(json!({"on": true}), &[("Mcp-Param-On", "TRUE")]).is_err());
        // What the client's encoder sends passes the server's check.
        let args = json!({"text": " Hello, 世界 ", "n": -7, "on": false});
        let sent = param_header_values(&headers, &args);
        let pairs: Vec<(&str, &str)> = sent.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(check(args, &pairs), Ok(()));
    }

    #[test]
    fn nested_properties_are_reachable() {
        let schema = json!({"type": "object", "properties": {
            "outer": {"type": "object", "properties": {
                "tenant": {"type": "integer", "x-mcp-header": "Tenant"}}}}});
        let headers = param_headers(&schema).unwrap();
        assert_eq!(headers[0].path, ["outer", "tenant"]);
        assert_eq!(
            param_header_values(&headers, &json!({"outer": {"tenant": 7}})),
            [("Mcp-Param-Tenant".to_owned(), "7".to_owned())]
        );
    }

    fn problem_of(property: Value) -> HeaderAnnotationProblem {
        let schema = json!({"type": "object", "properties": {"p": property}});
        let mut problems = param_headers(&schema).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        problems.remove(0)
    }

    #[test]
    fn invalid_annotations_are_named() {
        // The invalid tools of the conformance scenario `http-invalid-tool-headers`.
        let loc = "/properties/p/x-mcp-header".to_owned();
        assert_eq!(
            problem_of(json!({"type": "string", "x-mcp-header": ""})),
            HeaderAnnotationProblem::Empty {
                location: loc.clone()
            }
        );
        for bad in ["Has Space", "Has:Colon", "Région", "Region\t1"] {
            assert_eq!(
                problem_of(json!({"type": "string", "x-mcp-header": bad})),
                HeaderAnnotationProblem::NotAToken {
                    location: loc.clone()
                },
                "{bad}"
            );
        }
        for ty in ["object", "array", "null", "number"] {
            assert_eq!(
                problem_of(json!({"type": ty, "x-mcp-header": "X"})),
                HeaderAnnotationProblem::NotPrimitive {
                    location: loc.clone()
                },
                "{ty}"
            );
        }
        assert_eq!(
            problem_of(json!({"type": "string", "x-mcp-header": 5})),
            HeaderAnnotationProblem::NotAString { location: loc }
        );
    }

    #[test]
    fn a_location_made_of_server_names_stays_out_of_display() {
        // The property name is the server's: it could clear the screen.
        let schema = json!({"type": "object", "properties": {
            "\u{1b}[2Jforged": {"type": "object", "x-mcp-header": "X"}}});
        let problems = param_headers(&schema).unwrap_err();
        let [problem] = &problems[..] else {
            panic!("{problems:?}")
        };
        assert_eq!(
            problem.location(),
            "/properties/\u{1b}[2Jforged/x-mcp-header"
        );
        let shown = problem.to_string();
        assert!(
            !shown.contains('\u{1b}') && !shown.contains("forged"),
            "{shown}"
        );
        assert_eq!(
            shown,
            "x-mcp-header is on a property that is not integer, string or boolean"
        );
    }

    #[test]
    fn duplicates_and_unreachable_annotations_are_refused() {
        let dup = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}}});
        assert!(matches!(
            param_headers(&dup).unwrap_err()[..],
            [HeaderAnnotationProblem::Duplicate { .. }]
        ));
        let under_items = json!({"type": "object", "properties": {
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}});
        assert_eq!(
            param_headers(&under_items).unwrap_err(),
            [HeaderAnnotationProblem::NotReachable {
                location: "/properties/list/items/x-mcp-header".into()
            }]
        );
        let under_one_of = json!({"type": "object", "oneOf": [
            {"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]});
        assert!(matches!(
            param_headers(&under_one_of).unwrap_err()[..],
            [HeaderAnnotationProblem::NotReachable { .. }]
        ));
        // Instance data that happens to hold the keyword is not an annotation.
        let in_default = json!({"type": "object", "properties": {
            "o": {"type": "object", "default": {"x-mcp-header": "nope"}}}});
        assert_eq!(param_headers(&in_default), Ok(vec![]));
    }
}

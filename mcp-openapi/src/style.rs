//! Parameter serialisation by `style` and `explode` (OpenAPI 3.0 / 3.1,
//! after RFC 6570).
//!
//! | location | styles |
//! |---|---|
//! | path | `simple` (default), `label`, `matrix` |
//! | query | `form` (default), `spaceDelimited`, `pipeDelimited`, `deepObject` (explode only) |
//! | header | `simple` |
//! | cookie | `form` |
//!
//! Anything else is refused when the document is loaded. Values are
//! primitives, arrays of primitives or objects of primitives; a value
//! nested deeper has no defined serialisation and is refused at the call
//! (a parameter with `content` instead of a style is sent as its JSON
//! text, so any value goes there).

use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

/// Everything but RFC 3986's unreserved characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `allowReserved`: RFC 3986's reserved characters stay, except `#` (which
/// would end the query) and `%` (which is not reserved).
const RESERVED_KEPT: &AsciiSet = &COMPONENT
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// Characters of a path template's literal text that cannot stand in a URL
/// path as they are.
const PATH_LITERAL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|');

/// Where a parameter goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

impl Location {
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "path" => Some(Location::Path),
            "query" => Some(Location::Query),
            "header" => Some(Location::Header),
            "cookie" => Some(Location::Cookie),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
        }
    }
}

/// A serialisation style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

/// The style and explode flag of a parameter, or `None` when the pair is
/// not supported in its location.
pub(crate) fn choose(
    location: Location,
    style: Option<&str>,
    explode: Option<bool>,
) -> Option<(Style, bool)> {
    let style = match style {
        None => match location {
            Location::Path | Location::Header => Style::Simple,
            Location::Query | Location::Cookie => Style::Form,
        },
        Some("simple") => Style::Simple,
        Some("label") => Style::Label,
        Some("matrix") => Style::Matrix,
        Some("form") => Style::Form,
        Some("spaceDelimited") => Style::SpaceDelimited,
        Some("pipeDelimited") => Style::PipeDelimited,
        Some("deepObject") => Style::DeepObject,
        Some(_) => return None,
    };
    let explode = explode.unwrap_or(style == Style::Form);
    let fits = match location {
        Location::Path => matches!(style, Style::Simple | Style::Label | Style::Matrix),
        Location::Query => match style {
            Style::Form | Style::SpaceDelimited | Style::PipeDelimited => true,
            Style::DeepObject => explode,
            _ => false,
        },
        Location::Header => style == Style::Simple,
        Location::Cookie => style == Style::Form,
    };
    fits.then_some((style, explode))
}

/// A value's shape, its primitives already as text.
enum Shape {
    One(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

/// Why a value cannot be serialised.
pub(crate) const NESTED: &str =
    "holds nested arrays or objects, which this parameter's style cannot send";

fn primitive(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

fn shape(value: &Value, json: bool) -> Result<Shape, &'static str> {
    if json {
        return Ok(Shape::One(value.to_string()));
    }
    match value {
        Value::Array(items) => items
            .iter()
            .map(primitive)
            .collect::<Option<Vec<_>>>()
            .map(Shape::List)
            .ok_or(NESTED),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| primitive(v).map(|v| (k.clone(), v)))
            .collect::<Option<Vec<_>>>()
            .map(Shape::Pairs)
            .ok_or(NESTED),
        other => Ok(Shape::One(primitive(other).unwrap_or_default())),
    }
}

fn enc(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// A path template's literal text, made safe for a URL path.
pub(crate) fn path_literal(text: &str) -> String {
    utf8_percent_encode(text, PATH_LITERAL).to_string()
}

/// Whether a whole path segment is `.` or `..` to a URL parser, which
/// reads `%2e` as a dot: such a segment is removed (`..` with the one
/// before it), so the request would reach another path.
pub(crate) fn is_dot_segment(segment: &str) -> bool {
    let dots = segment.to_ascii_lowercase().replace("%2e", ".");
    dots == "." || dots == ".."
}

/// A path parameter's text, percent-encoded (`/` included).
pub(crate) fn path_value(
    name: &str,
    value: &Value,
    style: Style,
    explode: bool,
    json: bool,
) -> Result<String, &'static str> {
    let shape = shape(value, json)?;
    let pairs = |kv_sep: &str, sep: &str, items: &[(String, String)]| {
        items
            .iter()
            .map(|(k, v)| format!("{}{kv_sep}{}", enc(k), enc(v)))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let flat = |items: &[(String, String)]| {
        items
            .iter()
            .flat_map(|(k, v)| [enc(k), enc(v)])
            .collect::<Vec<_>>()
            .join(",")
    };
    let list =
        |items: &[String], sep: &str| items.iter().map(|v| enc(v)).collect::<Vec<_>>().join(sep);
    Ok(match (style, shape) {
        (Style::Label, Shape::One(v)) => format!(".{}", enc(&v)),
        (Style::Label, Shape::List(items)) => {
            format!(".{}", list(&items, if explode { "." } else { "," }))
        }
        (Style::Label, Shape::Pairs(items)) if explode => format!(".{}", pairs("=", ".", &items)),
        (Style::Label, Shape::Pairs(items)) => format!(".{}", flat(&items)),
        (Style::Matrix, Shape::One(v)) => format!(";{}={}", enc(name), enc(&v)),
        (Style::Matrix, Shape::List(items)) if explode => items
            .iter()
            .map(|v| format!(";{}={}", enc(name), enc(v)))
            .collect(),
        (Style::Matrix, Shape::List(items)) => format!(";{}={}", enc(name), list(&items, ",")),
        (Style::Matrix, Shape::Pairs(items)) if explode => format!(";{}", pairs("=", ";", &items)),
        (Style::Matrix, Shape::Pairs(items)) => format!(";{}={}", enc(name), flat(&items)),
        // simple (the default)
        (_, Shape::One(v)) => enc(&v),
        (_, Shape::List(items)) => list(&items, ","),
        (_, Shape::Pairs(items)) if explode => pairs("=", ",", &items),
        (_, Shape::Pairs(items)) => flat(&items),
    })
}

/// A query parameter as `name=value` pieces, percent-encoded, to be joined
/// with `&`. An empty array sends nothing.
pub(crate) fn query_pieces(
    name: &str,
    value: &Value,
    style: Style,
    explode: bool,
    allow_reserved: bool,
    json: bool,
    out: &mut Vec<String>,
) -> Result<(), &'static str> {
    let set = if allow_reserved {
        RESERVED_KEPT
    } else {
        COMPONENT
    };
    let e = |t: &str| utf8_percent_encode(t, set).to_string();
    let n = enc(name);
    match shape(value, json)? {
        Shape::One(_) if style == Style::DeepObject => {
            return Err("is not an object, which a deepObject parameter needs");
        }
        Shape::One(v) => out.push(format!("{n}={}", e(&v))),
        Shape::List(items) if items.is_empty() => {}
        Shape::List(_) if style == Style::DeepObject => {
            return Err("is not an object, which a deepObject parameter needs");
        }
        Shape::List(items) if explode => {
            out.extend(items.iter().map(|v| format!("{n}={}", e(v))));
        }
        Shape::List(items) => {
            let sep = match style {
                Style::SpaceDelimited => "%20",
                Style::PipeDelimited => "|",
                _ => ",",
            };
            let joined = items.iter().map(|v| e(v)).collect::<Vec<_>>().join(sep);
            out.push(format!("{n}={joined}"));
        }
        Shape::Pairs(items) => match style {
            Style::DeepObject => {
                out.extend(
                    items
                        .iter()
                        .map(|(k, v)| format!("{n}%5B{}%5D={}", enc(k), e(v))),
                );
            }
            _ if explode => {
                out.extend(items.iter().map(|(k, v)| format!("{}={}", enc(k), e(v))));
            }
            _ => {
                let sep = match style {
                    Style::SpaceDelimited => "%20",
                    Style::PipeDelimited => "|",
                    _ => ",",
                };
                let joined = items
                    .iter()
                    .flat_map(|(k, v)| [e(k), e(v)])
                    .collect::<Vec<_>>()
                    .join(sep);
                out.push(format!("{n}={joined}"));
            }
        },
    }
    Ok(())
}

/// A header parameter's value (simple style, not percent-encoded).
pub(crate) fn header_value(
    value: &Value,
    explode: bool,
    json: bool,
) -> Result<String, &'static str> {
    Ok(match shape(value, json)? {
        Shape::One(v) => v,
        Shape::List(items) => items.join(","),
        Shape::Pairs(items) if explode => items
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
        Shape::Pairs(items) => items
            .iter()
            .flat_map(|(k, v)| [k.clone(), v.clone()])
            .collect::<Vec<_>>()
            .join(","),
    })
}

/// A cookie parameter as `name=value` pairs (form style, values
/// percent-encoded), to be joined with `; `.
pub(crate) fn cookie_pieces(
    name: &str,
    value: &Value,
    explode: bool,
    json: bool,
    out: &mut Vec<String>,
) -> Result<(), &'static str> {
    let n = enc(name);
    match shape(value, json)? {
        Shape::One(v) => out.push(format!("{n}={}", enc(&v))),
        Shape::List(items) if items.is_empty() => {}
        Shape::List(items) if explode => {
            out.extend(items.iter().map(|v| format!("{n}={}", enc(v))))
        }
        Shape::List(items) => out.push(format!(
            "{n}={}",
            items.iter().map(|v| enc(v)).collect::<Vec<_>>().join(",")
        )),
        Shape::Pairs(items) if explode => {
            out.extend(items.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))));
        }
        Shape::Pairs(items) => out.push(format!(
            "{n}={}",
            items
                .iter()
                .flat_map(|(k, v)| [enc(k), enc(v)])
                .collect::<Vec<_>>()
                .join(",")
        )),
    }
    Ok(())
}

/// A credential for the query or a cookie, percent-encoded.
pub(crate) fn encode_component(text: &str) -> String {
    enc(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn styles_by_location() {
        assert_eq!(
            choose(Location::Path, None, None),
            Some((Style::Simple, false))
        );
        assert_eq!(
            choose(Location::Query, None, None),
            Some((Style::Form, true))
        );
        assert_eq!(
            choose(Location::Query, Some("form"), Some(false)),
            Some((Style::Form, false))
        );
        assert_eq!(choose(Location::Query, Some("matrix"), None), None);
        assert_eq!(
            choose(Location::Query, Some("deepObject"), Some(false)),
            None
        );
        assert_eq!(choose(Location::Header, Some("form"), None), None);
        assert_eq!(choose(Location::Cookie, Some("simple"), None), None);
        assert_eq!(choose(Location::Path, Some("weird"), None), None);
    }

    #[test]
    fn path_values() {
        let v = json!("a/b c");
        assert_eq!(
            path_value("id", &v, Style::Simple, false, false).unwrap(),
            "a%2Fb%20c"
        );
        let arr = json!([3, 4, 5]);
        assert_eq!(
            path_value("id", &arr, Style::Simple, false, false).unwrap(),
            "3,4,5"
        );
        assert_eq!(
            path_value("id", &arr, Style::Label, true, false).unwrap(),
            ".3.4.5"
        );
        assert_eq!(
            path_value("id", &arr, Style::Matrix, true, false).unwrap(),
            ";id=3;id=4;id=5"
        );
        assert_eq!(
            path_value("id", &arr, Style::Matrix, false, false).unwrap(),
            ";id=3,4,5"
        );
        let obj = json!({"R": 100, "G": 200});
        assert_eq!(
            path_value("c", &obj, Style::Simple, true, false).unwrap(),
            "G=200,R=100"
        );
        assert_eq!(
            path_value("c", &obj, Style::Simple, false, false).unwrap(),
            "G,200,R,100"
        );
        assert!(path_value("c", &json!([[1]]), Style::Simple, false, false).is_err());
    }

    #[test]
    fn query_values() {
        let mut out = Vec::new();
        let arr = json!(["blue", "black & white"]);
        query_pieces("color", &arr, Style::Form, true, false, false, &mut out).unwrap();
        assert_eq!(out, ["color=blue", "color=black%20%26%20white"]);
        out.clear();
        query_pieces("color", &arr, Style::Form, false, false, false, &mut out).unwrap();
        assert_eq!(out, ["color=blue,black%20%26%20white"]);
        out.clear();
        query_pieces(
            "c",
            &arr,
            Style::PipeDelimited,
            false,
            false,
            false,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, ["c=blue|black%20%26%20white"]);
        out.clear();
        query_pieces(
            "c",
            &arr,
            Style::SpaceDelimited,
            false,
            false,
            false,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, ["c=blue%20black%20%26%20white"]);
        out.clear();
        let obj = json!({"role": "admin", "name": "x"});
        query_pieces("f", &obj, Style::DeepObject, true, false, false, &mut out).unwrap();
        assert_eq!(out, ["f%5Bname%5D=x", "f%5Brole%5D=admin"]);
        out.clear();
        query_pieces("f", &obj, Style::Form, true, false, false, &mut out).unwrap();
        assert_eq!(out, ["name=x", "role=admin"]);
        out.clear();
        query_pieces(
            "q",
            &json!("a/b?c"),
            Style::Form,
            true,
            true,
            false,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, ["q=a/b?c"]);
        out.clear();
        query_pieces(
            "q",
            &json!({"a": [1]}),
            Style::Form,
            true,
            false,
            true,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, ["q=%7B%22a%22%3A%5B1%5D%7D"]);
        out.clear();
        query_pieces("q", &json!([]), Style::Form, true, false, false, &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn header_and_cookie_values() {
        assert_eq!(header_value(&json!([1, 2]), false, false).unwrap(), "1,2");
        assert_eq!(header_value(&json!({"a": 1}), true, false).unwrap(), "a=1");
        let mut out = Vec::new();
        cookie_pieces("s", &json!("a b;c"), true, false, &mut out).unwrap();
        assert_eq!(out, ["s=a%20b%3Bc"]);
    }
}

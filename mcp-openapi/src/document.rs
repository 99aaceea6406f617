//! Reading a document (file, URL, inline), parsing it (JSON or YAML, within
//! budgets), telling 3.0 from 3.1, and following local references.

use std::cell::Cell;

use serde_json::Value;
use url::{Host, Url};

use crate::config::{Limits, SpecSource};
use crate::error::OpenApiError;

/// The HTTP methods an OpenAPI path item may hold, in the order tools are
/// made.
pub(crate) const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The OpenAPI line of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// 3.0.x: schemas are the OpenAPI dialect of JSON Schema draft 5
    /// (`nullable`, boolean `exclusiveMinimum`, `$ref` siblings ignored).
    V30,
    /// 3.1.x: schemas are JSON Schema 2020-12.
    V31,
}

/// Reads a document's bytes, within [`Limits::max_document_bytes`].
pub(crate) async fn read_source(
    source: &SpecSource,
    client: &reqwest::Client,
    limits: &Limits,
) -> Result<Vec<u8>, OpenApiError> {
    let limit = limits.max_document_bytes;
    match source {
        SpecSource::Inline(text) => {
            if text.len() > limit {
                return Err(OpenApiError::DocumentTooLarge { limit });
            }
            Ok(text.as_bytes().to_vec())
        }
        SpecSource::File(path) => {
            let path = path.clone();
            let read = tokio::task::spawn_blocking(move || read_file(&path, limit)).await;
            match read {
                Ok(result) => result,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        SpecSource::Url(raw) => fetch(raw, client, limits).await,
    }
}

fn read_file(path: &std::path::Path, limit: usize) -> Result<Vec<u8>, OpenApiError> {
    use std::io::Read;
    let err = |error| OpenApiError::Read {
        path: path.to_owned(),
        error,
    };
    let file = std::fs::File::open(path).map_err(err)?;
    let size = file.metadata().map_err(err)?.len();
    if size > limit as u64 {
        return Err(OpenApiError::DocumentTooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow between the two reads: read one byte past the bound.
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(err)?;
    if bytes.len() > limit {
        return Err(OpenApiError::DocumentTooLarge { limit });
    }
    Ok(bytes)
}

async fn fetch(
    raw: &str,
    client: &reqwest::Client,
    limits: &Limits,
) -> Result<Vec<u8>, OpenApiError> {
    let url = check_url(raw, "the document URL", true)?;
    let limit = limits.max_document_bytes;
    let work = async {
        let mut response = client
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "application/json, application/yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| OpenApiError::Fetch {
                reason: describe_network_error(e),
            })?;
        if response.url().origin() != url.origin() {
            return Err(OpenApiError::Fetch {
                reason: "it was redirected to another origin".to_owned(),
            });
        }
        let status = response.status();
        if !status.is_success() {
            return Err(OpenApiError::FetchStatus {
                status: status.as_u16(),
            });
        }
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(OpenApiError::DocumentTooLarge { limit });
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| OpenApiError::Fetch {
            reason: describe_network_error(e),
        })? {
            if bytes.len() + chunk.len() > limit {
                return Err(OpenApiError::DocumentTooLarge { limit });
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    };
    match tokio::time::timeout(limits.request_timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(OpenApiError::Fetch {
            reason: format!("timed out after {:?}", limits.request_timeout),
        }),
    }
}

/// A network error in words, without the URL (its query may hold a key).
pub(crate) fn describe_network_error(e: reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".to_owned();
    }
    let e = e.without_url();
    let prefix = if e.is_connect() {
        "could not connect: "
    } else {
        ""
    };
    format!("{prefix}{}", mcp_types::text::Chain(&e))
}

/// Parses and checks a URL of the configuration: `https`, or `http` to
/// loopback; no user or password; a query and fragment only when
/// `query_ok`.
pub(crate) fn check_url(
    raw: &str,
    what: &'static str,
    query_ok: bool,
) -> Result<Url, OpenApiError> {
    let invalid = |problem| OpenApiError::InvalidUrl { what, problem };
    let url = Url::parse(raw).map_err(|_| invalid("it is not a valid absolute URL"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "it carries a user or password (name credentials by variable instead)",
        ));
    }
    if !query_ok && (url.query().is_some() || url.fragment().is_some()) {
        return Err(invalid("it carries a query or fragment"));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(OpenApiError::InsecureUrl {
            what,
            host: url.host_str().unwrap_or_default().to_owned(),
        }),
        _ => Err(invalid("only https (and http to loopback) is supported")),
    }
}

/// `localhost`, 127.0.0.0/8 or `[::1]` (an IPv4-mapped loopback too).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    }
}

/// Parses JSON (when the first character is `{`) or YAML, within budgets,
/// and tells the OpenAPI line.
pub(crate) fn parse(bytes: &[u8]) -> Result<(Value, Version), OpenApiError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let root: Value = if first == Some(&b'{') {
        serde_json::from_slice(bytes).map_err(|e| OpenApiError::Parse {
            format: "JSON",
            line: (e.line() > 0).then_some(e.line() as u64),
            column: (e.line() > 0).then_some(e.column() as u64),
        })?
    } else {
        let text = std::str::from_utf8(bytes).map_err(|_| OpenApiError::Parse {
            format: "YAML",
            line: None,
            column: None,
        })?;
        parse_yaml(text)?
    };
    let version = version(&root)?;
    Ok((root, version))
}

/// Budgets for a YAML document: nesting as deep as serde_json allows, nodes
/// and events enough for the largest document within 16 MiB, few aliases
/// and little replay through them (an alias bomb is refused rather than
/// expanded).
fn parse_yaml(text: &str) -> Result<Value, OpenApiError> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 128;
    budget.max_nodes = 8_000_000;
    budget.max_events = 16_000_000;
    budget.max_aliases = 10_000;
    budget.max_anchors = 10_000;
    budget.max_documents = 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    // YAML 1.2 booleans only (OpenAPI's YAML is 1.2): `on`/`yes` stay strings.
    options.strict_booleans = true;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    // Aliases replay what they name: 100 000 events of that is far more
    // than a real document's shared bits, and refuses a bomb early.
    options.alias_limits.max_total_replayed_events = 100_000;
    // The parser's message quotes the input: only its position is kept.
    serde_saphyr::from_str_with_options::<Value>(text, options).map_err(|e| {
        let location = e.location();
        OpenApiError::Parse {
            format: "YAML",
            line: location.as_ref().map(|l| l.line()),
            column: location.as_ref().map(|l| l.column()),
        }
    })
}

fn version(root: &Value) -> Result<Version, OpenApiError> {
    let Some(map) = root.as_object() else {
        return Err(OpenApiError::NotOpenApi);
    };
    let text = match map.get("openapi") {
        Some(Value::String(s)) => s.clone(),
        // YAML reads `openapi: 3.1` as a number.
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(OpenApiError::NotOpenApi),
        None => {
            return match map.get("swagger") {
                Some(v) => Err(OpenApiError::UnsupportedVersion {
                    version: format!("{} (Swagger)", v.as_str().unwrap_or("?")),
                }),
                None => Err(OpenApiError::NotOpenApi),
            };
        }
    };
    let mut parts = text.split('.');
    match (parts.next(), parts.next()) {
        (Some("3"), Some("0")) => Ok(Version::V30),
        (Some("3"), Some("1")) => Ok(Version::V31),
        _ => Err(OpenApiError::UnsupportedVersion { version: text }),
    }
}

/// A parsed document and the reference budget of its load.
pub(crate) struct Document {
    pub(crate) root: Value,
    pub(crate) version: Version,
    refs_followed: Cell<usize>,
    pub(crate) max_refs: usize,
    pub(crate) max_depth: usize,
}

impl Document {
    pub(crate) fn new(root: Value, version: Version, limits: &Limits) -> Self {
        Self {
            root,
            version,
            refs_followed: Cell::new(0),
            max_refs: limits.max_refs,
            max_depth: limits.max_ref_depth,
        }
    }

    /// Counts one reference followed against [`Limits::max_refs`].
    pub(crate) fn count_ref(&self) -> Result<(), OpenApiError> {
        let n = self.refs_followed.get() + 1;
        self.refs_followed.set(n);
        if n > self.max_refs {
            return Err(OpenApiError::TooManyRefs {
                limit: self.max_refs,
            });
        }
        Ok(())
    }

    /// The value at a JSON pointer (`/a/b~1c`).
    pub(crate) fn at(&self, pointer: &str) -> Option<&Value> {
        self.root.pointer(pointer)
    }

    /// Follows a chain of references from `value` (found at `at`) to the
    /// object it names: for parameters, request bodies, responses, path
    /// items, security schemes (not schemas, which are kept as references).
    pub(crate) fn resolve<'a>(
        &'a self,
        mut value: &'a Value,
        at: &str,
    ) -> Result<(&'a Value, String), OpenApiError> {
        let mut at = at.to_owned();
        let mut seen: Vec<String> = Vec::new();
        while let Some(reference) = value.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(OpenApiError::invalid(at, "`$ref` is not a string"));
            };
            self.count_ref()?;
            if seen.len() >= self.max_depth {
                return Err(OpenApiError::RefTooDeep {
                    limit: self.max_depth,
                    at,
                });
            }
            let target = local_pointer(reference, &at)?;
            if seen.contains(&target) {
                return Err(OpenApiError::RefCycle {
                    reference: reference.to_owned(),
                });
            }
            value = self.at(&target).ok_or_else(|| OpenApiError::RefNotFound {
                reference: reference.to_owned(),
                at: at.clone(),
            })?;
            seen.push(target.clone());
            at = target;
        }
        Ok((value, at))
    }
}

/// The JSON pointer a local `$ref` names (`#/components/schemas/A` →
/// `/components/schemas/A`, percent-decoded; `~0` / `~1` stay escaped, as
/// JSON pointers write them). Anything but a local pointer is refused.
pub(crate) fn local_pointer(reference: &str, at: &str) -> Result<String, OpenApiError> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err(OpenApiError::RemoteRef {
            reference: reference.to_owned(),
            at: at.to_owned(),
        });
    };
    let decoded = percent_encoding::percent_decode_str(fragment)
        .decode_utf8()
        .map_err(|_| OpenApiError::UnsupportedRef {
            reference: reference.to_owned(),
            at: at.to_owned(),
        })?;
    if !decoded.is_empty() && !decoded.starts_with('/') {
        return Err(OpenApiError::UnsupportedRef {
            reference: reference.to_owned(),
            at: at.to_owned(),
        });
    }
    Ok(decoded.into_owned())
}

/// `at` with one more JSON pointer token (escaped).
pub(crate) fn child(at: &str, token: &str) -> String {
    let mut out = String::with_capacity(at.len() + token.len() + 1);
    out.push_str(at);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(root: Value) -> Document {
        Document::new(root, Version::V30, &Limits::default())
    }

    #[test]
    fn versions() {
        assert_eq!(version(&json!({"openapi": "3.0.3"})).unwrap(), Version::V30);
        assert_eq!(version(&json!({"openapi": "3.1.0"})).unwrap(), Version::V31);
        assert_eq!(version(&json!({"openapi": 3.1})).unwrap(), Version::V31);
        assert!(matches!(
            version(&json!({"openapi": "3.2.0"})),
            Err(OpenApiError::UnsupportedVersion { .. })
        ));
        assert!(matches!(
            version(&json!({"swagger": "2.0"})),
            Err(OpenApiError::UnsupportedVersion { .. })
        ));
        assert!(matches!(version(&json!([])), Err(OpenApiError::NotOpenApi)));
    }

    #[test]
    fn pointers_are_decoded_and_remote_refused() {
        assert_eq!(local_pointer("#/a~1b/c%7Bd%7D", "").unwrap(), "/a~1b/c{d}");
        assert_eq!(local_pointer("#", "").unwrap(), "");
        assert!(matches!(
            local_pointer("other.yaml#/x", "/p"),
            Err(OpenApiError::RemoteRef { .. })
        ));
        assert!(matches!(
            local_pointer("https://example.com/s.json", "/p"),
            Err(OpenApiError::RemoteRef { .. })
        ));
        assert!(matches!(
            local_pointer("#anchor", "/p"),
            Err(OpenApiError::UnsupportedRef { .. })
        ));
        assert_eq!(child("/paths", "/users/{id}"), "/paths/~1users~1{id}");
        assert_eq!(child("", "a~b"), "/a~0b");
    }

    #[test]
    fn chains_resolve_and_cycles_are_refused() {
        let d = doc(json!({
            "components": {"parameters": {
                "a": {"$ref": "#/components/parameters/b"},
                "b": {"name": "x", "in": "query"},
                "c": {"$ref": "#/components/parameters/d"},
                "d": {"$ref": "#/components/parameters/c"},
                "e": {"$ref": "#/components/parameters/missing"}
            }}
        }));
        let start = json!({"$ref": "#/components/parameters/a"});
        let (v, at) = d.resolve(&start, "/p").unwrap();
        assert_eq!(v["name"], "x");
        assert_eq!(at, "/components/parameters/b");
        let start = json!({"$ref": "#/components/parameters/c"});
        assert!(matches!(
            d.resolve(&start, "/p"),
            Err(OpenApiError::RefCycle { .. })
        ));
        let start = json!({"$ref": "#/components/parameters/e"});
        assert!(matches!(
            d.resolve(&start, "/p"),
            Err(OpenApiError::RefNotFound { .. })
        ));
    }

    #[test]
    fn yaml_numbers_as_keys_and_strict_booleans() {
        let (v, version) = parse(
            b"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: on\n",
        )
        .unwrap();
        assert_eq!(version, Version::V30);
        assert_eq!(
            v.pointer("/paths/~1a/get/responses/200/description"),
            Some(&json!("on"))
        );
    }

    #[test]
    fn parse_errors_carry_no_text() {
        let e = parse(b"{\"openapi\": \"3.0.0\", \"secret-ish\": }").unwrap_err();
        assert!(matches!(e, OpenApiError::Parse { format: "JSON", .. }));
        assert!(!e.to_string().contains("secret"));
        let e = parse(b"openapi: [unclosed\nsecret: x\n").unwrap_err();
        assert!(matches!(e, OpenApiError::Parse { format: "YAML", .. }));
        assert!(!e.to_string().contains("secret"));
    }
}

//! The crate's one error type: why a service could not be loaded.
//!
//! A call never fails with an error: its failures are results
//! ([`crate::CallFailure`]).

use std::path::PathBuf;

use mcp_types::ErrorCause;
use mcp_types::text::Untrusted;

/// Why an [`OpenApiService`](crate::OpenApiService) could not be loaded.
///
/// Strings taken from a document (references, paths, names) are shown
/// escaped and bounded ([`Untrusted`]); no error ever holds a secret, a
/// URL's query or a document's text beyond such a name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenApiError {
    /// The configuration names no document.
    #[error("no OpenAPI document is configured")]
    NoDocuments,
    /// A URL of the configuration (a base URL, a document URL) is unusable.
    #[error("{what} is not usable: {problem}")]
    InvalidUrl {
        /// Which URL.
        what: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// A URL of the configuration uses plain `http://` to a host that is
    /// not loopback.
    #[error(
        "{what} must use https (plain http only to loopback), not http to {}",
        Untrusted::new(host)
    )]
    InsecureUrl {
        /// Which URL.
        what: &'static str,
        /// Its host.
        host: String,
    },
    /// A document prefix is invalid.
    #[error("prefix `{}` is invalid: {problem}", Untrusted::new(prefix))]
    InvalidPrefix {
        /// The prefix.
        prefix: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A selection matcher is invalid.
    #[error(
        "operation matcher `{}` is invalid: {problem}",
        Untrusted::new(matcher)
    )]
    InvalidMatcher {
        /// The matcher as written.
        matcher: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A credential reference is unusable (an empty or malformed variable
    /// name, a scheme given twice, a secret of the wrong shape).
    #[error("credential for `{}` is invalid: {problem}", Untrusted::new(scheme))]
    InvalidCredential {
        /// The scheme it was given for.
        scheme: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A credential names a security scheme the document does not declare.
    #[error(
        "the document declares no security scheme `{}`",
        Untrusted::new(scheme)
    )]
    UnknownSecurityScheme {
        /// The name.
        scheme: String,
    },
    /// A credential names a scheme of a kind this crate cannot send
    /// (mutual TLS, http digest, …).
    #[error(
        "security scheme `{}` ({}) is not supported",
        Untrusted::new(scheme),
        Untrusted::new(kind)
    )]
    UnsupportedSecurityScheme {
        /// The name.
        scheme: String,
        /// Its type (and http scheme).
        kind: String,
    },
    /// A document file could not be read.
    #[error("could not read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (its words are in the message, so it is not `source()`).
        error: std::io::Error,
    },
    /// A document URL could not be fetched.
    #[error("could not fetch the document: {reason}")]
    Fetch {
        /// Why (never the URL's query).
        reason: String,
    },
    /// A document URL answered with an HTTP status other than success.
    #[error("fetching the document answered HTTP {status}")]
    FetchStatus {
        /// The status.
        status: u16,
    },
    /// A document is over [`Limits::max_document_bytes`](crate::Limits).
    #[error("the document is larger than {limit} bytes")]
    DocumentTooLarge {
        /// The bound.
        limit: usize,
    },
    /// A document is neither valid JSON nor valid YAML (or breaks a YAML
    /// budget: depth, nodes, aliases).
    #[error("the document is not valid {format}{}", position(*line, *column))]
    Parse {
        /// `JSON` or `YAML`.
        format: &'static str,
        /// Where, when known (1-based).
        line: Option<u64>,
        /// Where, when known (1-based).
        column: Option<u64>,
    },
    /// The document has no `openapi` version.
    #[error("not an OpenAPI document (no `openapi` version)")]
    NotOpenApi,
    /// The document's version is not 3.0.x or 3.1.x (Swagger 2.0, 3.2 …).
    #[error(
        "OpenAPI version {} is not supported (3.0.x and 3.1.x are)",
        Untrusted::new(version)
    )]
    UnsupportedVersion {
        /// The version as written.
        version: String,
    },
    /// A `$ref` to another document or URL: never fetched.
    #[error(
        "at {}: remote reference `{}` refused (only references inside the document are followed)",
        Untrusted::new(at),
        Untrusted::new(reference)
    )]
    RemoteRef {
        /// The reference.
        reference: String,
        /// Where it is (a JSON pointer).
        at: String,
    },
    /// A local reference of a kind not followed (a plain-name anchor).
    #[error(
        "at {}: reference `{}` is not a JSON pointer",
        Untrusted::new(at),
        Untrusted::new(reference)
    )]
    UnsupportedRef {
        /// The reference.
        reference: String,
        /// Where it is.
        at: String,
    },
    /// A local reference that points at nothing.
    #[error(
        "at {}: reference `{}` points at nothing",
        Untrusted::new(at),
        Untrusted::new(reference)
    )]
    RefNotFound {
        /// The reference.
        reference: String,
        /// Where it is.
        at: String,
    },
    /// A cycle of references that never reaches a value: a chain of
    /// parameters, responses … that comes back to itself, or schemas that
    /// refer to themselves without a property or item between (`A` is
    /// `allOf: [B]`, `B` is `A`). A recursive data type (a node whose
    /// `children` items refer to the node) is not a cycle in this sense.
    #[error("reference cycle through `{}`", Untrusted::new(reference))]
    RefCycle {
        /// A reference on the cycle.
        reference: String,
    },
    /// References nested deeper than
    /// [`Limits::max_ref_depth`](crate::Limits).
    #[error("at {}: references nested deeper than {limit}", Untrusted::new(at))]
    RefTooDeep {
        /// The bound.
        limit: usize,
        /// The reference that went past it.
        at: String,
    },
    /// More references followed than [`Limits::max_refs`](crate::Limits).
    #[error("more than {limit} references followed")]
    TooManyRefs {
        /// The bound.
        limit: usize,
    },
    /// More operations than [`Limits::max_operations`](crate::Limits).
    #[error("more than {limit} operations in one document")]
    TooManyOperations {
        /// The bound.
        limit: usize,
    },
    /// A parameter's `style` / `explode` is not supported where it is (for
    /// example a query parameter in `matrix` style). Exclude the operation
    /// with a [`Selection`](crate::Selection) to load the rest.
    #[error(
        "{}: parameter `{}` in {location}: style `{}` (explode {explode}) is not supported there",
        Untrusted::new(operation),
        Untrusted::new(parameter),
        Untrusted::new(style)
    )]
    UnsupportedStyle {
        /// `METHOD /path`.
        operation: String,
        /// The parameter's name.
        parameter: String,
        /// `path`, `query`, `header` or `cookie`.
        location: &'static str,
        /// The style.
        style: String,
        /// The explode flag.
        explode: bool,
    },
    /// A parameter location other than path, query, header and cookie.
    #[error(
        "{}: parameter `{}` is in `{}`, which is not supported",
        Untrusted::new(operation),
        Untrusted::new(parameter),
        Untrusted::new(location)
    )]
    UnsupportedLocation {
        /// `METHOD /path`.
        operation: String,
        /// The parameter's name.
        parameter: String,
        /// The location as written.
        location: String,
    },
    /// A request body with no media type this crate can send
    /// (`multipart/form-data`, …). Exclude the operation to load the rest.
    #[error(
        "{}: request body media type `{}` is not supported (JSON, form-urlencoded, text and binary are)",
        Untrusted::new(operation),
        Untrusted::new(media_type)
    )]
    UnsupportedMediaType {
        /// `METHOD /path`.
        operation: String,
        /// The first media type offered.
        media_type: String,
    },
    /// A schema keyword that moves the base URI or resolves dynamically
    /// (`$id`, `$dynamicRef`, `$recursiveRef`): the bundled tool schemas
    /// could not keep its meaning.
    #[error(
        "at {}: schema keyword `{keyword}` is not supported",
        Untrusted::new(at)
    )]
    UnsupportedKeyword {
        /// Where it is.
        at: String,
        /// The keyword.
        keyword: &'static str,
    },
    /// The document breaks a rule of the OpenAPI specification that this
    /// crate relies on (a parameter without a name, a path parameter not
    /// declared, a schema that is not an object …).
    #[error("at {}: {problem}", Untrusted::new(at))]
    InvalidDocument {
        /// Where (a JSON pointer).
        at: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A generated tool schema is not valid JSON Schema 2020-12 (the
    /// document's schema is malformed there).
    #[error(
        "at {}: not valid JSON Schema 2020-12: {}",
        Untrusted::new(at),
        Untrusted::new(problem)
    )]
    InvalidSchema {
        /// The operation and which of its schemas, or a referenced
        /// schema's pointer.
        at: String,
        /// The validator's words (without the schema's values).
        problem: String,
    },
    /// Two tools would have the same name even after the collision rule
    /// (the same operation in two documents without prefixes).
    #[error(
        "two tools would be called `{}`; give the documents different prefixes",
        Untrusted::new(name)
    )]
    NameCollision {
        /// The name.
        name: String,
    },
    /// The selection leaves no operation of a document.
    #[error("the selection matches no operation of the document")]
    NothingSelected,
    /// The service's HTTP client could not be built.
    #[error("could not build the HTTP client: {reason}")]
    HttpClient {
        /// Why.
        reason: String,
    },
    /// A failure while loading one document of several: the document's
    /// label (its path, or a URL's origin and path) before the failure's
    /// own words (so `source()` is none).
    #[error("{}: {error}", Untrusted::new(document))]
    InDocument {
        /// The document.
        document: String,
        /// What went wrong with it.
        error: Box<OpenApiError>,
    },
}

fn position(line: Option<u64>, column: Option<u64>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
        (Some(l), None) => format!(" (line {l})"),
        _ => String::new(),
    }
}

impl OpenApiError {
    /// Who caused it: the configuration (the settings and the documents
    /// they name: a document is the host's choice, like a configuration
    /// file), a bound, or the network and the server a document was
    /// fetched from.
    pub fn cause(&self) -> ErrorCause {
        match self {
            OpenApiError::InDocument { error, .. } => error.cause(),
            OpenApiError::Fetch { .. } => ErrorCause::Connection,
            OpenApiError::FetchStatus { .. } => ErrorCause::Server,
            OpenApiError::DocumentTooLarge { .. }
            | OpenApiError::RefTooDeep { .. }
            | OpenApiError::TooManyRefs { .. }
            | OpenApiError::TooManyOperations { .. } => ErrorCause::Bound,
            OpenApiError::HttpClient { .. } => ErrorCause::Internal,
            _ => ErrorCause::Configuration,
        }
    }

    /// The failure itself, without the document it happened in.
    pub fn innermost(&self) -> &OpenApiError {
        match self {
            OpenApiError::InDocument { error, .. } => error.innermost(),
            other => other,
        }
    }

    pub(crate) fn in_document(self, document: String) -> Self {
        match self {
            already @ OpenApiError::InDocument { .. } => already,
            error => OpenApiError::InDocument {
                document,
                error: Box::new(error),
            },
        }
    }

    pub(crate) fn invalid(at: impl Into<String>, problem: &'static str) -> Self {
        OpenApiError::InvalidDocument {
            at: at.into(),
            problem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_errors_keep_their_cause_and_words() {
        let e = OpenApiError::TooManyRefs { limit: 3 }.in_document("spec.yaml".into());
        assert_eq!(e.cause(), ErrorCause::Bound);
        assert_eq!(e.to_string(), "spec.yaml: more than 3 references followed");
        assert!(matches!(
            e.innermost(),
            OpenApiError::TooManyRefs { limit: 3 }
        ));
        let e = OpenApiError::RemoteRef {
            reference: "https://x/\u{1b}[2J".into(),
            at: "/paths".into(),
        };
        assert!(!e.to_string().contains('\u{1b}'));
    }
}

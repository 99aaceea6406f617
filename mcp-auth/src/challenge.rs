//! The `Bearer` (or `DPoP`, RFC 9449 §7.1) challenge of a
//! `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1):
//! `resource_metadata`, `scope` and `error`.

/// What a 401 / 403 challenge told us.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BearerChallenge {
    /// The protected resource metadata URL (RFC 9728 §5.1).
    pub(crate) resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated.
    pub(crate) scope: Option<String>,
    /// The error code (`invalid_token`, `insufficient_scope` …).
    pub(crate) error: Option<String>,
    /// The server offered a `DPoP` challenge and no `Bearer` one: it
    /// requires DPoP-bound tokens.
    pub(crate) dpop_only: bool,
}

impl BearerChallenge {
    /// The challenged scopes, split on spaces.
    pub(crate) fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref().unwrap_or(""))
    }

    pub(crate) fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    /// The server asks for a (new) DPoP nonce.
    pub(crate) fn wants_dpop_nonce(&self) -> bool {
        self.error.as_deref() == Some("use_dpop_nonce")
    }
}

/// Splits a space-separated scope string.
pub(crate) fn split_scopes(scope: &str) -> Vec<String> {
    scope.split_ascii_whitespace().map(str::to_owned).collect()
}

/// Parses `header` and returns its `Bearer` challenge, if it has one.
/// Other schemes (`Basic`, `DPoP` …) in the same header are skipped.
pub(crate) fn parse_bearer(header: &str) -> Option<BearerChallenge> {
    let mut challenges: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let bytes = header.as_bytes();
    let mut pos = 0;
    let is_sep = |b: u8| b.is_ascii_whitespace() || b == b',' || b == b'=' || b == b'"';
    while pos < bytes.len() {
        while pos < bytes.len() && (bytes[pos].is_ascii_whitespace() || bytes[pos] == b',') {
            pos += 1;
        }
        if pos >= bytes.len() {
            break;
        }
        let start = pos;
        while pos < bytes.len() && !is_sep(bytes[pos]) {
            pos += 1;
        }
        if pos == start {
            // A stray `=` or `"` (token68 padding, say): skip it.
            pos += 1;
            continue;
        }
        let token = &header[start..pos];
        let mut look = pos;
        while look < bytes.len() && bytes[look] == b' ' {
            look += 1;
        }
        let is_param = look < bytes.len() && bytes[look] == b'=' && !challenges.is_empty();
        if !is_param {
            challenges.push((token.to_owned(), Vec::new()));
            continue;
        }
        pos = look + 1;
        while pos < bytes.len() && bytes[pos] == b' ' {
            pos += 1;
        }
        let value = if pos < bytes.len() && bytes[pos] == b'"' {
            pos += 1;
            let mut value = String::new();
            let mut chars = header[pos..].char_indices();
            let mut consumed = header.len() - pos;
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        consumed = i + 1;
                        break;
                    }
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    other => value.push(other),
                }
            }
            pos += consumed;
            value
        } else {
            let start = pos;
            while pos < bytes.len() && !bytes[pos].is_ascii_whitespace() && bytes[pos] != b',' {
                pos += 1;
            }
            header[start..pos].to_owned()
        };
        if let Some((_, params)) = challenges.last_mut() {
            params.push((token.to_ascii_lowercase(), value));
        }
    }
    // The Bearer challenge, else the DPoP one (RFC 9449 §7.1): a server
    // that offers only DPoP requires it.
    let bearer = challenges
        .iter()
        .position(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"));
    let dpop = challenges
        .iter()
        .position(|(scheme, _)| scheme.eq_ignore_ascii_case("dpop"));
    let dpop_only = bearer.is_none() && dpop.is_some();
    let (_, params) = challenges.into_iter().nth(bearer.or(dpop)?)?;
    let get = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    Some(BearerChallenge {
        resource_metadata: get("resource_metadata"),
        scope: get("scope"),
        error: get("error"),
        dpop_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = parse_bearer(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="Need \"write\"""#,
        )
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scopes(), ["files:read", "files:write"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
    }

    #[test]
    fn skips_other_schemes_and_accepts_tokens_and_odd_spacing() {
        let c = parse_bearer(
            "Basic realm=\"x\", DPoP algs=\"ES256\", bearer  scope = mcp:basic ,resource_metadata=https://a/b",
        )
        .unwrap();
        assert_eq!(c.scope.as_deref(), Some("mcp:basic"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://a/b"));
        assert_eq!(c.error, None);
        assert!(parse_bearer("Basic YWxhZGRpbjpvcGVuc2VzYW1l==").is_none());
        assert_eq!(parse_bearer("Bearer"), Some(BearerChallenge::default()));
        assert!(parse_bearer("").is_none());
        // Unterminated quotes and stray separators end without a panic.
        let c = parse_bearer("Bearer scope=\"a b").unwrap();
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert!(parse_bearer("=\"=,").is_none());
    }

    #[test]
    fn a_dpop_only_challenge_is_read_and_marked() {
        let c = parse_bearer(r#"DPoP error="use_dpop_nonce", resource_metadata="https://a/m""#)
            .unwrap();
        assert!(c.dpop_only && c.wants_dpop_nonce());
        assert_eq!(c.resource_metadata.as_deref(), Some("https://a/m"));
        let both = parse_bearer(r#"DPoP algs="ES256", Bearer scope="s""#).unwrap();
        assert!(!both.dpop_only);
        assert_eq!(both.scope.as_deref(), Some("s"));
    }
}

//! How the host names what several servers offer: resource URIs and prompt
//! names carry their server, so two servers' `file:///notes.txt` or
//! `summarise` never meet.
//!
//! A resource (or template) `URI` of server `notes` is served as
//! `mcp-gateway://notes/URI`: the server's name is the authority and the
//! server's URI follows the first `/` verbatim (its own scheme, slashes,
//! query and fragment included), so it is recovered exactly. Server names
//! are `[A-Za-z0-9_-]`, valid in an authority. A prompt `P` is
//! `notes/P`: a server name never holds `/`, so the first `/` splits.

/// The scheme of every resource URI the gateway serves.
pub const RESOURCE_SCHEME: &str = "mcp-gateway";

/// The longest cursor the host may send back (a longer one is refused with
/// `-32602`): ours wrap a server's, which is the server's to size.
pub const MAX_CURSOR_BYTES: usize = 4096;

/// The separator between a server's name and its prompt's.
const PROMPT_SEPARATOR: char = '/';

/// The URI the host sees for `uri` of `server`.
pub fn resource_uri(server: &str, uri: &str) -> String {
    format!("{RESOURCE_SCHEME}://{server}/{uri}")
}

/// The server and its own URI of a URI the gateway served; `None` for any
/// other URI.
pub fn split_resource_uri(uri: &str) -> Option<(&str, &str)> {
    let rest = uri.strip_prefix(RESOURCE_SCHEME)?.strip_prefix("://")?;
    let (server, inner) = rest.split_once('/')?;
    (!server.is_empty() && !inner.is_empty()).then_some((server, inner))
}

/// The name the host sees for prompt `name` of `server`.
pub fn prompt_name(server: &str, name: &str) -> String {
    format!("{server}{PROMPT_SEPARATOR}{name}")
}

/// The server and its own prompt name of a name the gateway served.
pub fn split_prompt_name(name: &str) -> Option<(&str, &str)> {
    let (server, prompt) = name.split_once(PROMPT_SEPARATOR)?;
    (!server.is_empty() && !prompt.is_empty()).then_some((server, prompt))
}

/// A listing cursor of ours: which server (its index in registration
/// order) and that server's own cursor (empty for its first page).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpanCursor {
    pub(crate) server: usize,
    pub(crate) inner: Option<String>,
}

impl SpanCursor {
    pub(crate) fn encode(&self) -> String {
        format!("{}:{}", self.server, self.inner.as_deref().unwrap_or(""))
    }

    /// `None` when the text is not a cursor of ours.
    pub(crate) fn decode(text: &str) -> Option<Self> {
        if text.len() > MAX_CURSOR_BYTES {
            return None;
        }
        let (server, inner) = text.split_once(':')?;
        Some(Self {
            server: server.parse().ok()?,
            inner: (!inner.is_empty()).then(|| inner.to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_uri_is_recovered_exactly_whatever_it_holds() {
        for uri in [
            "file:///a/b.txt",
            "notes://n1?x=1#frag",
            "https://example.com/a/../b",
            "weird:{+path}/x",
        ] {
            let served = resource_uri("notes-2", uri);
            assert!(served.starts_with("mcp-gateway://notes-2/"));
            assert_eq!(split_resource_uri(&served), Some(("notes-2", uri)));
        }
        assert_eq!(split_resource_uri("file:///a"), None);
        assert_eq!(split_resource_uri("mcp-gateway://notes"), None);
        assert_eq!(split_resource_uri("mcp-gateway:///x"), None);
        assert_eq!(split_resource_uri("mcp-gateway://notes/"), None);
    }

    #[test]
    fn a_prompt_name_splits_at_the_first_separator() {
        assert_eq!(prompt_name("files", "a/b"), "files/a/b");
        assert_eq!(split_prompt_name("files/a/b"), Some(("files", "a/b")));
        assert_eq!(split_prompt_name("summarise"), None);
        assert_eq!(split_prompt_name("/x"), None);
    }

    #[test]
    fn cursors_round_trip_and_foreign_or_long_ones_are_refused() {
        let c = SpanCursor {
            server: 2,
            inner: Some("abc:def".to_owned()),
        };
        assert_eq!(SpanCursor::decode(&c.encode()), Some(c));
        let first = SpanCursor {
            server: 0,
            inner: None,
        };
        assert_eq!(SpanCursor::decode("0:"), Some(first));
        assert_eq!(SpanCursor::decode("x:1"), None);
        assert_eq!(SpanCursor::decode("nothing"), None);
        assert_eq!(
            SpanCursor::decode(&format!("1:{}", "a".repeat(MAX_CURSOR_BYTES))),
            None
        );
    }
}

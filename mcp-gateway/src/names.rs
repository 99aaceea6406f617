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
//!
//! The one exception is the Skills extension's scheme: a server's
//! `skill://PATH` is served as `skill://notes/PATH`, everywhere a URI is
//! served (listings, skill entries and their manifests, directory
//! children, reads, tool results). A skill stays a `skill://` URI whose
//! last path segment before `SKILL.md` is still its name, as the extension
//! asks; the server's name becomes the first segment of the skill path (the
//! authority, which carries no meaning there), so two servers' skills of
//! one name never meet and the server's URI is recovered exactly.

use std::borrow::Cow;

/// The scheme of every resource URI the gateway serves (but skills').
pub const RESOURCE_SCHEME: &str = "mcp-gateway";

/// `skill://`, the prefix of a skill URI (the Skills extension's scheme),
/// kept in the served URI.
const SKILL_PREFIX: &str = "skill://";

/// The longest cursor the host may send back (a longer one is refused with
/// `-32602`): ours wrap a server's, which is the server's to size.
pub const MAX_CURSOR_BYTES: usize = 4096;

/// The separator between a server's name and its prompt's.
const PROMPT_SEPARATOR: char = '/';

/// The URI the host sees for `uri` of `server`: `skill://SERVER/PATH` for
/// the server's `skill://PATH`, else `mcp-gateway://SERVER/URI`.
pub fn resource_uri(server: &str, uri: &str) -> String {
    match uri.strip_prefix(SKILL_PREFIX) {
        Some(path) => format!("{SKILL_PREFIX}{server}/{path}"),
        None => format!("{RESOURCE_SCHEME}://{server}/{uri}"),
    }
}

/// The server and its own URI of a URI the gateway served (either form of
/// [`resource_uri`]); `None` for any other URI. A `skill://` URI always
/// splits at its first segment: whether that names a server is the
/// caller's to check.
pub fn split_resource_uri(uri: &str) -> Option<(&str, Cow<'_, str>)> {
    if let Some(rest) = uri.strip_prefix(SKILL_PREFIX) {
        let (server, path) = rest.split_once('/')?;
        return (!server.is_empty() && !path.is_empty())
            .then(|| (server, Cow::Owned(format!("{SKILL_PREFIX}{path}"))));
    }
    let rest = uri.strip_prefix(RESOURCE_SCHEME)?.strip_prefix("://")?;
    let (server, inner) = rest.split_once('/')?;
    (!server.is_empty() && !inner.is_empty()).then_some((server, Cow::Borrowed(inner)))
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

/// Whether `uri` is one that `template` makes with simple expressions (RFC
/// 6570, level one): each `{name}` stands for one or more characters other
/// than `/`, `?` and `#`, and the text between them must be there as
/// written. A template with any other kind of expression (`{+path}`,
/// `{?query}` …) matches nothing: the gateway does not guess at them.
pub(crate) fn template_matches(template: &str, uri: &str) -> bool {
    #[derive(Debug)]
    enum Part<'a> {
        Text(&'a str),
        Variable,
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return false;
        };
        let name = &rest[open + 1..open + close];
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%')
        {
            return false;
        }
        if open > 0 {
            parts.push(Part::Text(&rest[..open]));
        }
        parts.push(Part::Variable);
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest));
    }
    if !parts.iter().any(|p| matches!(p, Part::Variable)) {
        return false;
    }
    // A server's template and a host's URI are both untrusted: the search
    // is cut off after a fixed number of steps (a miss, never a stall).
    fn matches(parts: &[Part<'_>], uri: &str, steps: &mut u32) -> bool {
        *steps += 1;
        if *steps > MAX_TEMPLATE_STEPS {
            return false;
        }
        match parts.split_first() {
            None => uri.is_empty(),
            Some((Part::Text(text), rest)) => uri
                .strip_prefix(text)
                .is_some_and(|after| matches(rest, after, steps)),
            Some((Part::Variable, rest)) => {
                let end = uri.find(['/', '?', '#']).unwrap_or(uri.len());
                (1..=end)
                    .filter(|&taken| uri.is_char_boundary(taken))
                    .any(|taken| matches(rest, &uri[taken..], steps))
            }
        }
    }
    let mut steps = 0;
    matches(&parts, uri, &mut steps)
}

/// Steps of one template match before it is given up as a miss.
const MAX_TEMPLATE_STEPS: u32 = 10_000;

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
    fn a_uri_matches_the_simple_templates_that_make_it() {
        for (template, uri) in [
            ("test://template/{id}/data", "test://template/123/data"),
            ("file:///{name}", "file:///notes.txt"),
            ("db://{table}/{row}", "db://users/7"),
            ("x://{a}-{b}", "x://one-two-three"),
        ] {
            assert!(template_matches(template, uri), "{template} {uri}");
        }
        for (template, uri) in [
            ("test://template/{id}/data", "test://template/123/other"),
            ("test://template/{id}/data", "test://template//data"),
            ("test://template/{id}/data", "test://template/1/2/data"),
            ("file:///{name}", "file:///a/b.txt"),
            ("file:///{+path}", "file:///a/b.txt"),
            ("search://{?q}", "search://?q=x"),
            ("static://readme", "static://readme"),
            ("broken://{id", "broken://{id"),
        ] {
            assert!(!template_matches(template, uri), "{template} {uri}");
        }
        // A template made to search forever is a miss, at once.
        let hostile = "x://".to_owned() + &"{v}-".repeat(30) + "end";
        let uri = "x://".to_owned() + &"a-".repeat(2000);
        assert!(!template_matches(&hostile, &uri));
    }

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
            assert_eq!(
                split_resource_uri(&served),
                Some(("notes-2", Cow::Borrowed(uri)))
            );
        }
        assert_eq!(split_resource_uri("file:///a"), None);
        assert_eq!(split_resource_uri("mcp-gateway://notes"), None);
        assert_eq!(split_resource_uri("mcp-gateway:///x"), None);
        assert_eq!(split_resource_uri("mcp-gateway://notes/"), None);
    }

    #[test]
    fn a_skill_stays_a_skill_uri_named_by_its_last_segment_under_its_server() {
        for uri in [
            "skill://pdf-processing/SKILL.md",
            "skill://acme/billing/refunds/references/FORMS.md",
            "skill:///odd//SKILL.md",
        ] {
            let served = resource_uri("docs", uri);
            let path = uri.strip_prefix("skill://").unwrap();
            assert_eq!(served, format!("skill://docs/{path}"));
            assert_eq!(
                split_resource_uri(&served),
                Some(("docs", Cow::Owned(uri.to_owned())))
            );
        }
        // The skill's name (the segment before SKILL.md) is unchanged.
        let served = resource_uri("a", "skill://pdf-processing/SKILL.md");
        assert!(served.ends_with("/pdf-processing/SKILL.md"));
        assert_eq!(split_resource_uri("skill://docs"), None);
        assert_eq!(split_resource_uri("skill://docs/"), None);
        assert_eq!(split_resource_uri("skill:///x"), None);
        assert_eq!(split_resource_uri("skills://docs/x/SKILL.md"), None);
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

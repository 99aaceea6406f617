//! Which request an oversized line answered, from its two ends.
//!
//! The transport skips a line over the frame bound without keeping it, and
//! hands over its first and last bytes ([`SkippedEdge`]). A JSON-RPC response
//! names its id near one end: `{"jsonrpc":"2.0","id":7,"result":…` (most
//! servers) or `{"result":…,"jsonrpc":"2.0","id":7}` (the TypeScript SDK). The
//! start also tells a response (`result` / `error` among its first members)
//! from a request or notification of the server's (`method`), whose id is in
//! the server's numbering, not ours. Anything less clear reads as "unknown",
//! and the request then runs into its deadline as before: a wrong guess would
//! fail another request.

/// What the start of a skipped line says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StartSays {
    /// `Some(true)`: a response; `Some(false)`: a request or notification.
    pub(crate) response: Option<bool>,
    /// The top-level numeric id, when it came before the cut.
    pub(crate) id: Option<i64>,
}

/// Reads the top-level members at the start of a JSON object, as far as the
/// bytes go.
pub(crate) fn read_start(bytes: &[u8]) -> StartSays {
    let mut says = StartSays::default();
    let mut depth = 0usize;
    let mut i = 0;
    // The last string closed at depth 1, and where it ended.
    let mut last_key: Option<(usize, usize)> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let Some(end) = string_end(bytes, start) else {
                    return says;
                };
                if depth == 1 {
                    last_key = Some((start, end));
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 1 => {
                if let Some((start, end)) = last_key.take() {
                    match &bytes[start..end] {
                        b"result" | b"error" => says.response = Some(says.response.unwrap_or(true)),
                        b"method" => says.response = Some(false),
                        b"id" => says.id = number_at(&bytes[i + 1..]),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    says
}

/// Where the string whose contents begin at `start` ends (its closing quote).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// A JSON integer at the start of `bytes` (after white space), followed by
/// `,`, `}` or white space.
fn number_at(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?.trim_start();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(text.len());
    let rest = text[end..].trim_start();
    if !(rest.starts_with(',') || rest.starts_with('}')) {
        return None;
    }
    text[..end].parse().ok()
}

/// The id named by the last top-level members at the end of a JSON object:
/// `…,"id":7}` or `…,"id":7,"jsonrpc":"2.0"}`.
pub(crate) fn read_end(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?.trim_end();
    let mut body = text.strip_suffix('}')?.trim_end();
    // `"jsonrpc":"2.0"` may come last.
    if let Some(before) = body.strip_suffix("\"2.0\"") {
        let before = before.trim_end().strip_suffix(':')?.trim_end();
        body = before.strip_suffix("\"jsonrpc\"")?.trim_end();
        body = body.strip_suffix(',')?.trim_end();
    }
    let digits_from = body
        .rfind(|c: char| !(c.is_ascii_digit() || c == '-'))
        .map_or(0, |at| at + 1);
    let id: i64 = body[digits_from..].parse().ok()?;
    let before = body[..digits_from].trim_end().strip_suffix(':')?.trim_end();
    let before = before.strip_suffix("\"id\"")?;
    // A member of the top-level object follows `,` (or opens it); an escaped
    // quote would be inside a string.
    match before.trim_end().chars().last() {
        Some(',') | Some('{') if !before.ends_with('\\') => Some(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_of_a_response_names_it_and_maybe_its_id() {
        let says =
            read_start(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"id":99,"text":"xxx"#);
        assert_eq!(
            says,
            StartSays {
                response: Some(true),
                id: Some(7)
            }
        );
        // Result first: a response, id not seen (nested ids do not count).
        let says = read_start(br#"{"result":{"content":[{"type":"text","id":3,"text":"xx"#);
        assert_eq!(says.response, Some(true));
        assert_eq!(says.id, None);
        // A server's request: its id is not ours.
        let says =
            read_start(br#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"#);
        assert_eq!(says.response, Some(false));
        // Keys inside strings are not keys.
        let says = read_start(br#"{"result":{"text":"\"id\":5, \"method\":"#);
        assert_eq!(
            says,
            StartSays {
                response: Some(true),
                id: None
            }
        );
        // Cut before anything is known.
        assert_eq!(read_start(br#"{"jsonr"#), StartSays::default());
        assert_eq!(read_start(br#"{"jsonrpc":"2.0","id":12"#).id, None);
    }

    #[test]
    fn the_end_of_a_result_first_response_names_its_id() {
        assert_eq!(read_end(br#"xx"}]},"jsonrpc":"2.0","id":7}"#), Some(7));
        assert_eq!(
            read_end(br#"xx"}]}, "id" : 42 , "jsonrpc" : "2.0" }"#),
            Some(42)
        );
        assert_eq!(read_end(br#"xx"}]},"id":42,"jsonrpc":"2.0"}"#), Some(42));
        assert_eq!(read_end(b"xx\"}]},\"id\":3}  "), Some(3));
        // A nested id, or one inside a string, is not the response's.
        assert_eq!(read_end(br#"{"id":5}}"#), None);
        assert_eq!(read_end(br#"xx \"id\":5}"#), None);
        assert_eq!(read_end(br#"xx"}]}"#), None);
        assert_eq!(read_end(b""), None);
    }
}

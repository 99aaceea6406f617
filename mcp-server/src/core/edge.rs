//! Which message a skipped (oversized) line was, read from its first bytes.
//!
//! A client writes a request as `{"jsonrpc":"2.0","id":N,"method":…,"params":…}`:
//! the id and the method sit before the large part. The reader walks the
//! object's members in order while they are scalars and stops at the first
//! thing it cannot be sure of (an escape, a nested value, the cut). It
//! reports the id only when it also saw what kind of message the line was: a
//! `method` member makes it a request, `result` or `error` a response. An id
//! it cannot be sure of is left alone.

use mcp_types::RequestId;

/// What the start of a skipped line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SkippedMessage {
    /// A request with this id.
    Request(RequestId),
    /// A response to our request with this id.
    Response(RequestId),
    /// Not sure.
    Unknown,
}

/// Reads the start of a skipped line.
pub(crate) fn read_start(start: &[u8]) -> SkippedMessage {
    let mut r = Reader {
        bytes: start,
        at: 0,
    };
    let mut id = None;
    let mut kind = None;
    if !r.eat(b'{') {
        return SkippedMessage::Unknown;
    }
    while let Some(key) = r.string() {
        if !r.eat(b':') {
            break;
        }
        match key {
            "id" => match r.id() {
                Some(v) => id = Some(v),
                None => break,
            },
            "method" => {
                kind = Some(true);
                if r.string().is_none() {
                    // The method name is not needed; the kind is known.
                    if id.is_some() {
                        break;
                    }
                    return SkippedMessage::Unknown;
                }
            }
            "result" | "error" => {
                kind = Some(false);
                break;
            }
            _ => {
                if !r.skip_scalar() {
                    break;
                }
            }
        }
        if id.is_some() && kind.is_some() {
            break;
        }
        if !r.eat(b',') {
            break;
        }
    }
    match (id, kind) {
        (Some(id), Some(true)) => SkippedMessage::Request(id),
        (Some(id), Some(false)) => SkippedMessage::Response(id),
        _ => SkippedMessage::Unknown,
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// A string without escapes, whole (its closing quote seen).
    fn string(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let rest = &self.bytes[self.at..];
        let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
        if rest[end] != b'"' {
            return None;
        }
        let text = std::str::from_utf8(&rest[..end]).ok()?;
        self.at += end + 1;
        Some(text)
    }

    /// An integer or string id, whole (something after a number shows it
    /// was not cut).
    fn id(&mut self) -> Option<RequestId> {
        self.skip_ws();
        match self.bytes.get(self.at)? {
            b'"' => self.string().map(RequestId::from),
            b'-' | b'0'..=b'9' => {
                let rest = &self.bytes[self.at..];
                let len = rest.iter().position(|b| !matches!(b, b'-' | b'0'..=b'9'))?;
                if !matches!(rest[len], b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                    return None;
                }
                let n = std::str::from_utf8(&rest[..len]).ok()?.parse().ok()?;
                self.at += len;
                Some(RequestId::Number(n))
            }
            _ => None,
        }
    }

    /// Skips a string, number, `true`, `false` or `null`; refuses nested values.
    fn skip_scalar(&mut self) -> bool {
        self.skip_ws();
        match self.bytes.get(self.at) {
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') | None => false,
            Some(_) => {
                let rest = &self.bytes[self.at..];
                match rest
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n'))
                {
                    Some(len) => {
                        self.at += len;
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(start: &str, expect: SkippedMessage) {
        assert_eq!(read_start(start.as_bytes()), expect, "{start}");
    }

    #[test]
    fn the_id_of_a_request_or_response_is_read_only_when_sure() {
        use SkippedMessage::*;
        check(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"argu"#,
            Request(RequestId::Number(7)),
        );
        check(
            r#"{ "method" : "tools/call", "id": "a-1", "params":{"#,
            Request(RequestId::from("a-1")),
        );
        check(
            r#"{"jsonrpc":"2.0","id":-3,"result":{"content":["#,
            Response(RequestId::Number(-3)),
        );
        // The id is cut: `12` might be `123…`.
        check(r#"{"jsonrpc":"2.0","id":12"#, Unknown);
        // No kind yet.
        check(r#"{"jsonrpc":"2.0","id":12,"par"#, Unknown);
        // Params first: the id lies beyond them.
        check(r#"{"params":{"a":1},"id":1,"method":"x"}"#, Unknown);
        // An escaped string is not read.
        check(r#"{"id":"a\"b","method":"x""#, Unknown);
        check("[1,2", Unknown);
        check("", Unknown);
    }
}

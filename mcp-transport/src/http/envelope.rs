//! The little a transport reads of a JSON-RPC message: whether a frame is the
//! answer to one of our requests, and the `error` object of an error body.
//! Nothing else of MCP is interpreted here.

use bytes::Bytes;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(default)]
    result: Option<IgnoredAny>,
}

/// What a received body or event is, as far as the transport cares.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A response (result or error) carrying this integer id.
    Answer(i64),
    /// An error response whose id is `null`, missing or not one of ours; the
    /// raw `error` object.
    StrayError(Bytes),
    /// Anything else: a request, a notification, a response with a non-integer
    /// id, or not JSON-RPC at all.
    Other,
}

/// Classifies one JSON text.
///
/// A success response in the usual form (`{"jsonrpc":"2.0","id":N,"result":`
/// … with `jsonrpc` and `id` in either order and nothing else first) is
/// known from its first bytes ([`answer_prefix`]); only other texts are
/// scanned whole. The session parses every frame anyway: a 1 MiB result is
/// not read twice to learn that it is the answer. A text whose prefix looks
/// right but whose rest is not valid is the session's to reject (as a
/// violation); its request then waits for its deadline, which is no more
/// than a server that never answers can make it do.
pub(crate) fn shape(bytes: &[u8]) -> Shape {
    if let Some(id) = answer_prefix(bytes) {
        return Shape::Answer(id);
    }
    let Ok(env) = serde_json::from_slice::<Envelope<'_>>(bytes) else {
        return Shape::Other;
    };
    if env.method.is_some() {
        return Shape::Other;
    }
    let id = env
        .id
        .and_then(|raw| serde_json::from_str::<i64>(raw.get()).ok());
    match (id, env.error, env.result) {
        (Some(id), Some(_), _) | (Some(id), None, Some(_)) => Shape::Answer(id),
        (None, Some(error), _) => Shape::StrayError(Bytes::copy_from_slice(error.get().as_bytes())),
        _ => Shape::Other,
    }
}

/// The id of a text that opens as a success response: an object whose first
/// members are `"jsonrpc"` (a string without escapes) and `"id"` (an
/// integer), in either order, then `"result"`. `None` for anything else,
/// including every key written with an escape: the caller then scans the
/// whole text.
pub(crate) fn answer_prefix(bytes: &[u8]) -> Option<i64> {
    let mut at = Cursor { bytes, pos: 0 };
    at.byte(b'{')?;
    let (mut id, mut version) = (None, false);
    loop {
        let key = at.plain_string()?;
        at.byte(b':')?;
        match key {
            b"jsonrpc" if !version => {
                at.plain_string()?;
                version = true;
            }
            b"id" if id.is_none() => id = Some(at.integer()?),
            b"result" if version => return id,
            _ => return None,
        }
        at.byte(b',')?;
    }
}

/// A position in a text for [`answer_prefix`].
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The byte `b`, after whitespace.
    fn byte(&mut self, b: u8) -> Option<()> {
        self.skip_ws();
        (self.bytes.get(self.pos) == Some(&b)).then(|| self.pos += 1)
    }

    /// A string without escapes or control characters, after whitespace;
    /// its contents.
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let start = self.pos;
        let bytes = self.bytes;
        let len = bytes[start..]
            .iter()
            .take(64)
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        let end = start + len;
        (bytes[end] == b'"').then_some(())?;
        self.pos = end + 1;
        Some(&bytes[start..end])
    }

    /// An integer in JSON's grammar that fits an `i64`, after whitespace.
    fn integer(&mut self) -> Option<i64> {
        self.skip_ws();
        let start = self.pos;
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let digits = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let n = self.pos - digits;
        // JSON has no leading zeros, and a fraction or exponent is not an integer.
        if n == 0 || (n > 1 && self.bytes[digits] == b'0') {
            return None;
        }
        if matches!(self.bytes.get(self.pos), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        std::str::from_utf8(&self.bytes[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }
}

/// The raw `error` object of a JSON-RPC error body, whatever its id.
pub(crate) fn error_object(bytes: &[u8]) -> Option<Bytes> {
    let env = serde_json::from_slice::<Envelope<'_>>(bytes).ok()?;
    if env.method.is_some() {
        return None;
    }
    env.error
        .map(|e| Bytes::copy_from_slice(e.get().as_bytes()))
}

/// The `requestId` of a `notifications/cancelled` frame, when it is an integer.
pub(crate) fn cancelled_request_id(bytes: &[u8]) -> Option<i64> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: i64,
    }
    #[derive(Deserialize)]
    struct Cancel {
        params: Params,
    }
    serde_json::from_slice::<Cancel>(bytes)
        .ok()
        .map(|c| c.params.request_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_stray_errors_are_told_apart() {
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Shape::Answer(3)
        );
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"x"}}"#),
            Shape::Answer(4)
        );
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#),
            Shape::StrayError(Bytes::from_static(br#"{"code":-32600,"message":"x"}"#))
        );
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"x"}}"#),
            Shape::StrayError(Bytes::from_static(br#"{"code":-32000,"message":"x"}"#))
        );
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Shape::Other
        );
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#),
            Shape::Other
        );
        assert_eq!(shape(b"not json"), Shape::Other);
        assert_eq!(shape(b"[]"), Shape::Other);
    }

    #[test]
    fn a_success_response_is_known_from_its_prefix() {
        let answers: [(&[u8], i64); 5] = [
            (br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, 3),
            (br#"{"id":-7,"jsonrpc":"2.0","result":[1,2"#, -7),
            (b" {\n \"jsonrpc\" : \"2.0\" ,\t\"id\":0,\r\"result\":", 0),
            (
                br#"{"jsonrpc":"2.0","id":9223372036854775807,"result":1}"#,
                i64::MAX,
            ),
            (br#"{"jsonrpc":"2.0","id":12,"result":{"content":"#, 12),
        ];
        for (text, id) in answers {
            assert_eq!(
                answer_prefix(text),
                Some(id),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        let others: [&[u8]; 14] = [
            br#"{"jsonrpc":"2.0","id":3,"error":{}}"#,
            br#"{"jsonrpc":"2.0","method":"x","id":3,"result":{}}"#,
            br#"{"id":3,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":"3","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":3.0,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":3e1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":03,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":-,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","\u0069d":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1 "result":{}}"#,
            br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
        ];
        for text in others {
            assert_eq!(
                answer_prefix(text),
                None,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // Whatever the prefix says agrees with the whole-text reading.
        assert_eq!(
            shape(br#"{"jsonrpc":"2.0","id":5,"result":{"a":"\"}"}}"#),
            Shape::Answer(5)
        );
    }

    #[test]
    fn cancelled_ids_are_read() {
        let frame = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"x"}}"#;
        assert_eq!(cancelled_request_id(frame), Some(9));
        assert_eq!(cancelled_request_id(b"{}"), None);
    }
}

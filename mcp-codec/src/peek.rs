//! A look at a JSON-RPC frame's envelope without parsing it: enough to drop
//! a notification nobody wants before anything deserialises it.
//!
//! [`peek_notification`] walks the top-level object once, skipping every
//! member's value without looking inside (strings to their closing quote,
//! objects and arrays by counting brackets outside strings). It allocates
//! nothing, keeps no state beyond a nesting depth, and gives up — returns
//! `None`, meaning "parse it" — whenever an answer would need more care than
//! that: a key or the method written with escapes, a member named twice,
//! nesting deeper than [`MAX_PEEK_DEPTH`].
//!
//! The contract, for any frame that is valid JSON: `Some(method)` only when
//! a full parse finds a JSON-RPC 2.0 notification with that method (a
//! top-level object with `"jsonrpc": "2.0"`, a string `method`, and no `id`,
//! `result` or `error` member). The scan does not validate what it skips, so
//! for a frame that is *not* valid JSON (a broken number inside `params`, say)
//! it may still answer `Some`: such a frame is then treated as the
//! notification it claims to be instead of as a malformed one.

/// The deepest nesting the scan follows; deeper frames are left to the full
/// parse (which refuses them beyond 128 levels anyway).
pub const MAX_PEEK_DEPTH: usize = 100;

/// The method of `frame` when it is certainly a JSON-RPC 2.0 notification;
/// `None` when it is something else or the scan cannot be sure. See the
/// module docs for the contract.
pub fn peek_notification(frame: &[u8]) -> Option<&str> {
    let mut scan = Scan {
        bytes: frame,
        at: 0,
    };
    scan.whitespace();
    scan.expect(b'{')?;
    scan.whitespace();
    let mut method: Option<&[u8]> = None;
    let mut version = false;
    let mut params = false;
    loop {
        let key = scan.plain_string()?;
        scan.whitespace();
        scan.expect(b':')?;
        scan.whitespace();
        match key {
            b"method" => {
                if method.is_some() {
                    return None;
                }
                method = Some(scan.plain_string()?);
            }
            b"jsonrpc" => {
                if version || scan.plain_string()? != b"2.0" {
                    return None;
                }
                version = true;
            }
            b"params" => {
                if params {
                    return None;
                }
                params = true;
                scan.skip_value()?;
            }
            // Not a notification (or not a valid frame): the full parse says.
            b"id" | b"result" | b"error" => return None,
            _ => scan.skip_value()?,
        }
        scan.whitespace();
        match scan.next()? {
            b',' => scan.whitespace(),
            b'}' => break,
            _ => return None,
        }
    }
    scan.whitespace();
    if scan.at != frame.len() || !version {
        return None;
    }
    let method = method?;
    // A raw control character is not valid in a JSON string.
    if method.iter().any(|b| *b < 0x20) {
        return None;
    }
    std::str::from_utf8(method).ok()
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// A string without escapes, as its raw contents; `None` for anything
    /// else (an escape means the text is not what the bytes say).
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let rest = &self.bytes[self.at..];
        let end = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[end] == b'\\' {
            return None;
        }
        self.at += end + 1;
        Some(&rest[..end])
    }

    /// Moves past a string whose opening quote was just read.
    fn skip_string_body(&mut self) -> Option<()> {
        loop {
            let rest = &self.bytes[self.at..];
            let end = memchr::memchr2(b'"', b'\\', rest)?;
            if rest[end] == b'"' {
                self.at += end + 1;
                return Some(());
            }
            // An escape: the byte after the backslash is never the end.
            self.at += end + 2;
        }
    }

    /// Moves past one value without checking it.
    fn skip_value(&mut self) -> Option<()> {
        match self.next()? {
            b'"' => self.skip_string_body(),
            b'{' | b'[' => self.skip_nested(),
            b',' | b'}' | b']' | b':' => None,
            _ => {
                // A number or a literal: up to the next delimiter.
                while let Some(b) = self.bytes.get(self.at) {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.at += 1;
                }
                Some(())
            }
        }
    }

    /// Moves past an object or array whose opening bracket was just read.
    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 1usize;
        loop {
            match self.next()? {
                b'"' => self.skip_string_body()?,
                b'{' | b'[' => {
                    depth += 1;
                    if depth > MAX_PEEK_DEPTH {
                        return None;
                    }
                }
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => {}
            }
        }
    }
}

const FAST_PREFIX: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
/// The prefix of the same response with `result` first, as the TypeScript
/// SDK's servers write it (`{result, jsonrpc, id}`).
const RESULT_FIRST_PREFIX: &[u8] = b"{\"result\":";
/// What follows the result in that order, up to the id's digits.
const RESULT_FIRST_TAIL: &[u8] = b",\"jsonrpc\":\"2.0\",\"id\":";

/// A success response in the compact shape,
/// `{"jsonrpc":"2.0","id":<digits>,"result":<…>}` or, as the TypeScript
/// SDK's servers write it, `{"result":<…>,"jsonrpc":"2.0","id":<digits>}`:
/// its id and where its result lies, read from its ends without scanning the
/// result. `None` for anything else (spaces, another member order, a string
/// id, an error): the caller parses the frame. Nothing between the ends is
/// checked, so a caller that trusts the answer must still decode the slice
/// (the session does, falling back to a full parse when it is not exactly
/// one JSON value).
pub fn peek_response(frame: &[u8]) -> Option<(i64, std::ops::Range<usize>)> {
    if let Some(rest) = frame.strip_prefix(FAST_PREFIX) {
        let (id, digits) = leading_id(rest)?;
        let after = rest[digits..].strip_prefix(b",\"result\":")?;
        if frame.last() != Some(&b'}') || after.len() < 2 {
            return None;
        }
        return Some((id, frame.len() - after.len()..frame.len() - 1));
    }
    let body = frame.strip_prefix(RESULT_FIRST_PREFIX)?;
    let body = body.strip_suffix(b"}")?;
    let digits = body.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (head, id_text) = body.split_at(body.len() - digits);
    let (id, _) = leading_id(id_text)?;
    let result = head.strip_suffix(RESULT_FIRST_TAIL)?;
    if result.is_empty() {
        return None;
    }
    let start = RESULT_FIRST_PREFIX.len();
    Some((id, start..start + result.len()))
}

/// The integer id at the start of `text` and how many digits it took.
fn leading_id(text: &[u8]) -> Option<(i64, usize)> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    // JSON numbers have no leading zeros: `07` is left to the careful parse,
    // which refuses it.
    if digits == 0 || digits > 18 || (digits > 1 && text[0] == b'0') {
        return None;
    }
    let id = std::str::from_utf8(&text[..digits]).ok()?.parse().ok()?;
    Some((id, digits))
}

#[cfg(test)]
mod tests {
    use super::peek_notification;

    fn check(frame: &str, want: Option<&str>) {
        assert_eq!(peek_notification(frame.as_bytes()), want, "{frame}");
    }

    #[test]
    fn notifications_in_every_member_order_are_seen() {
        let log = Some("notifications/message");
        check(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
            log,
        );
        check(
            r#"{"method":"notifications/message","params":{"data":["}",{"a":"\"{"}]},"jsonrpc":"2.0"}"#,
            log,
        );
        check(
            " {\n \"params\" : null ,\"jsonrpc\" : \"2.0\", \"method\":\"notifications/message\" } \n",
            log,
        );
        check(
            r#"{"jsonrpc":"2.0","method":"x","extra":[1,2.5e3,true,null]}"#,
            Some("x"),
        );
    }

    #[test]
    fn anything_else_or_anything_unsure_is_left_to_the_parse() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"ping","id":"a"}"#,
            r#"{"jsonrpc":"2.0","method":"x","result":1}"#,
            r#"{"jsonrpc":"2.0","method":"x","error":{}}"#,
            r#"{"method":"x"}"#,
            r#"{"jsonrpc":"1.0","method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x","method":"y"}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x","params":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"no\u0074ifications/message"}"#,
            r#"{"jsonrpc":"2.0","\u0069d":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":7}"#,
            r#"{"jsonrpc":"2.0","method":"x"} trailing"#,
            r#"{"jsonrpc":"2.0","method":"x""#,
            r#"[{"jsonrpc":"2.0","method":"x"}]"#,
            r#"{}"#,
            "",
        ] {
            check(frame, None);
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        check(&deep, None);
    }
}

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
/// A success response in the compact shape is known from its ends
/// ([`mcp_codec::peek_response`], the session's own fast path), so a 1 MiB
/// result is not read twice to learn that it is the answer; only other
/// texts are scanned whole. A text whose ends look right but whose middle
/// is not valid is the session's to reject (as a violation); its request
/// then waits for its deadline, which is no more than a server that never
/// answers can make it do.
pub(crate) fn shape(bytes: &[u8]) -> Shape {
    if let Some((id, _)) = mcp_codec::peek_response(bytes) {
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

/// Whether a refusal's body says it is about the session: a JSON-RPC
/// error whose `message` names it (`"Bad Request: No valid session ID
/// provided"`), or a body that is not JSON-RPC and names it in its first
/// kilobyte. ASCII case is ignored.
pub(crate) fn names_session(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Error<'a> {
        #[serde(borrow)]
        message: std::borrow::Cow<'a, str>,
    }
    #[derive(Deserialize)]
    struct WithError<'a> {
        #[serde(borrow)]
        error: Error<'a>,
    }
    let mentions = |text: &[u8]| {
        text.windows(b"session".len())
            .any(|w| w.eq_ignore_ascii_case(b"session"))
    };
    match serde_json::from_slice::<WithError<'_>>(body) {
        Ok(answer) => mentions(answer.error.message.as_bytes()),
        Err(_) => mentions(&body[..body.len().min(1024)]),
    }
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
    fn a_refusal_about_the_session_is_known_by_its_words() {
        for about in [
            &br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#[..],
            br#"{"error":{"code":-32001,"message":"SESSION not found"}}"#,
            br#"{"error":{"message":"unknown \u0073ession"}}"#,
            b"Invalid or missing session ID",
        ] {
            assert!(names_session(about), "{}", String::from_utf8_lossy(about));
        }
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#[..],
            // The error's own words decide, not the rest of the body.
            br#"{"error":{"code":-32602,"message":"bad","data":"session"}}"#,
            b"Bad Request",
            b"",
        ] {
            assert!(!names_session(other), "{}", String::from_utf8_lossy(other));
        }
        // A long text body is looked at only in its first kilobyte.
        let mut long = vec![b' '; 2048];
        long.extend_from_slice(b"session");
        assert!(!names_session(&long));
    }

    #[test]
    fn a_compact_success_response_is_known_from_its_ends() {
        // The compact shapes take the short way, the others the whole
        // scan: the same verdicts either way.
        let answers: [(&[u8], i64); 5] = [
            (br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, 3),
            (br#"{"result":{"a":"\"}"},"jsonrpc":"2.0","id":12}"#, 12),
            (b" {\n \"jsonrpc\" : \"2.0\" ,\t\"id\":0,\r\"result\":1}", 0),
            (br#"{"id":-7,"jsonrpc":"2.0","result":[1,2]}"#, -7),
            (
                br#"{"jsonrpc":"2.0","id":9223372036854775807,"result":1}"#,
                i64::MAX,
            ),
        ];
        for (text, id) in answers {
            assert_eq!(
                shape(text),
                Shape::Answer(id),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(
            mcp_codec::peek_response(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).map(|(id, _)| id),
            Some(3)
        );
        let others: [&[u8]; 5] = [
            br#"{"jsonrpc":"2.0","method":"x","id":3,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":"3","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":03,"result":{}}"#,
            br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
        ];
        for text in others {
            assert_eq!(
                shape(text),
                Shape::Other,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn cancelled_ids_are_read() {
        let frame = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"x"}}"#;
        assert_eq!(cancelled_request_id(frame), Some(9));
        assert_eq!(cancelled_request_id(b"{}"), None);
    }
}

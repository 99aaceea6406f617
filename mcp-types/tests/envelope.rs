//! The JSON-RPC envelope: request ids, outgoing frames, and `Incoming::parse` on
//! every well-formed and malformed shape.

use mcp_types::*;
use serde_json::json;

fn parse(frame: &str) -> Result<Incoming<'_>, TypesError> {
    Incoming::parse(frame.as_bytes())
}

#[test]
fn request_ids_are_strings_or_integers_never_null() {
    assert_eq!(
        serde_json::from_str::<RequestId>("7").unwrap(),
        RequestId::Number(7)
    );
    assert_eq!(
        serde_json::from_str::<RequestId>("-3").unwrap(),
        RequestId::Number(-3)
    );
    assert_eq!(
        serde_json::from_str::<RequestId>("\"abc\"").unwrap(),
        RequestId::String("abc".into())
    );
    assert!(serde_json::from_str::<RequestId>("null").is_err());
    assert!(serde_json::from_str::<RequestId>("1.5").is_err());
    assert!(serde_json::from_str::<RequestId>("true").is_err());
    assert!(
        serde_json::from_str::<RequestId>("18446744073709551615").is_err(),
        "beyond i64"
    );
    assert_eq!(
        serde_json::to_string(&RequestId::String("x".into())).unwrap(),
        "\"x\""
    );
    assert_eq!(RequestId::Number(4).to_string(), "4");
    assert_eq!(RequestId::String("a".into()).to_string(), "\"a\"");
}

#[test]
fn outgoing_frames_serialise_exactly() {
    let id = RequestId::Number(1);
    let params = json!({ "name": "x" });
    let req = OutgoingRequest {
        id: &id,
        method: "tools/call",
        params: Some(&params),
    };
    assert_eq!(
        serde_json::to_string(&req).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#
    );
    let req: OutgoingRequest<'_, serde_json::Value> = OutgoingRequest {
        id: &id,
        method: "ping",
        params: None,
    };
    assert_eq!(
        serde_json::to_string(&req).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
    );
    let note = OutgoingNotification {
        method: "notifications/initialized",
        params: None::<&EmptyResult>,
    };
    assert_eq!(
        serde_json::to_string(&note).unwrap(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let result = OutgoingResult {
        id: &RequestId::String("s".into()),
        result: &EmptyResult::default(),
    };
    assert_eq!(
        serde_json::to_string(&result).unwrap(),
        r#"{"jsonrpc":"2.0","id":"s","result":{}}"#
    );
    let err = ErrorObject::new(error_codes::METHOD_NOT_FOUND, "Method not found");
    let frame = OutgoingError {
        id: None,
        error: &err,
    };
    assert_eq!(
        serde_json::to_string(&frame).unwrap(),
        r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}"#
    );
}

#[test]
fn incoming_requests_and_notifications() {
    match parse(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#).unwrap() {
        Incoming::Request { id, method, params } => {
            assert_eq!(id, RequestId::String("a".into()));
            assert_eq!(method, "ping");
            assert!(params.is_none());
        }
        other => panic!("expected a request, got {other:?}"),
    }
    match parse(r#"{"method":"notifications/progress","params":{"progress":1,"progressToken":2},"jsonrpc":"2.0"}"#)
        .unwrap()
    {
        Incoming::Notification { method, params } => {
            assert_eq!(method, "notifications/progress");
            assert_eq!(params.unwrap().get(), r#"{"progress":1,"progressToken":2}"#);
        }
        other => panic!("expected a notification, got {other:?}"),
    }
    // `"params": null` reads as no params; unknown members are ignored.
    match parse(r#"{"jsonrpc":"2.0","method":"x","params":null,"extra":true}"#).unwrap() {
        Incoming::Notification { params, .. } => assert!(params.is_none()),
        other => panic!("expected a notification, got {other:?}"),
    }
    // An escaped method name still reads.
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","method":"tools\/list","id":1}"#)
            .unwrap()
            .method(),
        Some("tools/list")
    );
}

#[test]
fn incoming_responses_keep_the_raw_result() {
    match parse(r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[] , "x":1.0}}"#).unwrap() {
        Incoming::Response { id, result } => {
            assert_eq!(id, RequestId::Number(5));
            assert_eq!(result.get(), r#"{"tools":[] , "x":1.0}"#);
            let decoded: ListToolsResult = decode_result(result).unwrap();
            assert!(decoded.tools.is_empty());
        }
        other => panic!("expected a response, got {other:?}"),
    }
    match parse(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#)
        .unwrap()
    {
        Incoming::Error { id, error } => {
            assert_eq!(id, None);
            assert_eq!(error.code, error_codes::PARSE_ERROR);
        }
        other => panic!("expected an error, got {other:?}"),
    }
    match parse(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad","data":{"k":1}}}"#)
        .unwrap()
    {
        Incoming::Error { id, error } => {
            assert_eq!(id, None);
            assert_eq!(error.data, Some(json!({ "k": 1 })));
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn malformed_frames_have_named_errors() {
    type IsExpected = fn(&TypesError) -> bool;
    let cases: &[(&str, IsExpected)] = &[
        (r#"{"id":1,"method":"ping"}"#, |e| {
            matches!(e, TypesError::MissingJsonRpcVersion)
        }),
        (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, |e| {
            matches!(e, TypesError::UnsupportedJsonRpcVersion)
        }),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            |e| matches!(e, TypesError::ResultAndError),
        ),
        (r#"{"jsonrpc":"2.0","result":{}}"#, |e| {
            matches!(e, TypesError::ResponseWithoutId)
        }),
        (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, |e| {
            matches!(e, TypesError::NullRequestId)
        }),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, |e| {
            matches!(e, TypesError::NullRequestId)
        }),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, |e| {
            matches!(e, TypesError::InvalidRequestId)
        }),
        (r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#, |e| {
            matches!(e, TypesError::InvalidRequestId)
        }),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            |e| matches!(e, TypesError::MethodInResponse),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","error":{"code":1,"message":"m"}}"#,
            |e| matches!(e, TypesError::MethodInResponse),
        ),
        (r#"{"jsonrpc":"2.0","id":1}"#, |e| {
            matches!(e, TypesError::NotAMessage)
        }),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
            |e| matches!(e, TypesError::InvalidErrorObject(_)),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#, |e| {
            matches!(e, TypesError::InvalidErrorObject(_))
        }),
        (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, |e| {
            matches!(e, TypesError::MalformedFrame(_))
        }),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            |e| matches!(e, TypesError::MalformedFrame(_)),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"#, |e| {
            matches!(e, TypesError::MalformedFrame(_))
        }),
        (r#""just a string""#, |e| {
            matches!(e, TypesError::MalformedFrame(_))
        }),
        (r#"  [{"jsonrpc":"2.0","method":"x"}]"#, |e| {
            matches!(e, TypesError::UnexpectedBatch)
        }),
    ];
    for (frame, is_expected) in cases {
        match parse(frame) {
            Ok(m) => panic!("{frame}: accepted as {m:?}"),
            Err(e) => assert!(is_expected(&e), "{frame}: wrong error {e:?}"),
        }
    }
}

#[test]
fn batches_classify_each_member() {
    let frame =
        br#"[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":1,"result":{}},{"id":2}]"#;
    let parsed = Incoming::parse_batch(frame).unwrap();
    assert_eq!(parsed.len(), 3);
    assert!(matches!(parsed[0], Ok(Incoming::Notification { .. })));
    assert!(matches!(parsed[1], Ok(Incoming::Response { .. })));
    assert!(matches!(parsed[2], Err(TypesError::MissingJsonRpcVersion)));
    assert!(matches!(
        Incoming::parse_batch(b"[]"),
        Err(TypesError::NotAMessage)
    ));
}

#[test]
fn errors_never_show_peer_data() {
    let secret = "sk-SECRET-TOKEN";
    let frame = format!(r#"{{"jsonrpc":"2.0","id":1,"method":{{"{secret}":1}}}}"#);
    let err = Incoming::parse(frame.as_bytes()).unwrap_err();
    let mut chain = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        chain.push_str(&s.to_string());
        source = s.source();
    }
    assert!(
        !chain.contains(secret),
        "error chain leaks peer data: {chain}"
    );
    assert!(chain.contains("malformed"), "{chain}");

    let params =
        serde_json::value::RawValue::from_string(format!(r#"{{"level":"{secret}"}}"#)).unwrap();
    let err = ServerRequestMessage::parse("sampling/createMessage", Some(&params)).unwrap_err();
    assert!(matches!(
        err,
        TypesError::InvalidParams {
            method: "sampling/createMessage",
            ..
        }
    ));
    let shown = format!(
        "{err} / {}",
        std::error::Error::source(&err)
            .map(|s| s.to_string())
            .unwrap_or_default()
    );
    assert!(!shown.contains(secret), "{shown}");
    // The full serde error stays reachable on purpose.
    if let TypesError::InvalidParams { source, .. } = &err {
        assert!(!source.inner().to_string().is_empty());
    }
}

#[test]
fn owned_frames_round_trip_and_check_the_version() {
    let text = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c"}}"#;
    let req: JsonRpcRequest<PaginatedParams> = serde_json::from_str(text).unwrap();
    assert_eq!(req.params.as_ref().unwrap().cursor.as_deref(), Some("c"));
    assert_eq!(serde_json::to_string(&req).unwrap(), text);
    assert!(
        serde_json::from_str::<JsonRpcRequest<PaginatedParams>>(&text.replace("2.0", "2.1"))
            .is_err()
    );
    let err: JsonRpcErrorResponse =
        serde_json::from_str(r#"{"jsonrpc":"2.0","error":{"code":-32020,"message":"m"}}"#).unwrap();
    assert_eq!(err.id, None);
    assert_eq!(err.error.code, error_codes::HEADER_MISMATCH);
}

#[test]
fn error_codes_match_the_2026_spec() {
    use error_codes::*;
    assert_eq!(
        [
            PARSE_ERROR,
            INVALID_REQUEST,
            METHOD_NOT_FOUND,
            INVALID_PARAMS,
            INTERNAL_ERROR
        ],
        [-32700, -32600, -32601, -32602, -32603]
    );
    assert_eq!(
        [
            HEADER_MISMATCH,
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            UNSUPPORTED_PROTOCOL_VERSION
        ],
        [-32020, -32021, -32022]
    );
    assert_eq!(
        [RESOURCE_NOT_FOUND, URL_ELICITATION_REQUIRED],
        [-32002, -32042]
    );
}

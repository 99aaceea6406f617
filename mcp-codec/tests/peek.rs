//! `peek_notification` against a full serde_json parse of the same frame
//! (the envelope read the way `mcp_types::Incoming::parse` reads it): on
//! valid JSON, `Some(method)` only for a notification with that method, and
//! `Some` for every notification written plainly.

use std::borrow::Cow;

use mcp_codec::peek_notification;
use proptest::prelude::*;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// The envelope as the session's full parse reads it: duplicate known
/// members are an error, unknown members are ignored, a present `null` is
/// present.
#[derive(Deserialize)]
#[allow(dead_code)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(d).map(Some)
}

/// The method when the full parse finds a JSON-RPC 2.0 notification.
fn reference(frame: &[u8]) -> Option<String> {
    let first = frame.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return None;
    }
    let env: Envelope<'_> = serde_json::from_slice(frame).ok()?;
    let notification = env.jsonrpc.as_deref() == Some("2.0")
        && env.id.is_none()
        && env.result.is_none()
        && env.error.is_none();
    notification
        .then(|| env.method.map(Cow::into_owned))
        .flatten()
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("}"),
            Just("]"),
            Just("{\"id\":1}"),
            Just("\\\""),
            Just("\"method\":")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("id".to_owned()),
                        Just("method".to_owned()),
                        "[a-z]{0,6}"
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// One member of the top-level object: its key and its value as written.
#[derive(Clone, Debug)]
struct Member {
    key: String,
    value: String,
}

fn member() -> impl Strategy<Value = Member> {
    let method_value = prop_oneof![
        4 => prop_oneof![
            Just("notifications/message".to_owned()),
            Just("notifications/progress".to_owned()),
            Just("notifications/tools/list_changed".to_owned()),
            ".{0,16}",
        ]
        .prop_map(|m| serde_json::to_string(&m).unwrap()),
        1 => Just(r#""notifications\/message""#.to_owned()),
        1 => Just("7".to_owned()),
        1 => Just("null".to_owned()),
    ];
    let version = prop_oneof![
        6 => Just(r#""2.0""#.to_owned()),
        1 => Just(r#""1.0""#.to_owned()),
        1 => Just(r#""2\u002e0""#.to_owned()),
        1 => Just("null".to_owned()),
    ];
    let value = || json_value().prop_map(|v| v.to_string());
    prop_oneof![
        4 => method_value.prop_map(|value| Member { key: r#""method""#.into(), value }),
        4 => version.prop_map(|value| Member { key: r#""jsonrpc""#.into(), value }),
        3 => value().prop_map(|value| Member { key: r#""params""#.into(), value }),
        1 => value().prop_map(|value| Member { key: r#""id""#.into(), value }),
        1 => value().prop_map(|value| Member { key: r#""result""#.into(), value }),
        1 => value().prop_map(|value| Member { key: r#""error""#.into(), value }),
        2 => (prop_oneof![
            Just(r#""_meta""#.to_owned()),
            Just(r#""extra""#.to_owned()),
            Just(r#""i\u0064""#.to_owned()),
            Just(r#""\u006dethod""#.to_owned()),
            "[a-z]{0,5}".prop_map(|k| format!("\"{k}\"")),
        ], value()).prop_map(|(key, value)| Member { key, value }),
    ]
}

fn frame() -> impl Strategy<Value = String> {
    let space = prop_oneof![Just(""), Just(""), Just(" "), Just("\n\t "), Just("\r\n")];
    let version = prop::option::weighted(
        0.9,
        Just(Member {
            key: r#""jsonrpc""#.into(),
            value: r#""2.0""#.into(),
        }),
    );
    let method = prop::option::weighted(
        0.9,
        ".{0,12}".prop_map(|m| Member {
            key: r#""method""#.into(),
            value: serde_json::to_string(&m).unwrap(),
        }),
    );
    let members = (version, method, prop::collection::vec(member(), 0..4)).prop_flat_map(
        |(version, method, rest)| {
            let all: Vec<Member> = version.into_iter().chain(method).chain(rest).collect();
            Just(all).prop_shuffle()
        },
    );
    (members, prop::collection::vec(space, 24)).prop_map(|(members, spaces)| {
        let mut ws = spaces.into_iter().cycle();
        let mut out = String::new();
        out.push_str(ws.next().unwrap());
        out.push('{');
        for (i, m) in members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(ws.next().unwrap());
            out.push_str(&m.key);
            out.push_str(ws.next().unwrap());
            out.push(':');
            out.push_str(ws.next().unwrap());
            out.push_str(&m.value);
            out.push_str(ws.next().unwrap());
        }
        out.push('}');
        out.push_str(ws.next().unwrap());
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn a_peeked_method_is_the_method_of_a_notification(frame in frame()) {
        let peeked = peek_notification(frame.as_bytes());
        let full = reference(frame.as_bytes());
        if let Some(method) = peeked {
            prop_assert_eq!(Some(method.to_owned()), full, "{}", frame);
        }
    }

    #[test]
    fn a_plainly_written_notification_is_always_peeked(
        method in ".{0,20}",
        params in json_value(),
        extra in json_value(),
        params_first in any::<bool>(),
    ) {
        let method_json = serde_json::to_string(&method).unwrap();
        let params = params.to_string();
        let frame = if params_first {
            format!(r#"{{"params":{params},"x":{extra},"method":{method_json},"jsonrpc":"2.0"}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","method":{method_json},"params":{params}}}"#)
        };
        let full = reference(frame.as_bytes());
        prop_assert_eq!(full.as_deref(), Some(method.as_str()));
        let plainly = !method_json[1..method_json.len() - 1].contains('\\');
        if plainly {
            prop_assert_eq!(peek_notification(frame.as_bytes()), Some(method.as_str()), "{}", frame);
        } else {
            prop_assert_eq!(peek_notification(frame.as_bytes()), None);
        }
    }

    #[test]
    fn whatever_serde_json_writes_is_never_misread(value in json_value()) {
        // Arbitrary top-level values (objects with `id` and `method` keys
        // among them), compact and pretty.
        for frame in [value.to_string(), serde_json::to_string_pretty(&value).unwrap()] {
            if let Some(method) = peek_notification(frame.as_bytes()) {
                prop_assert_eq!(Some(method.to_owned()), reference(frame.as_bytes()));
            }
        }
    }
}

#[test]
fn the_generated_frames_hold_plain_notifications_often_enough() {
    // A guard on the generator: the first property is vacuous unless many
    // frames are notifications the scan sees.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = frame();
    let mut seen = 0;
    for _ in 0..2000 {
        let frame = strategy.new_tree(&mut runner).unwrap().current();
        if peek_notification(frame.as_bytes()).is_some() {
            seen += 1;
        }
    }
    assert!(
        seen > 50,
        "only {seen} of 2000 generated frames were notifications"
    );
}

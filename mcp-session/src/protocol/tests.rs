//! Transcript tests of the core with simulated time: frames in, frames and
//! events out, no runtime.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_types::error_codes;
use serde_json::{Value, json};

use super::*;

/// A core plus a simulated clock.
struct Harness {
    core: ProtocolCore<u32>,
    t0: Instant,
}

impl Harness {
    fn new(limits: CoreLimits) -> Self {
        Self {
            core: ProtocolCore::new(limits),
            t0: Instant::now(),
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.t0 + Duration::from_millis(ms)
    }

    fn start(&mut self, ms: u64, method: &str, timing: RequestTiming, waiter: u32) -> (i64, Value) {
        let method: Arc<str> = Arc::from(method);
        let (id, frame) = self
            .core
            .start_request(self.at(ms), &method, timing, waiter, |_| None)
            .expect("request accepted");
        (id, serde_json::from_slice(&frame).unwrap())
    }

    fn feed(&mut self, ms: u64, v: Value) {
        let frame = Bytes::from(serde_json::to_vec(&v).unwrap());
        self.core.handle_frame(self.at(ms), frame);
    }

    fn transmitted(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.core.poll_transmit())
            .map(|b| serde_json::from_slice(&b).unwrap())
            .collect()
    }

    fn events(&mut self) -> Vec<CoreEvent<u32>> {
        std::iter::from_fn(|| self.core.poll_event()).collect()
    }
}

fn timing(ms: u64) -> RequestTiming {
    RequestTiming {
        timeout: Duration::from_millis(ms),
        ..RequestTiming::default()
    }
}

#[test]
fn a_response_completes_its_request_with_the_raw_result() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, frame) = h.start(0, "tools/list", timing(1000), 7);
    assert_eq!(
        frame,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
    );
    h.feed(
        5,
        json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}}),
    );
    let events = h.events();
    assert_eq!(events.len(), 1);
    match &events[0] {
        CoreEvent::Completed {
            waiter,
            outcome: Ok(raw),
            ..
        } => {
            assert_eq!(*waiter, 7);
            assert_eq!(raw.decode_json::<Value>().unwrap(), json!({"tools": []}));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(h.core.in_flight(), 0);
    assert_eq!(h.core.poll_timeout(), None);
}

#[test]
fn an_error_response_fails_its_request_with_the_server_error() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/call", timing(1000), 1);
    h.feed(
        1,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "bad"}}),
    );
    match h.events().pop() {
        Some(CoreEvent::Completed {
            outcome: Err(Failure::Server(e)),
            ..
        }) => {
            assert_eq!(e.code, -32602);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_deadline_fails_the_request_and_cancels_it_at_the_server() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/call", timing(100), 1);
    assert_eq!(h.core.poll_timeout(), Some(h.at(100)));
    h.core.handle_timeout(h.at(99));
    assert!(h.events().is_empty(), "nothing expires early");
    h.core.handle_timeout(h.at(100));
    match h.events().pop() {
        Some(CoreEvent::Completed {
            outcome: Err(Failure::Timeout { after }),
            ..
        }) => {
            assert_eq!(after, Duration::from_millis(100));
        }
        other => panic!("unexpected {other:?}"),
    }
    let sent = h.transmitted();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "notifications/cancelled");
    assert_eq!(sent[0]["params"]["requestId"], json!(id));
    // A late answer is recognised, not reported as a violation.
    h.feed(150, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    assert!(h.events().is_empty());
    assert_eq!(h.core.stats().late_responses, 1);
    assert_eq!(h.core.stats().violations, 0);
}

#[test]
fn progress_pushes_the_deadline_back_but_never_past_the_hard_maximum() {
    let limits = CoreLimits {
        hard_deadline: Duration::from_millis(250),
        ..CoreLimits::default()
    };
    let mut h = Harness::new(limits);
    let (id, _) = h.start(0, "tools/call", timing(100), 1);
    let progress = |token: i64| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": token, "progress": 1}})
    };
    h.feed(90, progress(id));
    assert!(matches!(
        h.events().as_slice(),
        [CoreEvent::Progress { .. }]
    ));
    assert_eq!(h.core.poll_timeout(), Some(h.at(190)));
    h.core.handle_timeout(h.at(150));
    assert!(h.events().is_empty(), "the old deadline no longer applies");
    h.feed(180, progress(id));
    h.events();
    // 180 + 100 would be 280, past the hard maximum of 250.
    assert_eq!(h.core.poll_timeout(), Some(h.at(250)));
    h.core.handle_timeout(h.at(250));
    assert!(matches!(
        h.events().as_slice(),
        [CoreEvent::Completed {
            outcome: Err(Failure::Timeout { .. }),
            ..
        }]
    ));
}

#[test]
fn deadlines_are_held_while_the_host_answers_a_question_of_the_servers() {
    let limits = CoreLimits {
        hard_deadline: Duration::from_millis(1000),
        ..CoreLimits::default()
    };
    let mut h = Harness::new(limits);
    let caps: mcp_types::ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    h.core.set_offered(&caps);
    let (call, _) = h.start(0, "tools/call", timing(100), 1);
    let fixed = RequestTiming {
        reset_on_progress: false,
        ..timing(100)
    };
    let (probe, _) = h.start(0, "server/discover", fixed, 2);
    let ask = |id: i64| {
        json!({"jsonrpc": "2.0", "id": format!("ask-{id}"), "method": "elicitation/create",
               "params": {"message": "Name?", "requestedSchema": {"type": "object",
                          "properties": {"name": {"type": "string"}}}}})
    };
    h.feed(50, ask(1));
    h.feed(60, ask(2));
    assert_eq!(h.events().len(), 2, "both questions reach the host");
    // A person takes a while over the form: the call does not run out, a
    // request whose deadline is fixed does.
    h.core.handle_timeout(h.at(100));
    let expired: Vec<i64> = h
        .events()
        .into_iter()
        .map(|e| match e {
            CoreEvent::Completed {
                id,
                outcome: Err(Failure::Timeout { .. }),
                ..
            } => id,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(expired, [probe]);
    h.core.handle_timeout(h.at(400));
    assert!(h.events().is_empty(), "held while the host answers");
    // One answer of two: still held.
    h.core.answer_server_request(
        h.at(450),
        &RequestId::String("ask-1".into()),
        Ok(json!({"action": "cancel"})),
    );
    h.core.handle_timeout(h.at(500));
    assert!(h.events().is_empty());
    // The server cancels the other: the whole timeout runs again from then.
    h.feed(
        520,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "ask-2"}}),
    );
    let events = h.events();
    assert!(
        matches!(
            events.first(),
            Some(CoreEvent::ServerRequestCancelled { .. })
        ),
        "{events:?}"
    );
    h.core.handle_timeout(h.at(619));
    assert!(
        h.events().is_empty(),
        "a whole timeout after the last answer"
    );
    h.core.handle_timeout(h.at(620));
    match h.events().as_slice() {
        [
            CoreEvent::Completed {
                id,
                outcome: Err(Failure::Timeout { after }),
                ..
            },
        ] => {
            assert_eq!(*id, call);
            assert_eq!(*after, Duration::from_millis(620));
        }
        other => panic!("unexpected {other:?}"),
    }
    // Never past the hard deadline, however long the host takes.
    let (late, _) = h.start(700, "tools/call", timing(100), 3);
    h.feed(750, ask(3));
    h.events();
    h.core.handle_timeout(h.at(1699));
    assert!(h.events().is_empty());
    h.core.handle_timeout(h.at(1700));
    assert!(matches!(
        h.events().as_slice(),
        [CoreEvent::Completed { id, outcome: Err(Failure::Timeout { .. }), .. }] if *id == late
    ));
}

#[test]
fn progress_does_not_reset_when_not_asked_to() {
    let mut h = Harness::new(CoreLimits::default());
    let t = RequestTiming {
        reset_on_progress: false,
        ..timing(100)
    };
    let (id, _) = h.start(0, "tools/call", t, 1);
    h.feed(
        90,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": id, "progress": 1}}),
    );
    h.events();
    assert_eq!(h.core.poll_timeout(), Some(h.at(100)));
}

#[test]
fn an_uncancellable_request_times_out_without_a_cancellation() {
    let mut h = Harness::new(CoreLimits::default());
    let t = RequestTiming {
        cancellable: false,
        ..timing(10)
    };
    h.start(0, "initialize", t, 1);
    h.core.handle_timeout(h.at(10));
    assert_eq!(h.events().len(), 1);
    assert!(h.transmitted().is_empty(), "initialize is never cancelled");
}

#[test]
fn cancelling_tells_the_server_and_hands_back_the_waiter() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/call", timing(1000), 9);
    assert_eq!(h.core.cancel(id, "user"), Some(9));
    assert_eq!(h.core.cancel(id, "user"), None, "only once");
    let sent = h.transmitted();
    assert_eq!(
        sent[0]["params"],
        json!({"requestId": id, "reason": "user"})
    );
    assert_eq!(h.core.poll_timeout(), None);
}

#[test]
fn closing_fails_every_pending_request_and_refuses_new_ones() {
    let mut h = Harness::new(CoreLimits::default());
    let (a, _) = h.start(0, "a", timing(1000), 1);
    h.start(0, "b", timing(1000), 2);
    h.core.handle_closed();
    let waiters: Vec<u32> = h
        .events()
        .into_iter()
        .map(|e| match e {
            CoreEvent::Completed {
                waiter,
                outcome: Err(Failure::Closed),
                ..
            } => waiter,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(waiters, vec![1, 2]);
    // The server may still answer while the connection winds down: late,
    // not a broken protocol.
    h.feed(2, json!({"jsonrpc": "2.0", "id": a, "result": {}}));
    assert!(h.events().is_empty());
    assert_eq!(h.core.stats().late_responses, 1);
    assert_eq!(h.core.stats().violations, 0);
    let method: Arc<str> = Arc::from("c");
    let refused = h
        .core
        .start_request(h.at(1), &method, timing(1), 3, |_| None);
    assert_eq!(refused.unwrap_err(), Refusal::Closed);
}

#[test]
fn the_in_flight_bound_is_a_named_refusal() {
    let mut h = Harness::new(CoreLimits {
        max_in_flight: 2,
        ..CoreLimits::default()
    });
    h.start(0, "a", timing(1000), 1);
    h.start(0, "b", timing(1000), 2);
    let method: Arc<str> = Arc::from("c");
    let refused = h
        .core
        .start_request(h.at(0), &method, timing(1000), 3, |_| None);
    assert_eq!(refused.unwrap_err(), Refusal::TooManyInFlight { limit: 2 });
    assert_eq!(h.core.stats().refused_in_flight, 1);
}

#[test]
fn malformed_frames_and_unknown_ids_are_violations_not_failures() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/list", timing(1000), 1);
    h.core
        .handle_frame(h.at(1), Bytes::from_static(b"this is not json"));
    h.feed(2, json!({"jsonrpc": "1.0", "id": id, "result": {}}));
    h.feed(3, json!({"jsonrpc": "2.0", "id": 999, "result": {}}));
    h.feed(4, json!({"jsonrpc": "2.0", "id": "x", "result": {}}));
    let events = h.events();
    assert!(matches!(
        events[0],
        CoreEvent::Violation(Violation::Malformed)
    ));
    assert!(matches!(
        events[1],
        CoreEvent::Violation(Violation::Malformed)
    ));
    assert!(matches!(
        events[2],
        CoreEvent::Violation(Violation::UnknownResponseId(RequestId::Number(999)))
    ));
    assert!(matches!(
        events[3],
        CoreEvent::Violation(Violation::UnknownResponseId(_))
    ));
    assert_eq!(h.core.stats().violations, 4);
    assert_eq!(h.core.in_flight(), 1, "the real request still waits");
    h.feed(
        5,
        json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}}),
    );
    assert!(matches!(
        h.events().as_slice(),
        [CoreEvent::Completed { outcome: Ok(_), .. }]
    ));
}

#[test]
fn server_requests_and_notifications_are_routed_to_the_driver() {
    let mut h = Harness::new(CoreLimits::default());
    h.feed(0, json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"}));
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
    );
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": 12345, "progress": 1}}),
    );
    // `ping` is the core's to answer; the notification goes to the driver.
    assert_eq!(
        h.transmitted(),
        [json!({"jsonrpc": "2.0", "id": "s1", "result": {}})]
    );
    let events = h.events();
    assert_eq!(events.len(), 1, "stray progress is counted, not delivered");
    assert!(
        matches!(&events[0], CoreEvent::Notification { method, .. } if method == "notifications/tools/list_changed")
    );
    assert_eq!(h.core.stats().stray_progress, 1);
}

#[test]
fn server_requests_the_host_did_not_offer_are_refused_by_the_core() {
    let mut h = Harness::new(CoreLimits::default());
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}),
    );
    h.feed(0, json!({"jsonrpc": "2.0", "id": 2, "method": "no/such"}));
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {"maxTokens": "x"}}),
    );
    assert!(h.events().is_empty(), "nothing reaches the host");
    let answers = h.transmitted();
    let codes: Vec<(i64, i64)> = answers
        .iter()
        .map(|a| {
            (
                a["id"].as_i64().unwrap(),
                a["error"]["code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            (1, error_codes::METHOD_NOT_FOUND),
            (2, error_codes::METHOD_NOT_FOUND),
            (3, error_codes::INVALID_PARAMS)
        ]
    );
    assert!(
        answers[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("roots"),
        "{answers:?}"
    );
}

#[test]
fn offered_server_requests_go_to_the_host_and_are_bounded() {
    let mut h = Harness::new(CoreLimits::default());
    let caps: mcp_types::ClientCapabilities =
        serde_json::from_value(json!({"roots": {"listChanged": true}})).unwrap();
    h.core.set_offered(&caps);
    for id in 0..=MAX_SERVER_REQUESTS {
        h.feed(
            0,
            json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"}),
        );
    }
    let events = h.events();
    assert_eq!(events.len(), MAX_SERVER_REQUESTS);
    assert!(matches!(
        &events[0],
        CoreEvent::ServerRequest { id: RequestId::Number(0), request }
            if matches!(**request, mcp_types::ServerRequestMessage::ListRoots(_))
    ));
    // One more than the bound is refused at once.
    let refused = h.transmitted();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["id"], MAX_SERVER_REQUESTS);
    assert_eq!(refused[0]["error"]["code"], error_codes::INTERNAL_ERROR);
    // An answer goes out and frees a place.
    h.core
        .answer_server_request(h.at(0), &RequestId::Number(0), Ok(json!({"roots": []})));
    assert_eq!(
        h.transmitted(),
        [json!({"jsonrpc": "2.0", "id": 0, "result": {"roots": []}})]
    );
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": 99, "method": "roots/list"}),
    );
    assert_eq!(h.events().len(), 1);
    assert!(h.transmitted().is_empty());
}

#[test]
fn a_server_request_the_server_cancels_gets_no_answer_and_frees_its_place() {
    let mut h = Harness::new(CoreLimits::default());
    let caps: mcp_types::ClientCapabilities = serde_json::from_value(json!({"roots": {}})).unwrap();
    h.core.set_offered(&caps);
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}),
    );
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": "r2", "method": "roots/list"}),
    );
    assert_eq!(h.events().len(), 2);
    // A cancel naming no request of the server's in flight changes nothing
    // but is still a notification for the host to see.
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "other"}}),
    );
    let events = h.events();
    assert!(
        matches!(&events[..], [CoreEvent::Notification { .. }]),
        "{events:?}"
    );
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "r1", "reason": "no longer needed"}}),
    );
    let events = h.events();
    assert!(
        matches!(&events[0], CoreEvent::ServerRequestCancelled { id } if *id == RequestId::String("r1".into())),
        "{events:?}"
    );
    // The host's late answer to the cancelled request is not sent; the
    // other one's is.
    h.core.answer_server_request(
        h.at(0),
        &RequestId::String("r1".into()),
        Ok(json!({"roots": []})),
    );
    assert!(h.transmitted().is_empty());
    h.core.answer_server_request(
        h.at(0),
        &RequestId::String("r2".into()),
        Ok(json!({"roots": []})),
    );
    assert_eq!(h.transmitted()[0]["id"], "r2");
    // Both places are free again: the full bound is admitted.
    for id in 0..MAX_SERVER_REQUESTS {
        h.feed(
            0,
            json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"}),
        );
    }
    assert_eq!(h.events().len(), MAX_SERVER_REQUESTS);
    assert!(h.transmitted().is_empty());
}

#[test]
fn a_server_request_reusing_an_id_in_flight_is_a_violation_left_unanswered() {
    let mut h = Harness::new(CoreLimits::default());
    let caps: mcp_types::ClientCapabilities = serde_json::from_value(json!({"roots": {}})).unwrap();
    h.core.set_offered(&caps);
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
    );
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
    );
    let events = h.events();
    assert!(matches!(&events[0], CoreEvent::ServerRequest { .. }));
    assert!(
        matches!(
            &events[1],
            CoreEvent::Violation(Violation::DuplicateRequestId(RequestId::Number(7)))
        ),
        "{events:?}"
    );
    assert!(h.transmitted().is_empty());
    // Answered, the id may be used again.
    h.core
        .answer_server_request(h.at(0), &RequestId::Number(7), Ok(json!({"roots": []})));
    assert_eq!(h.transmitted().len(), 1);
    h.feed(
        0,
        json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
    );
    assert!(matches!(&h.events()[..], [CoreEvent::ServerRequest { .. }]));
}

#[test]
fn params_are_built_with_the_request_id_available() {
    let mut h = Harness::new(CoreLimits::default());
    let method: Arc<str> = Arc::from("tools/call");
    let (id, frame) = h
        .core
        .start_request(h.at(0), &method, timing(10), 1, |id| {
            Some(serde_json::value::to_raw_value(&json!({"_meta": {"progressToken": id}})).unwrap())
        })
        .unwrap();
    let v: Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(v["params"]["_meta"]["progressToken"], json!(id));
}

#[test]
fn compact_responses_are_sliced_without_a_full_parse() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/list", timing(1000), 1);
    let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#);
    h.core.handle_frame(h.at(1), Bytes::from(frame));
    match h.events().pop() {
        Some(CoreEvent::Completed {
            outcome: Ok(raw), ..
        }) => {
            assert!(raw.frame.is_some(), "the fast path was taken");
            assert_eq!(&raw.result[..], br#"{"tools":[]}"#);
            assert_eq!(raw.decode_json::<Value>().unwrap(), json!({"tools": []}));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_fast_slice_that_does_not_decode_falls_back_to_the_full_parse() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/list", timing(1000), 1);
    // A member after `result`: the fast slice carries `,"x":1`, which cannot
    // decode; the careful parse finds the real result.
    let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}},"x":1}}"#);
    h.core.handle_frame(h.at(1), Bytes::from(frame));
    match h.events().pop() {
        Some(CoreEvent::Completed {
            outcome: Ok(raw), ..
        }) => {
            assert_eq!(raw.decode_json::<Value>().unwrap(), json!({"tools": []}));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_malformed_compact_frame_fails_to_decode_rather_than_lying() {
    let mut h = Harness::new(CoreLimits::default());
    let (id, _) = h.start(0, "tools/list", timing(1000), 1);
    let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}garbage}}"#);
    h.core.handle_frame(h.at(1), Bytes::from(frame));
    match h.events().pop() {
        Some(CoreEvent::Completed {
            outcome: Ok(raw), ..
        }) => {
            assert!(raw.decode_json::<Value>().is_err());
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn other_shapes_take_the_careful_path() {
    assert_eq!(
        fast_response(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
        Some((7, 33..35))
    );
    // The TypeScript SDK's order.
    assert_eq!(
        fast_response(br#"{"result":{},"jsonrpc":"2.0","id":7}"#),
        Some((7, 10..12))
    );
    assert_eq!(
        fast_response(br#"{"result":{},"jsonrpc":"2.0","id":"7"}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"result":,"jsonrpc":"2.0","id":7}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"result":{},"jsonrpc":"2.0","id":}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"result":{}, "jsonrpc":"2.0","id":7}"#),
        None
    );
    // JSON has no leading zeros: left to the careful parse, which refuses.
    assert_eq!(
        fast_response(br#"{"result":{},"jsonrpc":"2.0","id":07}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"jsonrpc":"2.0","id":07,"result":{}}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
        Some((0, 33..35))
    );
    assert_eq!(
        fast_response(br#"{"jsonrpc": "2.0", "id": 7, "result": {}}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"jsonrpc":"2.0","id":"7","result":{}}"#),
        None
    );
    assert_eq!(
        fast_response(br#"{"jsonrpc":"2.0","id":7,"error":{}}"#),
        None
    );
    assert_eq!(fast_response(br#"{"jsonrpc":"2.0","id":7,"result":"#), None);
}

#[test]
fn only_a_deadline_earlier_than_the_armed_one_asks_to_rearm_the_timer() {
    let mut h = Harness::new(CoreLimits::default());
    // Nothing armed yet: the first deadline moves the timer.
    h.start(0, "tools/call", timing(100), 1);
    assert!(h.core.take_timer_moved());
    assert!(!h.core.take_timer_moved(), "the flag is taken once");
    assert_eq!(h.core.poll_timeout(), Some(h.at(100)));
    // Later than the armed deadline: the timer stays.
    h.start(10, "tools/call", timing(100), 2);
    assert!(!h.core.take_timer_moved());
    // Earlier than the armed one: re-arm.
    h.start(20, "tools/call", timing(10), 3);
    assert!(h.core.take_timer_moved());
    assert_eq!(h.core.poll_timeout(), Some(h.at(30)));
}

#[test]
fn a_timer_left_armed_early_is_kept_and_only_an_earlier_deadline_moves_it() {
    let mut h = Harness::new(CoreLimits::default());
    // Not armed, nothing pending: nothing to arm.
    assert_eq!(h.core.poll_timer(None), None);
    let (id, _) = h.start(0, "tools/call", timing(100), 1);
    assert!(h.core.take_timer_moved());
    let armed = h.core.poll_timer(None);
    assert_eq!(armed, Some(h.at(100)));
    // The request is answered: the timer stays where it is.
    h.feed(5, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    assert_eq!(h.events().len(), 1);
    assert_eq!(h.core.poll_timeout(), None, "nothing is due any more");
    assert_eq!(h.core.poll_timer(armed), armed);
    // A later request does not ask to move it (it fires early instead).
    h.start(50, "tools/call", timing(100), 2);
    assert!(!h.core.take_timer_moved());
    assert_eq!(h.core.poll_timer(armed), armed);
    // It fired early: nothing was due, and it is armed for the real deadline.
    h.core.handle_timeout(h.at(100));
    assert!(h.events().is_empty());
    assert_eq!(h.core.poll_timer(None), Some(h.at(150)));
    // An earlier deadline than the armed one moves it.
    h.start(60, "tools/call", timing(10), 3);
    assert!(h.core.take_timer_moved());
    assert_eq!(h.core.poll_timer(Some(h.at(150))), Some(h.at(70)));
}

#[test]
fn result_first_responses_complete_and_odd_ones_are_parsed_carefully() {
    let mut h = Harness::new(CoreLimits::default());
    let (a, _) = h.start(0, "tools/list", timing(1000), 1);
    let (b, _) = h.start(0, "tools/list", timing(1000), 2);
    // As the TypeScript SDK writes it.
    let plain = format!(r#"{{"result":{{"tools":[]}},"jsonrpc":"2.0","id":{a}}}"#);
    // The same shape at both ends, but another member in between: the slice
    // is not one JSON value, so the frame is parsed in full.
    let odd = format!(r#"{{"result":{{"n":1}},"x":2,"jsonrpc":"2.0","id":{b}}}"#);
    h.core.handle_frame(h.at(1), Bytes::from(plain));
    h.core.handle_frame(h.at(1), Bytes::from(odd));
    let mut results = Vec::new();
    for event in h.events() {
        match event {
            CoreEvent::Completed {
                id,
                outcome: Ok(raw),
                ..
            } => results.push((id, raw.decode_json::<Value>().unwrap())),
            other => panic!("unexpected {other:?}"),
        }
    }
    results.sort_by_key(|(id, _)| *id);
    assert_eq!(
        results,
        vec![(a, json!({"tools": []})), (b, json!({"n": 1}))]
    );
}

#[test]
fn a_result_decodes_as_text_and_bad_utf8_is_still_an_error() {
    let ok = RawResult::verified(Bytes::from_static(
        "{\"text\":\"h\u{e9}llo \\u00e9\",\"schema\":{\"a\":[1,2]}}".as_bytes(),
    ));
    #[derive(serde::Deserialize)]
    struct Shape {
        text: String,
        schema: Box<serde_json::value::RawValue>,
    }
    let shape: Shape = ok.decode_json().unwrap();
    assert_eq!(shape.text, "h\u{e9}llo \u{e9}");
    assert_eq!(shape.schema.get(), "{\"a\":[1,2]}");
    // A lone continuation byte inside a string: not UTF-8, so not JSON.
    let bad = RawResult::verified(Bytes::from_static(b"{\"text\":\"h\x80llo\"}"));
    assert!(bad.decode_json::<Value>().is_err());
    let not_json = RawResult::verified(Bytes::from_static(b"{\"text\":"));
    assert!(not_json.decode_json::<Value>().is_err());
}

#[test]
fn host_notifications_are_made_by_the_core_and_refused_once_closed() {
    let mut h = Harness::new(CoreLimits::default());
    let params = serde_json::value::to_raw_value(&json!({"x": 1})).unwrap();
    let frame = h
        .core
        .notification("notifications/roots/list_changed", Some(&params))
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&frame).unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"x": 1}})
    );
    assert!(h.transmitted().is_empty(), "the caller writes it");
    h.core.handle_closed();
    assert_eq!(
        h.core.notification("notifications/initialized", None),
        Err(Refusal::Closed)
    );
}

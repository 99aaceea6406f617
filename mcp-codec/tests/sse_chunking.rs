//! Properties of `SseDecoder`: any chunking of a stream gives the events of a
//! whole-input reference written straight from the WHATWG rules, and what
//! `SseEncoder` writes comes back unchanged.

use bytes::BytesMut;
use mcp_codec::{CodecError, SseDecoder, SseEncoder, SseEvent};
use proptest::prelude::*;

/// Events and errors, then the last event id and retry at the end.
type Outcome = (
    Vec<Result<SseEvent, CodecError>>,
    Option<String>,
    Option<u64>,
);

fn decode_in_chunks(max: usize, input: &[u8], chunk_sizes: &[usize]) -> Outcome {
    let mut decoder = SseDecoder::with_max_event(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut sizes = chunk_sizes.iter().copied().cycle();
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        buf.extend_from_slice(chunk);
        while let Some(step) = decoder.decode(&mut buf).transpose() {
            out.push(step);
        }
        assert!(
            buf.len() <= max + 1,
            "kept {} bytes with a bound of {max}",
            buf.len()
        );
    }
    while let Some(step) = decoder.decode_eof(&mut buf).transpose() {
        out.push(step);
    }
    let retry = decoder
        .retry()
        .map(|retry| u64::try_from(retry.as_millis()).unwrap());
    (out, decoder.last_event_id().map(str::to_owned), retry)
}

/// The reference: whole input, lines cut first, then the field rules.
fn reference(max: usize, input: &[u8]) -> Outcome {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'\r' || input[i] == b'\n' {
            lines.push(&input[start..i]);
            if input[i] == b'\r' && input.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    let unterminated = &input[start..];

    let too_large = CodecError::FrameTooLarge { limit: max };
    let mut out = Vec::new();
    let (mut last_id, mut retry) = (String::new(), None);
    let (mut data, mut event, mut id, mut event_retry) = (String::new(), String::new(), None, None);
    let mut skipping = false;
    for line in lines {
        if line.len() > max {
            if !skipping {
                out.push(Err(too_large.clone()));
                (data, event, id, event_retry) = (String::new(), String::new(), None, None);
                skipping = true;
            }
            continue;
        }
        if line.is_empty() {
            if !skipping {
                if let Some(id) = &id {
                    last_id.clone_from(id);
                }
                if data.pop().is_some() {
                    out.push(Ok(SseEvent {
                        event: Some(event.clone()).filter(|event| !event.is_empty()),
                        data: data.clone(),
                        id: id.clone(),
                        retry: event_retry,
                    }));
                }
            }
            (data, event, id, event_retry) = (String::new(), String::new(), None, None);
            skipping = false;
            continue;
        }
        if skipping || line[0] == b':' {
            continue;
        }
        let (name, value) = match line.iter().position(|&byte| byte == b':') {
            Some(colon) => (
                &line[..colon],
                line[colon + 1..]
                    .strip_prefix(b" ")
                    .unwrap_or(&line[colon + 1..]),
            ),
            None => (line, &b""[..]),
        };
        let text = std::str::from_utf8(value);
        let needs_text =
            matches!(name, b"data" | b"event") || (name == b"id" && !value.contains(&0));
        if needs_text && text.is_err() {
            out.push(Err(CodecError::InvalidUtf8));
            (data, event, id, event_retry) = (String::new(), String::new(), None, None);
            skipping = true;
            continue;
        }
        match name {
            b"data" if data.len() + value.len() > max => {
                out.push(Err(too_large.clone()));
                (data, event, id, event_retry) = (String::new(), String::new(), None, None);
                skipping = true;
            }
            b"data" => data = format!("{data}{}\n", text.unwrap()),
            b"event" => event = text.unwrap().to_owned(),
            b"id" if !value.contains(&0) => id = Some(text.unwrap().to_owned()),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(millis) = text.unwrap().parse() {
                    retry = Some(millis);
                    event_retry = Some(millis);
                }
            }
            _ => {}
        }
    }
    if unterminated.len() > max && !skipping {
        out.push(Err(too_large));
    }
    (out, Some(last_id).filter(|id| !id.is_empty()), retry)
}

/// Streams built from pieces that exercise every rule, glued at random.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => Just(&b"data: x"[..]),
        2 => Just(&b"data"[..]),
        2 => Just(&b"data:"[..]),
        1 => Just(&b"data:  y z"[..]),
        1 => Just(&b"data: 0123456789abcdef"[..]),
        2 => Just(&b"event: e"[..]),
        1 => Just(&b"event"[..]),
        2 => Just(&b"id: 7"[..]),
        1 => Just(&b"id"[..]),
        1 => Just(&b"id: 1\x002"[..]),
        2 => Just(&b"retry: 250"[..]),
        1 => Just(&b"retry: 2x"[..]),
        1 => Just(&b": comment"[..]),
        1 => Just(&b"other: q"[..]),
        1 => Just(&b"data: \xFF"[..]),
        1 => Just(&b"\xEF\xBB\xBF"[..]),
        6 => Just(&b"\n"[..]),
        3 => Just(&b"\r"[..]),
        3 => Just(&b"\r\n"[..]),
    ];
    (any::<bool>(), proptest::collection::vec(piece, 0..40)).prop_map(|(bom, pieces)| {
        let mut stream = if bom {
            b"\xEF\xBB\xBF".to_vec()
        } else {
            Vec::new()
        };
        for piece in pieces {
            stream.extend_from_slice(piece);
        }
        stream
    })
}

fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1usize..12, 0..20)
}

fn event() -> impl Strategy<Value = SseEvent> {
    (
        proptest::option::of("[a-z ]{1,8}"),
        "[a-z{}\": \n]{0,30}",
        proptest::option::of("[a-z0-9 :]{0,8}"),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(event, data, id, retry)| SseEvent {
            event,
            data,
            id,
            retry,
        })
}

proptest! {
    #[test]
    fn any_chunking_matches_the_reference(
        max in 4usize..24,
        input in stream(),
        sizes in chunk_sizes(),
    ) {
        let expected = reference(max, &input);
        prop_assert_eq!(&decode_in_chunks(max, &input, &[]), &expected);
        prop_assert_eq!(&decode_in_chunks(max, &input, &sizes), &expected);
        prop_assert_eq!(&decode_in_chunks(max, &input, &[1]), &expected);
    }

    #[test]
    fn encoded_events_come_back_unchanged(
        events in proptest::collection::vec(event(), 0..6),
        sizes in chunk_sizes(),
    ) {
        let mut wire = BytesMut::new();
        for event in &events {
            SseEncoder.encode(event, &mut wire).unwrap();
        }
        let (decoded, last_id, _) = decode_in_chunks(1024, &wire, &sizes);
        let expected: Vec<_> = events.iter().cloned().map(Ok).collect();
        prop_assert_eq!(decoded, expected);
        let expected_last_id = events.iter().rev().find_map(|event| event.id.clone());
        prop_assert_eq!(last_id, expected_last_id.filter(|id| !id.is_empty()));
    }
}

#[test]
fn reference_agrees_on_a_known_case() {
    // Guards the reference itself against being wrong in the same way.
    let input = b"\xEF\xBB\xBFid: 1\r\ndata: a\r\rdata: \xFF\n\nretry: 5\ndata";
    let (events, last_id, retry) = reference(16, input);
    let expected_event = SseEvent {
        id: Some("1".into()),
        ..SseEvent::new("a")
    };
    assert_eq!(
        events,
        vec![Ok(expected_event), Err(CodecError::InvalidUtf8)]
    );
    assert_eq!(last_id.as_deref(), Some("1"));
    assert_eq!(retry, Some(5));
    assert_eq!(decode_in_chunks(16, input, &[3]), (events, last_id, retry));
}

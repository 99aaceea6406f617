use std::time::Duration;

use bytes::BytesMut;

use super::{SseDecoder, SseEncoder, SseEvent};
use crate::CodecError;

/// Feeds `chunks` one by one, decoding after each, then ends the stream.
fn decode_chunks(decoder: &mut SseDecoder, chunks: &[&[u8]]) -> Vec<Result<SseEvent, CodecError>> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(step) = decoder.decode(&mut buf).transpose() {
            out.push(step);
        }
    }
    while let Some(step) = decoder.decode_eof(&mut buf).transpose() {
        out.push(step);
    }
    assert!(buf.is_empty(), "decode_eof must leave the buffer empty");
    out
}

fn decode_whole(input: &[u8]) -> (SseDecoder, Vec<Result<SseEvent, CodecError>>) {
    let mut decoder = SseDecoder::new();
    let out = decode_chunks(&mut decoder, &[input]);
    (decoder, out)
}

fn data(items: &[&str]) -> Vec<Result<SseEvent, CodecError>> {
    items.iter().map(|item| Ok(SseEvent::new(*item))).collect()
}

fn with_id(data: &str, id: &str) -> Result<SseEvent, CodecError> {
    Ok(SseEvent {
        id: Some(id.into()),
        ..SseEvent::new(data)
    })
}

const TOO_LARGE_16: CodecError = CodecError::FrameTooLarge { limit: 16 };

#[test]
fn multi_line_data_is_joined_with_newlines() {
    let (_, out) = decode_whole(b"data: YHOO\ndata: +2\ndata: 10\n\n");
    assert_eq!(out, data(&["YHOO\n+2\n10"]));
}

#[test]
fn spec_example_with_comment_ids_and_unterminated_event() {
    let input = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n";
    let (decoder, out) = decode_whole(input);
    assert_eq!(
        out,
        vec![with_id("first event", "1"), with_id("second event", "")]
    );
    // The empty id reset the last event id; the third event never ended.
    assert_eq!(decoder.last_event_id(), None);
}

#[test]
fn data_without_colon_is_an_empty_data_line() {
    let (_, out) = decode_whole(b"data\n\ndata\ndata\n\ndata:");
    assert_eq!(out, data(&["", "\n"]));
}

#[test]
fn only_one_space_after_the_colon_is_stripped() {
    let (_, out) = decode_whole(b"data:test\n\ndata: test\n\ndata:  test\n\ndata: a:b\n\n");
    assert_eq!(out, data(&["test", "test", " test", "a:b"]));
}

#[test]
fn all_line_endings_are_accepted() {
    let (_, out) = decode_whole(b"data: a\rdata: b\r\rdata: c\r\n\r\ndata: d\n\r\n");
    assert_eq!(out, data(&["a\nb", "c", "d"]));
}

#[test]
fn crlf_split_between_chunks_is_one_ending() {
    let mut decoder = SseDecoder::new();
    let out = decode_chunks(
        &mut decoder,
        &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"],
    );
    assert_eq!(out, data(&["a\nb"]));
}

#[test]
fn leading_bom_is_stripped_once_even_when_split() {
    let (_, out) = decode_whole(b"\xEF\xBB\xBFdata: x\n\n");
    assert_eq!(out, data(&["x"]));
    let mut decoder = SseDecoder::new();
    let out = decode_chunks(&mut decoder, &[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]);
    assert_eq!(out, data(&["x"]));
    // A second BOM is part of the field name, which is then unknown.
    let (_, out) = decode_whole(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n");
    assert_eq!(out, data(&["y"]));
}

#[test]
fn comments_and_unknown_or_miscased_fields_are_ignored() {
    let (_, out) = decode_whole(b":comment\n: data: no\nData: no\nfoo: bar\ndata: yes\n:\n\n");
    assert_eq!(out, data(&["yes"]));
}

#[test]
fn event_type_is_set_and_reset_per_event() {
    let (_, out) =
        decode_whole(b"event: update\ndata: 1\n\nevent: lost\n\ndata: 2\n\nevent:\ndata: 3\n\n");
    let first = SseEvent {
        event: Some("update".into()),
        ..SseEvent::new("1")
    };
    assert_eq!(
        out,
        vec![Ok(first), Ok(SseEvent::new("2")), Ok(SseEvent::new("3"))]
    );
    assert_eq!(SseEvent::new("x").event_type(), "message");
}

#[test]
fn id_persists_across_events_but_is_reported_per_event() {
    let (decoder, out) = decode_whole(b"id: 5\ndata: a\n\ndata: b\n\nid: 6\n\n");
    assert_eq!(out, vec![with_id("a", "5"), Ok(SseEvent::new("b"))]);
    // The data-less block still moved the last event id.
    assert_eq!(decoder.last_event_id(), Some("6"));
}

#[test]
fn id_with_nul_is_ignored() {
    let (decoder, out) = decode_whole(b"id: 1\n\nid: 2\0x\ndata: a\n\n");
    assert_eq!(out, data(&["a"]));
    assert_eq!(decoder.last_event_id(), Some("1"));
}

#[test]
fn id_of_an_unterminated_event_is_not_applied() {
    let (decoder, out) = decode_whole(b"id: 1\ndata: a\n\nid: 2\ndata: b\n");
    assert_eq!(out, vec![with_id("a", "1")]);
    assert_eq!(decoder.last_event_id(), Some("1"));
}

#[test]
fn retry_takes_only_digits() {
    let (decoder, out) = decode_whole(b"retry: 1500\ndata: a\n\n");
    let expected = SseEvent {
        retry: Some(1500),
        ..SseEvent::new("a")
    };
    assert_eq!(out, vec![Ok(expected)]);
    assert_eq!(decoder.retry(), Some(Duration::from_millis(1500)));

    for ignored in [
        &b"retry: 1a\n\n"[..],
        b"retry: -1\n\n",
        b"retry:\n\n",
        b"retry:  7\n\n",
        b"retry: 1.5\n\n",
        b"retry: 99999999999999999999999\n\n",
    ] {
        let (decoder, out) = decode_whole(ignored);
        assert_eq!(out, vec![]);
        assert_eq!(
            decoder.retry(),
            None,
            "{:?}",
            String::from_utf8_lossy(ignored)
        );
    }
}

#[test]
fn retry_applies_at_once_even_without_data_or_blank_line() {
    let (decoder, out) = decode_whole(b"retry: 10\n\nretry: 20\n");
    assert_eq!(out, vec![]);
    assert_eq!(decoder.retry(), Some(Duration::from_millis(20)));
}

#[test]
fn oversized_line_is_reported_once_then_the_event_is_skipped() {
    let mut decoder = SseDecoder::with_max_event(16);
    let out = decode_chunks(
        &mut decoder,
        &[
            b"id: 1\ndata: ok\n\nid: 2\ndata: 0123456789",
            b"abcdefghij",
            b"klm\ndata: more\n\ndata: next\n\n",
        ],
    );
    assert_eq!(
        out,
        vec![
            with_id("ok", "1"),
            Err(TOO_LARGE_16),
            Ok(SseEvent::new("next"))
        ]
    );
    assert_eq!(
        decoder.last_event_id(),
        Some("1"),
        "the skipped event's id is not applied"
    );
}

#[test]
fn oversized_data_across_lines_is_reported_once_then_the_event_is_skipped() {
    let mut decoder = SseDecoder::with_max_event(16);
    // 11 bytes of data ("abcde\nfghij") fit, 17 do not.
    let input = b"data: abcde\ndata: fghij\n\ndata: abcde\ndata: fghij\ndata: klmno\ndata: p\n\ndata: z\n\n";
    let out = decode_chunks(&mut decoder, &[input]);
    assert_eq!(
        out,
        vec![
            Ok(SseEvent::new("abcde\nfghij")),
            Err(TOO_LARGE_16),
            Ok(SseEvent::new("z"))
        ]
    );
}

#[test]
fn data_of_exactly_the_bound_is_accepted() {
    let mut decoder = SseDecoder::with_max_event(16);
    let out = decode_chunks(&mut decoder, &[b"data:0123456\ndata:01234567\n\n"]);
    assert_eq!(out, data(&["0123456\n01234567"]));
}

#[test]
fn oversized_line_followed_by_more_in_the_same_buffer_is_resynchronised() {
    let mut decoder = SseDecoder::with_max_event(16);
    let out = decode_chunks(
        &mut decoder,
        &[b"data: 0123456789abcdefghij\n\ndata: next\n\n"],
    );
    assert_eq!(out, vec![Err(TOO_LARGE_16), Ok(SseEvent::new("next"))]);
}

#[test]
fn skipping_a_huge_line_keeps_the_buffer_small() {
    let mut decoder = SseDecoder::with_max_event(64);
    let mut buf = BytesMut::from(&b"data: "[..]);
    let mut errors = 0;
    for _ in 0..1000 {
        buf.extend_from_slice(b"0123456789abcdef");
        if decoder.decode(&mut buf).is_err() {
            errors += 1;
        }
        assert!(buf.len() <= 65, "buffer grew to {}", buf.len());
    }
    assert_eq!(errors, 1);
    buf.extend_from_slice(b"\n\ndata: after\n\n");
    assert_eq!(decoder.decode(&mut buf), Ok(Some(SseEvent::new("after"))));
}

#[test]
fn invalid_utf8_skips_the_event() {
    let (_, out) = decode_whole(b"data: a\xFFb\ndata: more\n\ndata: ok\n\n");
    assert_eq!(
        out,
        vec![Err(CodecError::InvalidUtf8), Ok(SseEvent::new("ok"))]
    );
    // In a comment or an unknown field it does not matter.
    let (_, out) = decode_whole(b": \xFF\nx\xFF: y\ndata: ok\n\n");
    assert_eq!(out, data(&["ok"]));
}

#[test]
fn end_of_stream_drops_the_incomplete_event_and_allows_a_new_stream() {
    let mut decoder = SseDecoder::new();
    let out = decode_chunks(
        &mut decoder,
        &[b"id: 3\nretry: 5\ndata: a\n\ndata: lost\nid: 4"],
    );
    assert_eq!(
        out,
        vec![Ok(SseEvent {
            id: Some("3".into()),
            retry: Some(5),
            ..SseEvent::new("a")
        })]
    );
    // A reconnected stream: may start with a BOM again; id and retry persist.
    let out = decode_chunks(&mut decoder, &[b"\xEF\xBB\xBFdata: b\n\n"]);
    assert_eq!(out, data(&["b"]));
    assert_eq!(decoder.last_event_id(), Some("3"));
    assert_eq!(decoder.retry(), Some(Duration::from_millis(5)));
}

#[test]
fn encoder_output_decodes_to_the_same_event() {
    let event = SseEvent {
        event: Some("update".into()),
        data: " lead\n\nmiddle\ntrail\n".into(),
        id: Some("x y".into()),
        retry: Some(42),
    };
    let mut buf = BytesMut::new();
    SseEncoder.encode(&event, &mut buf).unwrap();
    SseEncoder.encode_comment("keep-alive", &mut buf).unwrap();
    SseEncoder.encode(&SseEvent::new(""), &mut buf).unwrap();
    assert!(buf.starts_with(b"event: update\nid: x y\nretry: 42\ndata:  lead\ndata: \n"));
    let mut decoder = SseDecoder::new();
    let out = decode_chunks(&mut decoder, &[&buf]);
    assert_eq!(out, vec![Ok(event), Ok(SseEvent::new(""))]);
}

#[test]
fn encoder_normalises_data_line_endings() {
    let mut buf = BytesMut::new();
    SseEncoder
        .encode(&SseEvent::new("a\r\nb\rc"), &mut buf)
        .unwrap();
    assert_eq!(&buf[..], b"data: a\ndata: b\ndata: c\n\n");
}

#[test]
fn encoder_refuses_fields_a_reader_would_misread() {
    let mut buf = BytesMut::new();
    let bad_type = SseEvent {
        event: Some("a\nb".into()),
        ..SseEvent::default()
    };
    let bad_id = SseEvent {
        id: Some("a\rb".into()),
        ..SseEvent::default()
    };
    let nul_id = SseEvent {
        id: Some("a\0b".into()),
        ..SseEvent::default()
    };
    assert_eq!(
        SseEncoder.encode(&bad_type, &mut buf),
        Err(CodecError::NewlineInFrame)
    );
    assert_eq!(
        SseEncoder.encode(&bad_id, &mut buf),
        Err(CodecError::NewlineInFrame)
    );
    assert_eq!(
        SseEncoder.encode(&nul_id, &mut buf),
        Err(CodecError::NulInEventId)
    );
    assert_eq!(
        SseEncoder.encode_comment("a\nb", &mut buf),
        Err(CodecError::NewlineInFrame)
    );
    assert!(buf.is_empty());
}

#[test]
fn an_offered_data_buffer_is_used_only_before_the_first_data_line() {
    let mut decoder = SseDecoder::new();
    let mut buf = BytesMut::from(&b"event: x\n"[..]);
    assert!(decoder.decode(&mut buf).unwrap().is_none());
    // No data line yet: the buffer is taken, emptied, and holds the data.
    let mut offered = String::with_capacity(4096);
    offered.push_str("stale");
    let address = offered.as_ptr();
    decoder.offer_data_buffer(offered);
    buf.extend_from_slice(b"data: one\ndata: two\n\n");
    let event = decoder.decode(&mut buf).unwrap().expect("an event");
    assert_eq!(event.data, "one\ntwo");
    assert_eq!(event.event.as_deref(), Some("x"));
    assert_eq!(
        event.data.as_ptr(),
        address,
        "decoded into the offered buffer"
    );

    // After a data line the event keeps its own buffer (taking the offered
    // one would lose the first line).
    let mut buf = BytesMut::from(&b"data: first\n"[..]);
    assert!(decoder.decode(&mut buf).unwrap().is_none());
    decoder.offer_data_buffer(String::with_capacity(4096));
    buf.extend_from_slice(b"data: second\n\n");
    let event = decoder.decode(&mut buf).unwrap().expect("an event");
    assert_eq!(event.data, "first\nsecond");

    // The bound holds whatever the size of the offered buffer.
    let mut decoder = SseDecoder::with_max_event(8);
    decoder.offer_data_buffer(String::with_capacity(1024));
    let mut buf = BytesMut::from(&b"data: 123456789\n\ndata: ok\n\n"[..]);
    assert!(matches!(
        decoder.decode(&mut buf),
        Err(CodecError::FrameTooLarge { limit: 8 })
    ));
    assert_eq!(decoder.decode(&mut buf).unwrap().unwrap().data, "ok");
}

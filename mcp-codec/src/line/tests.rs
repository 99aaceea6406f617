use bytes::{Bytes, BytesMut};

use super::{LineDecoder, LineEncoder};
use crate::CodecError;

/// Feeds `chunks` one by one, decoding after each, then ends the input.
/// Frames come back as strings, errors as themselves.
fn decode_chunks(decoder: &mut LineDecoder, chunks: &[&[u8]]) -> Vec<Result<String, CodecError>> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        drain(decoder, &mut buf, &mut out, false);
    }
    drain(decoder, &mut buf, &mut out, true);
    assert!(buf.is_empty(), "decode_eof must leave the buffer empty");
    out
}

fn drain(
    decoder: &mut LineDecoder,
    buf: &mut BytesMut,
    out: &mut Vec<Result<String, CodecError>>,
    eof: bool,
) {
    loop {
        let step = if eof {
            decoder.decode_eof(buf)
        } else {
            decoder.decode(buf)
        };
        match step {
            Ok(Some(frame)) => out.push(Ok(String::from_utf8(frame.to_vec()).unwrap())),
            Ok(None) => return,
            Err(error) => out.push(Err(error)),
        }
    }
}

fn frames(items: &[&str]) -> Vec<Result<String, CodecError>> {
    items.iter().map(|item| Ok((*item).to_owned())).collect()
}

const TOO_LARGE_8: CodecError = CodecError::FrameTooLarge { limit: 8 };

#[test]
fn partial_frame_waits_for_its_newline() {
    let mut decoder = LineDecoder::new();
    let mut buf = BytesMut::from(&b"{\"a\""[..]);
    assert_eq!(decoder.decode(&mut buf), Ok(None));
    assert_eq!(decoder.next_index, 4, "the scanned prefix is remembered");
    buf.extend_from_slice(b":1}\n{");
    assert_eq!(
        decoder.decode(&mut buf),
        Ok(Some(Bytes::from_static(b"{\"a\":1}")))
    );
    assert_eq!(decoder.decode(&mut buf), Ok(None));
    assert_eq!(&buf[..], b"{");
}

#[test]
fn line_endings_are_removed_but_inner_carriage_returns_kept() {
    let mut decoder = LineDecoder::new();
    let out = decode_chunks(&mut decoder, &[b"a\r\nb\nc\rd\ne\r\r\n"]);
    assert_eq!(out, frames(&["a", "b", "c\rd", "e\r"]));
}

#[test]
fn crlf_split_between_chunks_is_one_ending() {
    let mut decoder = LineDecoder::new();
    let out = decode_chunks(&mut decoder, &[b"abc\r", b"\n", b"def\r", b"\nx"]);
    assert_eq!(out, frames(&["abc", "def", "x"]));
}

#[test]
fn a_byte_order_mark_opening_the_stream_is_ignored_and_only_there() {
    let bom = "\u{feff}";
    let mut decoder = LineDecoder::new();
    let out = decode_chunks(
        &mut decoder,
        &[b"\xEF", b"\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n"],
    );
    assert_eq!(out, frames(&["{\"a\":1}", &format!("{bom}{{\"b\":2}}")]));
    // On a line of its own; and as the whole input.
    let out = decode_chunks(&mut LineDecoder::new(), &[b"\xEF\xBB\xBF\r\n{}\n"]);
    assert_eq!(out, frames(&["{}"]));
    let out = decode_chunks(&mut LineDecoder::new(), &[b"\xEF\xBB\xBF[]"]);
    assert_eq!(out, frames(&["[]"]));
}

#[test]
fn blank_and_whitespace_only_lines_are_skipped() {
    let mut decoder = LineDecoder::new();
    let out = decode_chunks(&mut decoder, &[b"\n \t\r\n\r\n{}\n\n  \n[]\n \t"]);
    assert_eq!(out, frames(&["{}", "[]"]));
}

#[test]
fn frame_of_exactly_the_bound_is_accepted_with_either_ending() {
    let mut decoder = LineDecoder::with_max_frame(8);
    let out = decode_chunks(&mut decoder, &[b"12345678\n", b"abcdefgh\r", b"\n"]);
    assert_eq!(out, frames(&["12345678", "abcdefgh"]));
}

#[test]
fn oversized_line_in_one_buffer_is_reported_then_skipped() {
    let mut decoder = LineDecoder::with_max_frame(8);
    let out = decode_chunks(&mut decoder, &[b"123456789\nok\n1234567890123\nok2\n"]);
    assert_eq!(
        out,
        vec![
            Err(TOO_LARGE_8),
            Ok("ok".into()),
            Err(TOO_LARGE_8),
            Ok("ok2".into())
        ]
    );
}

#[test]
fn oversized_line_across_calls_is_reported_once_and_dropped_as_it_arrives() {
    let mut decoder = LineDecoder::with_max_frame(8);
    let mut buf = BytesMut::from(&b"0123456789"[..]);
    assert_eq!(decoder.decode(&mut buf), Err(TOO_LARGE_8));
    assert!(buf.is_empty(), "the oversized prefix is dropped at once");
    for _ in 0..100 {
        buf.extend_from_slice(b"xxxxxxxxxxxxxxxx");
        assert_eq!(decoder.decode(&mut buf), Ok(None), "no second error");
        assert!(buf.is_empty(), "discarded bytes are not kept");
    }
    buf.extend_from_slice(b"xx\nnext\n");
    assert_eq!(
        decoder.decode(&mut buf),
        Ok(Some(Bytes::from_static(b"next")))
    );
    assert_eq!(decoder.decode(&mut buf), Ok(None));
}

#[test]
fn bound_plus_one_is_refused_as_soon_as_it_cannot_be_a_frame() {
    let mut decoder = LineDecoder::with_max_frame(4);
    // Five bytes ending in '\r' may still be four bytes and "\r\n".
    let mut buf = BytesMut::from(&b"abcd\r"[..]);
    assert_eq!(decoder.decode(&mut buf), Ok(None));
    // Five bytes ending elsewhere cannot.
    let mut decoder = LineDecoder::with_max_frame(4);
    let mut buf = BytesMut::from(&b"abcde"[..]);
    assert_eq!(
        decoder.decode(&mut buf),
        Err(CodecError::FrameTooLarge { limit: 4 })
    );
    // "abcd\r" followed by something other than '\n' is too long as well.
    let mut decoder = LineDecoder::with_max_frame(4);
    let out = decode_chunks(&mut decoder, &[b"abcd\r", b"x\nok\n"]);
    assert_eq!(
        out,
        vec![Err(CodecError::FrameTooLarge { limit: 4 }), Ok("ok".into())]
    );
}

#[test]
fn buffer_never_holds_much_more_than_the_bound() {
    let mut decoder = LineDecoder::with_max_frame(100);
    let mut buf = BytesMut::new();
    let mut errors = 0;
    for _ in 0..1000 {
        buf.extend_from_slice(b"0123456789abcdefghijklmnopq");
        if decoder.decode(&mut buf).is_err() {
            errors += 1;
        }
        assert!(buf.len() <= 101, "buffer grew to {}", buf.len());
    }
    assert_eq!(errors, 1);
}

#[test]
fn decode_eof_returns_the_unterminated_last_line() {
    let mut decoder = LineDecoder::new();
    assert_eq!(decode_chunks(&mut decoder, &[b"a\nb"]), frames(&["a", "b"]));
    assert_eq!(
        decode_chunks(&mut decoder, &[b"a\nb\r"]),
        frames(&["a", "b"])
    );
    assert_eq!(decode_chunks(&mut decoder, &[b"a\n \t"]), frames(&["a"]));
    assert_eq!(decode_chunks(&mut decoder, &[b""]), frames(&[]));
}

#[test]
fn decode_eof_while_discarding_reports_nothing_more() {
    let mut decoder = LineDecoder::with_max_frame(8);
    let out = decode_chunks(&mut decoder, &[b"0123456789", b"tail"]);
    assert_eq!(out, vec![Err(TOO_LARGE_8)]);
    // And the decoder is usable afterwards.
    assert_eq!(decode_chunks(&mut decoder, &[b"ok\n"]), frames(&["ok"]));
}

#[test]
fn zero_bound_refuses_every_frame_but_still_skips_blank_lines() {
    let mut decoder = LineDecoder::with_max_frame(0);
    let out = decode_chunks(&mut decoder, &[b"\n\r\nx\n"]);
    assert_eq!(out, vec![Err(CodecError::FrameTooLarge { limit: 0 })]);
}

#[test]
fn shrunk_buffer_does_not_panic() {
    let mut decoder = LineDecoder::new();
    let mut buf = BytesMut::from(&b"abcdef"[..]);
    assert_eq!(decoder.decode(&mut buf), Ok(None));
    let mut other = BytesMut::from(&b"x\n"[..]);
    assert_eq!(
        decoder.decode(&mut other),
        Ok(Some(Bytes::from_static(b"x")))
    );
}

#[test]
fn encoder_appends_a_newline() {
    let encoder = LineEncoder::new();
    let mut dst = BytesMut::from(&b"prev\n"[..]);
    encoder.encode(b"{\"jsonrpc\":\"2.0\"}", &mut dst).unwrap();
    assert_eq!(&dst[..], b"prev\n{\"jsonrpc\":\"2.0\"}\n");
}

#[test]
fn encoder_refuses_newlines_and_oversized_frames_without_writing() {
    let encoder = LineEncoder::with_max_frame(4);
    let mut dst = BytesMut::new();
    assert_eq!(
        encoder.encode(b"a\nb", &mut dst),
        Err(CodecError::NewlineInFrame)
    );
    assert_eq!(
        encoder.encode(b"a\rb", &mut dst),
        Err(CodecError::NewlineInFrame)
    );
    assert_eq!(
        encoder.encode(b"abcde", &mut dst),
        Err(CodecError::FrameTooLarge { limit: 4 })
    );
    assert!(dst.is_empty());
    encoder.encode(b"abcd", &mut dst).unwrap();
    assert_eq!(&dst[..], b"abcd\n");
}

#[test]
fn defaults_are_bounded() {
    assert_eq!(LineDecoder::default().max_frame(), crate::DEFAULT_MAX_FRAME);
    assert_eq!(LineEncoder::default().max_frame(), crate::DEFAULT_MAX_FRAME);
}

/// Every edge left behind after feeding `chunks` (decoding after each),
/// with the frames decoded.
fn edges_of(max: usize, chunks: &[&[u8]]) -> (Vec<super::SkippedEdge>, Vec<String>) {
    let mut decoder = LineDecoder::with_max_frame(max);
    let mut buf = BytesMut::new();
    let mut edges = Vec::new();
    let mut frames = Vec::new();
    let mut step = |decoder: &mut LineDecoder, buf: &mut BytesMut, eof: bool| loop {
        let result = if eof {
            decoder.decode_eof(buf)
        } else {
            decoder.decode(buf)
        };
        while let Some(edge) = decoder.take_skipped_edge() {
            edges.push(edge);
        }
        match result {
            Ok(Some(frame)) => frames.push(String::from_utf8(frame.to_vec()).unwrap()),
            Ok(None) => return,
            Err(_) => {}
        }
    };
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        step(&mut decoder, &mut buf, false);
    }
    step(&mut decoder, &mut buf, true);
    (edges, frames)
}

#[test]
fn a_skipped_line_leaves_its_two_ends_behind() {
    use super::{EDGE_BYTES, SkippedEdge};
    let head = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{}",
        "a".repeat(300)
    );
    let line = format!("{head}{}\",\"end\":1}}", "b".repeat(5000));
    let input = format!("{line}\r\n{{\"next\":1}}\n");
    let expect_start = Bytes::copy_from_slice(&line.as_bytes()[..EDGE_BYTES]);
    let expect_end = Bytes::copy_from_slice(&line.as_bytes()[line.len() - EDGE_BYTES..]);
    // Whatever the chunking, and whether the line is seen whole or not.
    for chunk in [1, 7, 100, 1000, 100_000] {
        let chunks: Vec<&[u8]> = input.as_bytes().chunks(chunk).collect();
        let (edges, frames) = edges_of(1024, &chunks);
        assert_eq!(
            edges,
            [
                SkippedEdge::Start(expect_start.clone()),
                SkippedEdge::End(expect_end.clone())
            ],
            "chunks of {chunk}"
        );
        assert_eq!(frames, ["{\"next\":1}"]);
    }
    // A line that ends with the input has an end too. Its start is what was
    // seen when it became certain the line is too long (bound + 2 bytes).
    let (edges, _) = edges_of(8, &[b"0123456789abc"]);
    assert_eq!(
        edges,
        [
            SkippedEdge::Start(Bytes::from_static(b"0123456789")),
            SkippedEdge::End(Bytes::from_static(b"0123456789abc"))
        ]
    );
    // Frames within the bound leave nothing.
    assert!(edges_of(1024, &[b"{\"a\":1}\n"]).0.is_empty());
}

#[test]
fn edges_not_taken_are_bounded() {
    let line = format!("{}\n", "x".repeat(100));
    let input = line.repeat(50);
    let mut decoder = LineDecoder::with_max_frame(10);
    let mut buf = BytesMut::from(input.as_bytes());
    while decoder.decode(&mut buf).is_err() {}
    let mut kept = 0;
    while decoder.take_skipped_edge().is_some() {
        kept += 1;
    }
    assert!(kept <= 4, "{kept}");
}

#[test]
fn a_json_frame_over_several_lines_is_encoded_as_one() {
    let encoder = LineEncoder::new();
    let pretty = b"{\r\n  \"a\": \"x\\ny\",\n  \"b\": [1,\n 2]\n}";
    let mut dst = BytesMut::new();
    encoder.encode_json(pretty, &mut dst).unwrap();
    let line = &dst[..dst.len() - 1];
    assert_eq!(dst.last(), Some(&b'\n'));
    assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
    // The same JSON, with its escaped newline kept in the string.
    let value: serde_json::Value = serde_json::from_slice(line).unwrap();
    assert_eq!(value, serde_json::json!({"a": "x\ny", "b": [1, 2]}));
    // The bound still holds.
    let small = LineEncoder::with_max_frame(4);
    assert_eq!(
        small.encode_json(b"[1,\n2]", &mut BytesMut::new()),
        Err(CodecError::FrameTooLarge { limit: 4 })
    );
}

//! Properties of `LineDecoder`: any chunking of an input gives the frames
//! and errors of a plain split-on-newline reference, and the decoder never
//! keeps more than about one bound's worth of a partial line.

use bytes::BytesMut;
use mcp_codec::{CodecError, LineDecoder, LineEncoder};
use proptest::prelude::*;

type Output = Vec<Result<Vec<u8>, CodecError>>;

/// Feeds `input` in chunks of the given sizes (cycled), checking the buffer
/// bound whenever the decoder asks for more bytes.
fn decode_in_chunks(max: usize, input: &[u8], chunk_sizes: &[usize]) -> Output {
    let mut decoder = LineDecoder::with_max_frame(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut sizes = chunk_sizes.iter().copied().cycle();
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => out.push(Ok(frame.to_vec())),
                Ok(None) => break,
                Err(error) => out.push(Err(error)),
            }
        }
        assert!(
            buf.len() <= max + 1,
            "kept {} bytes with a bound of {max}",
            buf.len()
        );
    }
    while let Some(step) = decoder.decode_eof(&mut buf).transpose() {
        out.push(step.map(|frame| frame.to_vec()));
    }
    assert!(buf.is_empty());
    out
}

/// The reference: split the whole input on '\n' and judge each line alone.
fn reference(max: usize, input: &[u8]) -> Output {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = input.split(|&byte| byte == b'\n').collect();
    if input.ends_with(b"\n") {
        lines.pop(); // `split` yields an empty piece after the last '\n'.
    }
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max {
            out.push(Err(CodecError::FrameTooLarge { limit: max }));
        } else if !line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) {
            out.push(Ok(line.to_vec()));
        }
    }
    out
}

/// Inputs dense in the bytes that matter: newlines, CRs, blanks.
fn input_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => Just(b'a'),
        1 => Just(b'{'),
        3 => Just(b'\n'),
        2 => Just(b'\r'),
        1 => Just(b' '),
        1 => Just(b'\t'),
        1 => Just(0xFF),
    ];
    proptest::collection::vec(byte, 0..200)
}

fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1usize..12, 0..20)
}

proptest! {
    #[test]
    fn any_chunking_matches_the_reference(
        max in 0usize..16,
        input in input_bytes(),
        sizes in chunk_sizes(),
    ) {
        let expected = reference(max, &input);
        prop_assert_eq!(&decode_in_chunks(max, &input, &[]), &expected);
        prop_assert_eq!(&decode_in_chunks(max, &input, &sizes), &expected);
        prop_assert_eq!(&decode_in_chunks(max, &input, &[1]), &expected);
    }

    #[test]
    fn encoded_frames_come_back_unchanged(
        frames in proptest::collection::vec("[a-z{}\":, \t]{0,20}", 0..10),
        sizes in chunk_sizes(),
    ) {
        let encoder = LineEncoder::new();
        let mut wire = BytesMut::new();
        for frame in &frames {
            encoder.encode(frame.as_bytes(), &mut wire).unwrap();
        }
        let expected: Output = frames
            .iter()
            .filter(|frame| !frame.trim_matches([' ', '\t']).is_empty())
            .map(|frame| Ok(frame.as_bytes().to_vec()))
            .collect();
        prop_assert_eq!(decode_in_chunks(64, &wire, &sizes), expected);
    }
}

#[test]
fn reference_agrees_on_a_known_case() {
    // Guards the reference itself against being wrong in the same way.
    let out = reference(3, b"ab\r\n\n abcd\r\nxyz\r\r\nq");
    let expected: Output = vec![
        Ok(b"ab".to_vec()),
        Err(CodecError::FrameTooLarge { limit: 3 }),
        Err(CodecError::FrameTooLarge { limit: 3 }),
        Ok(b"q".to_vec()),
    ];
    assert_eq!(out, expected);
    assert_eq!(
        decode_in_chunks(3, b"ab\r\n\n abcd\r\nxyz\r\r\nq", &[2]),
        expected
    );
}

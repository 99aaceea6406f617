//! The `tokio_util::codec` impls delegate to the sans-IO methods.
#![cfg(feature = "tokio-util")]

use bytes::{Bytes, BytesMut};
use mcp_codec::{CodecError, LineDecoder, LineEncoder, SseDecoder, SseEncoder, SseEvent};
use tokio_util::codec::{Decoder, Encoder};

#[test]
fn line_codec_through_the_traits() {
    let mut encoder = LineEncoder::new();
    let mut wire = BytesMut::new();
    Encoder::<&[u8]>::encode(&mut encoder, b"{\"a\":1}", &mut wire).unwrap();
    Encoder::<Bytes>::encode(&mut encoder, Bytes::from_static(b"[]"), &mut wire).unwrap();
    assert_eq!(
        Encoder::<&[u8]>::encode(&mut encoder, b"a\nb", &mut wire),
        Err(CodecError::NewlineInFrame)
    );
    wire.extend_from_slice(b"tail");

    let mut decoder = LineDecoder::new();
    assert_eq!(
        Decoder::decode(&mut decoder, &mut wire),
        Ok(Some(Bytes::from_static(b"{\"a\":1}")))
    );
    assert_eq!(
        Decoder::decode(&mut decoder, &mut wire),
        Ok(Some(Bytes::from_static(b"[]")))
    );
    assert_eq!(Decoder::decode(&mut decoder, &mut wire), Ok(None));
    assert_eq!(
        Decoder::decode_eof(&mut decoder, &mut wire),
        Ok(Some(Bytes::from_static(b"tail")))
    );
    assert_eq!(Decoder::decode_eof(&mut decoder, &mut wire), Ok(None));
}

#[test]
fn sse_codec_through_the_traits() {
    let mut encoder = SseEncoder::new();
    let mut wire = BytesMut::new();
    let event = SseEvent {
        id: Some("1".into()),
        ..SseEvent::new("x")
    };
    Encoder::<&SseEvent>::encode(&mut encoder, &event, &mut wire).unwrap();
    Encoder::<SseEvent>::encode(&mut encoder, SseEvent::new("y"), &mut wire).unwrap();
    wire.extend_from_slice(b"data: incomplete\n");

    let mut decoder = SseDecoder::new();
    assert_eq!(Decoder::decode(&mut decoder, &mut wire), Ok(Some(event)));
    assert_eq!(
        Decoder::decode_eof(&mut decoder, &mut wire),
        Ok(Some(SseEvent::new("y")))
    );
    assert_eq!(Decoder::decode_eof(&mut decoder, &mut wire), Ok(None));
    assert!(wire.is_empty());
}

#[test]
fn io_errors_convert_for_framed_streams() {
    fn error_of<D: Decoder>(_: &D) -> D::Error
    where
        D::Error: From<std::io::Error>,
    {
        std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()
    }
    assert_eq!(
        error_of(&LineDecoder::new()),
        CodecError::Io {
            kind: std::io::ErrorKind::UnexpectedEof
        }
    );
}

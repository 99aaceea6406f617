//! Decoding a long JSON string member (a text result, a resource's text) with
//! one allocation of its final size.
//!
//! serde_json decodes a string with escapes (a `\n` per line of a file's
//! text) into a scratch buffer that grows by doubling, then the `String`
//! is copied out of it: for a 1 MiB text that is three fresh megabytes,
//! and glibc's malloc gives the top of its heap back to the system between
//! calls, so each call pays page faults for all of it (a third of the
//! client's CPU on 1 MiB results, see ARCHITECTURE.md). Here the member is
//! asked for as serde_json's raw value: from a slice or a `str`, serde_json
//! then hands over the string's JSON text as it is in the input (checked:
//! valid escapes, no control characters, valid UTF-8), and [`unescape`]
//! writes it once into a `String` of the right capacity.
//!
//! serde_json recognises a raw value request by a fixed newtype name. A
//! deserializer that does not (another format, a future serde_json that
//! renamed it) calls `visit_newtype_struct` or forwards to its plain
//! string: both decode the member as an ordinary `String`, so the name
//! only ever decides the speed, never the result.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

/// The newtype name by which serde_json's deserializers recognise a request
/// for a raw value (`serde_json::value::RawValue`).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Decodes a JSON string member into a `String` (see the module docs).
pub(crate) struct TextSeed;

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_VALUE_TOKEN, TextVisitor)
    }
}

/// Decodes an optional JSON string member: absent is the caller's
/// business, `null` is `None`, a string is decoded as by [`TextSeed`].
pub(crate) struct OptTextSeed;

impl<'de> DeserializeSeed<'de> for OptTextSeed {
    type Value = Option<String>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Option<String>, D::Error> {
        deserializer.deserialize_option(OptTextVisitor)
    }
}

struct OptTextVisitor;

impl<'de> Visitor<'de> for OptTextVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        TextSeed.deserialize(d).map(Some)
    }
}

/// The value of the raw-value request: serde_json's one-entry map whose
/// value is the JSON text; any other deserializer's plain string.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        <String as serde::Deserialize>::deserialize(d)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        if map.next_key::<IgnoredAny>()?.is_none() {
            return Err(de::Error::invalid_length(0, &self));
        }
        map.next_value_seed(RawText)
    }
}

/// The JSON text of the member, as serde_json hands it over.
struct RawText;

impl<'de> DeserializeSeed<'de> for RawText {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for RawText {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the JSON text of a string")
    }

    fn visit_str<E: de::Error>(self, raw: &str) -> Result<String, E> {
        unescape(raw).map_err(E::custom)
    }
}

/// Why a JSON text is not a string this decoder accepts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum UnescapeError {
    /// Not a JSON string literal (a number, an object…).
    NotAString,
    /// An escape that JSON does not have, or one cut short.
    BadEscape,
    /// A UTF-16 surrogate escape without its other half.
    LoneSurrogate,
}

impl fmt::Display for UnescapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnescapeError::NotAString => "invalid type: expected a string",
            UnescapeError::BadEscape => "invalid escape in string",
            UnescapeError::LoneSurrogate => "lone surrogate in hex escape",
        })
    }
}

/// The string a JSON string literal (`"…"`, quotes included) stands for.
///
/// The literal is one serde_json has parsed (it refuses raw control
/// characters and unescaped quotes inside a string, so those are not looked
/// for again); every escape is checked here, so no input makes this panic
/// or read out of bounds.
pub(crate) fn unescape(raw: &str) -> Result<String, UnescapeError> {
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or(UnescapeError::NotAString)?;
    let bytes = inner.as_bytes();
    let mut out = String::with_capacity(inner.len());
    let mut i = 0;
    while let Some(found) = memchr::memchr(b'\\', &bytes[i..]) {
        // Up to the backslash: no escape, and it ends before an ASCII
        // byte, so on a char boundary.
        out.push_str(&inner[i..i + found]);
        i += found;
        let escape = *bytes.get(i + 1).ok_or(UnescapeError::NotAString)?;
        i += 2;
        match escape {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let first = hex4(bytes, i)?;
                i += 4;
                let code = match first {
                    0xD800..=0xDBFF => {
                        if bytes.get(i..i + 2) != Some(b"\\u".as_slice()) {
                            return Err(UnescapeError::LoneSurrogate);
                        }
                        let second = hex4(bytes, i + 2)?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(UnescapeError::LoneSurrogate);
                        }
                        i += 6;
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(UnescapeError::LoneSurrogate),
                    other => other,
                };
                out.push(char::from_u32(code).ok_or(UnescapeError::LoneSurrogate)?);
            }
            _ => return Err(UnescapeError::BadEscape),
        }
    }
    out.push_str(&inner[i..]);
    Ok(out)
}

/// The four hex digits at `at`, as a number.
fn hex4(bytes: &[u8], at: usize) -> Result<u32, UnescapeError> {
    let digits = bytes.get(at..at + 4).ok_or(UnescapeError::BadEscape)?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16).ok_or(UnescapeError::BadEscape)?;
        Ok(acc * 16 + v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::DeserializeSeed;

    fn from_str(json: &str) -> Result<String, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(json);
        TextSeed.deserialize(&mut de)
    }

    fn from_slice(json: &[u8]) -> Result<String, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(json);
        TextSeed.deserialize(&mut de)
    }

    fn from_reader(json: &[u8]) -> Result<String, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_reader(json);
        TextSeed.deserialize(&mut de)
    }

    fn from_value(value: serde_json::Value) -> Result<String, serde_json::Error> {
        TextSeed.deserialize(value)
    }

    /// Which visitor method serde_json calls for our request.
    struct Probe;
    impl<'de> Visitor<'de> for Probe {
        type Value = &'static str;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("anything")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<&'static str, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok("raw")
        }
        fn visit_newtype_struct<D: de::Deserializer<'de>>(
            self,
            d: D,
        ) -> Result<&'static str, D::Error> {
            IgnoredAny::deserialize(d)?;
            Ok("plain")
        }
    }
    use serde::{Deserialize, Deserializer as _};

    #[test]
    fn serde_json_still_answers_the_raw_value_request() {
        // If serde_json renamed its raw-value newtype, decoding would still
        // be right but lose its single copy: this test says so.
        let mut de = serde_json::Deserializer::from_str(r#""a\nb""#);
        let how = de
            .deserialize_newtype_struct(RAW_VALUE_TOKEN, Probe)
            .expect("decoded");
        assert_eq!(how, "raw");
    }

    #[test]
    fn escapes_decode_as_serde_json_decodes_them() {
        let json = r#""line\none\ttab \"q\" \\ \/ \b\f\r \u00e9 \ud83d\ude00 é""#;
        let expected: String = serde_json::from_str(json).unwrap();
        assert_eq!(from_str(json).unwrap(), expected);
        assert_eq!(from_slice(json.as_bytes()).unwrap(), expected);
        assert_eq!(from_reader(json.as_bytes()).unwrap(), expected);
        assert_eq!(
            from_value(serde_json::from_str(json).unwrap()).unwrap(),
            expected
        );
        assert_eq!(expected, "line\none\ttab \"q\" \\ / \u{8}\u{c}\r é 😀 é");
    }

    #[test]
    fn text_content_and_text_resources_decode_through_it() {
        let text = "line one\nline \"two\"\t\u{1F600}\u{7}";
        let block = serde_json::json!({"type": "text", "text": text});
        let resource = serde_json::json!({"uri": "file:///a", "text": text});
        let bytes = serde_json::to_vec(&block).unwrap();
        for decoded in [
            serde_json::from_slice::<crate::ContentBlock>(&bytes).unwrap(),
            serde_json::from_value::<crate::ContentBlock>(block.clone()).unwrap(),
        ] {
            assert_eq!(decoded.as_text(), Some(text));
        }
        let bytes = serde_json::to_vec(&resource).unwrap();
        for decoded in [
            serde_json::from_slice::<crate::ResourceContents>(&bytes).unwrap(),
            serde_json::from_value::<crate::ResourceContents>(resource.clone()).unwrap(),
            serde_json::from_slice::<crate::ResourceContents>(
                br#"{"uri":"file:///a","text":null,"blob":"QQ=="}"#,
            )
            .unwrap(),
        ] {
            match decoded {
                crate::ResourceContents::Text(t) => assert_eq!(t.text, text),
                crate::ResourceContents::Blob(b) => assert_eq!(b.blob, "QQ=="),
            }
        }
        let direct: crate::TextResourceContents = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(direct.text, text);
    }

    #[test]
    fn an_optional_member_reads_null_as_none() {
        let decode = |json: &str| {
            let mut de = serde_json::Deserializer::from_str(json);
            OptTextSeed.deserialize(&mut de)
        };
        assert_eq!(decode("null").unwrap(), None);
        assert_eq!(decode(r#""a\nb""#).unwrap().as_deref(), Some("a\nb"));
        assert!(decode("1").is_err());
        let value = serde_json::json!("x\ty");
        assert_eq!(
            OptTextSeed.deserialize(value).unwrap().as_deref(),
            Some("x\ty")
        );
        assert_eq!(
            OptTextSeed.deserialize(serde_json::Value::Null).unwrap(),
            None
        );
    }

    #[test]
    fn a_string_without_escapes_is_taken_as_it_is() {
        assert_eq!(from_str(r#""plain text""#).unwrap(), "plain text");
        assert_eq!(from_str(r#""""#).unwrap(), "");
    }

    #[test]
    fn lone_surrogates_and_bad_escapes_are_refused() {
        assert!(from_str(r#""\ud83d""#).is_err());
        assert!(from_str(r#""\ud83dx""#).is_err());
        assert!(from_str(r#""\ude00""#).is_err());
        assert!(from_str(r#""\ud83d\u0041""#).is_err());
        assert!(from_str(r#""\x""#).is_err());
        assert!(from_str(r#""\u12""#).is_err());
        assert!(from_str("\"a\u{1}b\"").is_err());
        // Hostile bytes: not UTF-8, inside and around an escape.
        assert!(from_slice(b"\"\xff\"").is_err());
        assert!(from_slice(b"\"a\\n\xc3\"").is_err());
        assert!(from_reader(b"\"\xff\"").is_err());
        assert_eq!(unescape(r#""\ud83d""#), Err(UnescapeError::LoneSurrogate));
        assert_eq!(unescape(r#""\q""#), Err(UnescapeError::BadEscape));
        assert_eq!(unescape("\"\\"), Err(UnescapeError::NotAString));
        assert_eq!(unescape(r#""\"#), Err(UnescapeError::NotAString));
        assert_eq!(unescape(r#""\\""#), Ok("\\".to_owned()));
    }

    #[test]
    fn other_json_types_are_refused() {
        for json in ["12", "null", "true", "{}", "[\"a\"]"] {
            assert!(from_str(json).is_err(), "{json}");
            assert!(
                from_value(serde_json::from_str(json).unwrap()).is_err(),
                "{json}"
            );
        }
    }

    proptest! {
        #[test]
        fn any_string_round_trips(s in any::<String>()) {
            let json = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(&from_str(&json).unwrap(), &s);
            prop_assert_eq!(&from_slice(json.as_bytes()).unwrap(), &s);
            prop_assert_eq!(&from_value(serde_json::Value::String(s.clone())).unwrap(), &s);
        }

        #[test]
        fn any_escaped_text_decodes_as_serde_json_decodes_it(
            units in proptest::collection::vec(any::<u16>(), 0..40),
        ) {
            // Every character as a `\uXXXX` escape, lone surrogates included.
            let json: String = std::iter::once("\"".to_owned())
                .chain(units.iter().map(|u| format!("\\u{u:04x}")))
                .chain(std::iter::once("\"".to_owned()))
                .collect();
            let theirs = serde_json::from_str::<String>(&json).ok();
            prop_assert_eq!(from_str(&json).ok(), theirs);
        }
    }
}

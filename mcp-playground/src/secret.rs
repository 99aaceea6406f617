//! The launch secrets: 32 random bytes each, written as 64 hex digits,
//! compared in constant time, never shown by `Debug`.

use std::fmt;

use crate::PlaygroundError;

/// Bytes of each secret.
const SECRET_BYTES: usize = 32;

/// One secret (the one-time code, the session cookie, the page token).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// A new secret from the operating system's random source.
    pub(crate) fn random() -> Result<Self, PlaygroundError> {
        let mut bytes = [0u8; SECRET_BYTES];
        getrandom::fill(&mut bytes).map_err(PlaygroundError::Random)?;
        let mut hex = String::with_capacity(SECRET_BYTES * 2);
        for b in bytes {
            hex.push(char::from(HEX[usize::from(b >> 4)]));
            hex.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
        Ok(Self(hex))
    }

    /// The secret as text, for the one place each is handed out.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this secret. The time taken depends on the
    /// candidate's length only, not on where it first differs.
    pub(crate) fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_distinct_hex_compared_whole_and_hidden_from_debug() {
        let a = Secret::random().unwrap();
        let b = Secret::random().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 64);
        assert!(a.expose().bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(a.matches(a.expose()));
        assert!(!a.matches(b.expose()));
        assert!(!a.matches(&a.expose()[..63]));
        assert!(!a.matches(""));
        assert!(!format!("{a:?}").contains(a.expose()));
    }
}

//! PKCE (RFC 7636) with S256 only, and the random `state` value.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::error::AuthError;
use crate::secret::Secret;

/// A fresh verifier and its S256 challenge.
#[derive(Debug)]
pub(crate) struct Pkce {
    /// 43 characters of base64url (32 random bytes): inside RFC 7636's
    /// 43–128 unreserved characters.
    pub(crate) verifier: Secret,
    /// `BASE64URL(SHA256(verifier))`.
    pub(crate) challenge: String,
}

impl Pkce {
    pub(crate) fn generate() -> Result<Self, AuthError> {
        let verifier = random_token()?;
        let challenge = s256(&verifier);
        Ok(Self {
            verifier: Secret::new(verifier),
            challenge,
        })
    }
}

/// The S256 transform of a verifier.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 32 random bytes from the operating system, base64url without padding.
pub(crate) fn random_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AuthError::Io(std::io::Error::other(e)))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths
/// only, not on where they first differ (for `state` values, so a local
/// process cannot guess one byte by byte from the timing of our answers).
///
/// Written by hand: this is the one comparison that needs it and the crate
/// has no constant-time dependency. The lengths are not secret (a `state`
/// of ours is always 43 characters).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // Keeps the optimiser from turning the fold into an early exit.
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_is_equality() {
        assert!(constant_time_eq(b"", b""));
        assert!(constant_time_eq(b"st-1", b"st-1"));
        assert!(!constant_time_eq(b"st-1", b"st-2"));
        assert!(!constant_time_eq(b"xt-1", b"st-1"));
        assert!(!constant_time_eq(b"st-1", b"st-1x"));
        assert!(!constant_time_eq(b"st-1", b""));
    }

    #[test]
    fn s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_fresh_and_well_formed() {
        let a = Pkce::generate().unwrap();
        let b = Pkce::generate().unwrap();
        assert_ne!(a.verifier, b.verifier);
        let v = a.verifier.expose();
        assert_eq!(v.len(), 43);
        assert!(
            v.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(a.challenge, s256(v));
        assert!(!format!("{a:?}").contains(v));
    }
}

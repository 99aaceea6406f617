//! DPoP (RFC 9449): proofs of possession of the key a token is bound to.
//!
//! A proof is an ES256 JWT with `typ: dpop+jwt` and the public key in its
//! header, and `jti` (fresh every time), `htm`, `htu` (the URL without query
//! or fragment), `iat`, the server's `nonce` when it gave one, and `ath` (the
//! token's SHA-256) on requests to the MCP server. Nonces are kept per party
//! (authorization server, MCP server), checked against RFC 9449's grammar
//! and bounded; a server that asks for a new nonce again right after one was
//! used gets one retry and then [`AuthError::DpopNonceLoop`].

use std::sync::Mutex;

use serde_json::{Value, json};
use url::Url;

use crate::error::AuthError;
use crate::jose::{SigningKey, sha256_b64url};
use crate::pkce::random_token;
use crate::token::unix_now;

/// Bound on a nonce a server gives.
pub(crate) const MAX_NONCE: usize = 512;

/// Whether `nonce` is RFC 9449's `1*NQCHAR` and within [`MAX_NONCE`].
pub(crate) fn valid_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce.len() <= MAX_NONCE
        && nonce
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// `url` as `htu`: no query, no fragment.
fn htu(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// A fresh proof for `method` on `url`.
pub(crate) fn proof(
    key: &SigningKey,
    method: &str,
    url: &Url,
    nonce: Option<&str>,
    access_token: Option<&str>,
) -> Result<String, AuthError> {
    let mut claims = json!({
        "jti": random_token()?,
        "htm": method,
        "htu": htu(url),
        "iat": unix_now(),
    });
    if let Some(nonce) = nonce {
        claims["nonce"] = Value::from(nonce);
    }
    if let Some(token) = access_token {
        claims["ath"] = Value::from(sha256_b64url(token.as_bytes()));
    }
    key.sign_jwt(json!({"typ": "dpop+jwt", "jwk": key.public_jwk()}), &claims)
}

/// The last nonce one server gave.
#[derive(Debug, Default)]
pub(crate) struct NonceSlot(Mutex<Option<String>>);

impl NonceSlot {
    /// Keeps `nonce` if it is valid. Whether it was kept.
    pub(crate) fn offer(&self, nonce: &str) -> bool {
        if !valid_nonce(nonce) {
            tracing::info!("DPoP: ignoring a malformed or oversize nonce");
            return false;
        }
        *self.lock() = Some(nonce.to_owned());
        true
    }

    pub(crate) fn get(&self) -> Option<String> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn claims(jwt: &str) -> (Value, Value) {
        let mut parts = jwt.split('.');
        let mut json = || {
            serde_json::from_slice::<Value>(&URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap())
                .unwrap()
        };
        (json(), json())
    }

    #[test]
    fn a_proof_has_every_claim_and_no_query() {
        let key = SigningKey::generate().unwrap();
        let url = Url::parse("https://mcp.example/mcp?x=1#f").unwrap();
        let a = proof(&key, "POST", &url, Some("n-1"), Some("tok")).unwrap();
        let b = proof(&key, "POST", &url, None, None).unwrap();
        let (header, c) = claims(&a);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://mcp.example/mcp");
        assert_eq!(c["nonce"], "n-1");
        assert_eq!(c["ath"], sha256_b64url(b"tok"));
        assert!(c["iat"].as_u64().unwrap() > 1_700_000_000);
        let (_, d) = claims(&b);
        assert_ne!(c["jti"], d["jti"], "every proof is fresh");
        assert!(d.get("nonce").is_none() && d.get("ath").is_none());
    }

    #[test]
    fn nonces_are_checked_and_bounded() {
        let slot = NonceSlot::default();
        assert!(slot.offer("abc-123_~!"));
        assert_eq!(slot.get().as_deref(), Some("abc-123_~!"));
        for bad in [
            "",
            "a b",
            "quote\"",
            "back\\slash",
            "é",
            &"n".repeat(MAX_NONCE + 1),
        ] {
            assert!(!slot.offer(bad), "{bad:?}");
        }
        assert_eq!(slot.get().as_deref(), Some("abc-123_~!"));
    }
}

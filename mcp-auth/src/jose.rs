//! ES256 JSON Web Tokens: the signing key of DPoP proofs (RFC 9449) and of
//! `private_key_jwt` client assertions (RFC 7523 §2.2), its public JWK and
//! RFC 7638 thumbprint.
//!
//! Signing uses aws-lc-rs, the crypto library reqwest's rustls already
//! builds: no second crypto library and no RSA (the `rsa` crate has an open
//! advisory, RUSTSEC-2023-0071). Only P-256 keys are read; a key file is
//! refused by name when other users may read it.

use std::fmt;
use std::path::Path;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::error::{AuthError, SourceProblem};
use crate::secret::Secret;

/// Bound on a key file (a P-256 PEM is about 250 bytes).
const MAX_KEY_FILE: u64 = 16 * 1024;

/// Base64url without padding (RFC 7515 §2).
pub(crate) fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `BASE64URL(SHA-256(text))`: DPoP's `ath`, a JWK thumbprint.
pub(crate) fn sha256_b64url(text: &[u8]) -> String {
    b64url(&Sha256::digest(text))
}

/// A P-256 private key that signs ES256 JWTs. `Debug` shows its thumbprint
/// only; the private part never leaves this type except as the PKCS#8
/// document a token store keeps (a [`Secret`]).
pub struct SigningKey {
    pair: EcdsaKeyPair,
    thumbprint: String,
}

impl SigningKey {
    /// A fresh random key (a DPoP key).
    pub fn generate() -> Result<Self, AuthError> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| AuthError::Signing)?;
        Ok(Self::from_pair(pair))
    }

    /// A key from PEM text: PKCS#8 (`PRIVATE KEY`) or SEC1 (`EC PRIVATE
    /// KEY`), P-256 only.
    pub fn from_pem(pem: &[u8]) -> Result<Self, AuthError> {
        Self::from_pem_at(pem, None)
    }

    /// A key read from `path` (PEM, as [`from_pem`](Self::from_pem)). The
    /// file must not be readable or writable by group or others
    /// ([`SourceProblem::AccessibleToOthers`]) and is at most 16 KiB; it is
    /// read anew on every call, so a rotated key is picked up.
    pub fn from_pem_file(path: &Path) -> Result<Self, AuthError> {
        let bytes = read_private_file(path, MAX_KEY_FILE)?;
        Self::from_pem_at(&bytes, Some(path))
    }

    fn from_pem_at(pem: &[u8], path: Option<&Path>) -> Result<Self, AuthError> {
        let fail = |problem| match path {
            Some(path) => AuthError::key_file(path, problem),
            None => AuthError::Credential {
                origin: "private key".to_owned(),
                problem,
            },
        };
        let der = PrivateKeyDer::from_pem_slice(pem).map_err(|_| fail(SourceProblem::NotAKey))?;
        let pair = match &der {
            PrivateKeyDer::Pkcs8(d) => {
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, d.secret_pkcs8_der())
            }
            PrivateKeyDer::Sec1(d) => EcdsaKeyPair::from_private_key_der(
                &ECDSA_P256_SHA256_FIXED_SIGNING,
                d.secret_sec1_der(),
            ),
            _ => return Err(fail(SourceProblem::NotP256)),
        }
        .map_err(|_| fail(SourceProblem::NotP256))?;
        Ok(Self::from_pair(pair))
    }

    /// A key kept by a token store ([`to_stored`](Self::to_stored)).
    pub(crate) fn from_stored(stored: &Secret) -> Result<Self, AuthError> {
        let fail = || AuthError::Credential {
            origin: "stored DPoP key".to_owned(),
            problem: SourceProblem::NotP256,
        };
        let der = URL_SAFE_NO_PAD
            .decode(stored.expose())
            .map_err(|_| fail())?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der).map_err(|_| fail())?;
        Ok(Self::from_pair(pair))
    }

    /// The PKCS#8 document, base64url: what a token store keeps.
    pub(crate) fn to_stored(&self) -> Result<Secret, AuthError> {
        let doc = self.pair.to_pkcs8v1().map_err(|_| AuthError::Signing)?;
        Ok(Secret::new(b64url(doc.as_ref())))
    }

    fn from_pair(pair: EcdsaKeyPair) -> Self {
        let jwk = public_jwk_of(&pair);
        // RFC 7638: the required members in lexicographic order, no spaces.
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap_or_default(),
            jwk["y"].as_str().unwrap_or_default()
        );
        Self {
            pair,
            thumbprint: sha256_b64url(canonical.as_bytes()),
        }
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (what a DPoP-bound
    /// token's `cnf.jkt` names).
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`; never `d`).
    pub fn public_jwk(&self) -> Value {
        public_jwk_of(&self.pair)
    }

    /// `header.claims.signature`, with `alg: ES256` added to `header`.
    pub(crate) fn sign_jwt(&self, mut header: Value, claims: &Value) -> Result<String, AuthError> {
        header["alg"] = json!("ES256");
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| AuthError::Signing)?;
        Ok(format!("{input}.{}", b64url(signature.as_ref())))
    }
}

fn public_jwk_of(pair: &EcdsaKeyPair) -> Value {
    // An uncompressed point: 0x04, then x and y of 32 bytes each.
    let point = pair.public_key().as_ref();
    let (x, y) = point
        .get(1..)
        .unwrap_or_default()
        .split_at(point.len().saturating_sub(1) / 2);
    json!({"kty": "EC", "crv": "P-256", "x": b64url(x), "y": b64url(y)})
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &"ES256")
            .field("thumbprint", &self.thumbprint)
            .finish_non_exhaustive()
    }
}

/// Reads a file that holds a secret: refused when group or others may read
/// or write it, or when it is larger than `limit`.
pub(crate) fn read_private_file(path: &Path, limit: u64) -> Result<Vec<u8>, AuthError> {
    use std::os::unix::fs::PermissionsExt as _;
    let fail = |problem| AuthError::key_file(path, problem);
    let file = std::fs::File::open(path).map_err(|e| fail(SourceProblem::Unreadable(e.kind())))?;
    let meta = file
        .metadata()
        .map_err(|e| fail(SourceProblem::Unreadable(e.kind())))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(fail(SourceProblem::AccessibleToOthers { mode }));
    }
    read_bounded(file, limit).map_err(fail)
}

/// Reads at most `limit` bytes; more is [`SourceProblem::TooLarge`].
pub(crate) fn read_bounded(file: impl std::io::Read, limit: u64) -> Result<Vec<u8>, SourceProblem> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SourceProblem::Unreadable(e.kind()))?;
    if bytes.len() as u64 > limit {
        return Err(SourceProblem::TooLarge { limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    /// Checks `jwt`'s signature with `key`'s public part.
    pub(crate) fn verify(key: &SigningKey, jwt: &str) -> (Value, Value) {
        let mut parts = jwt.split('.');
        let (h, c, s) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let public = key.pair.public_key().as_ref().to_vec();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public)
            .verify(
                format!("{h}.{c}").as_bytes(),
                &URL_SAFE_NO_PAD.decode(s).unwrap(),
            )
            .expect("the signature verifies");
        let json = |p: &str| serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap();
        (json(h), json(c))
    }

    #[test]
    fn a_signed_jwt_verifies_and_names_es256() {
        let key = SigningKey::generate().unwrap();
        let jwt = key
            .sign_jwt(json!({"typ": "dpop+jwt"}), &json!({"jti": "1"}))
            .unwrap();
        let (header, claims) = verify(&key, &jwt);
        assert_eq!(header["alg"], "ES256");
        assert_eq!(claims["jti"], "1");
        let jwk = key.public_jwk();
        assert!(jwk.get("d").is_none());
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["x"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["y"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
    }

    #[test]
    fn a_stored_key_comes_back_the_same_and_debug_shows_no_private_part() {
        let key = SigningKey::generate().unwrap();
        let stored = key.to_stored().unwrap();
        let back = SigningKey::from_stored(&stored).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        let shown = format!("{key:?}");
        assert!(!shown.contains(stored.expose()), "{shown}");
        assert!(shown.contains(key.thumbprint()));
    }

    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        // RFC 7638 §3.1 is an RSA example; this recomputes the EC form by
        // hand from the JWK members.
        let key = SigningKey::generate().unwrap();
        let jwk = key.public_jwk();
        let canonical = format!(
            "{{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"{}\",\"y\":\"{}\"}}",
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(key.thumbprint(), sha256_b64url(canonical.as_bytes()));
        assert_eq!(key.thumbprint().len(), 43);
    }

    #[test]
    fn pem_keys_are_read_and_garbage_is_named() {
        let key = SigningKey::generate().unwrap();
        let der = key.pair.to_pkcs8v1().unwrap();
        let body = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n");
        let back = SigningKey::from_pem(pem.as_bytes()).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        for bad in [
            "not a key".to_owned(),
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".to_owned(),
        ] {
            let err = SigningKey::from_pem(bad.as_bytes()).unwrap_err();
            assert!(matches!(err, AuthError::Credential { .. }), "{err:?}");
        }
    }
}

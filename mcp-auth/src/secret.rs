//! A string that must never be shown: tokens, codes, verifiers, client
//! secrets.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A secret string. `Debug` prints `Secret(..)`; there is no `Display`. The
/// value is reached only through [`Secret::expose`], so every place that uses
/// it is easy to find.
///
/// It serialises as the plain string: stores need to persist it, and a
/// serialised [`StoredCredentials`](crate::StoredCredentials) is itself a
/// secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value_and_serde_keeps_it() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "Secret(..)");
        assert_eq!(secret.expose(), "hunter2");
        let json = serde_json::to_string(&secret).unwrap();
        assert_eq!(json, "\"hunter2\"");
        let back: Secret = serde_json::from_str(&json).unwrap();
        assert_eq!(back, secret);
    }
}

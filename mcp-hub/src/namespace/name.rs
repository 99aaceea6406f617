//! Validated names: the host's server names and the qualified-name separator.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use crate::HubError;

/// A server's name in the hub, chosen by the host (never the server's own
/// `serverInfo.name`): 1 to 64 characters of `[A-Za-z0-9_-]`.
///
/// The character set keeps qualified names (`server/tool`) unambiguous to
/// split by eye and provider-safe on the server side.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerName(Arc<str>);

impl ServerName {
    /// Longest accepted name.
    pub const MAX_LEN: usize = 64;

    /// Validates `name`.
    pub fn new(name: &str) -> Result<Self, HubError> {
        let problem = if name.is_empty() {
            Some("it is empty")
        } else if name.len() > Self::MAX_LEN {
            Some("it is longer than 64 characters")
        } else if !name.bytes().all(is_safe_byte) {
            Some("only ASCII letters, digits, `_` and `-` are allowed")
        } else {
            None
        };
        match problem {
            Some(problem) => Err(HubError::InvalidServerName {
                name: name.to_owned(),
                problem,
            }),
            None => Ok(ServerName(Arc::from(name))),
        }
    }

    /// `name` as given, checked later with [`ServerName::check`]: how a
    /// [`crate::ServerSpec`] holds its name until the hub starts.
    pub(crate) fn unchecked(name: &str) -> Self {
        ServerName(Arc::from(name))
    }

    /// Whether the name is valid (see [`ServerName::new`]).
    pub(crate) fn check(&self) -> Result<(), HubError> {
        ServerName::new(&self.0).map(drop)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for ServerName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ServerName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// `[A-Za-z0-9_-]`: the characters of server names and of provider-safe
/// tool names.
pub(crate) fn is_safe_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// What joins a server name and a tool name in a qualified name (default
/// `/`): 1 to 8 printable characters, no whitespace.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Separator(Arc<str>);

impl Separator {
    /// Validates `sep`.
    pub fn new(sep: &str) -> Result<Self, HubError> {
        let problem = if sep.is_empty() {
            Some("it is empty")
        } else if sep.chars().count() > 8 {
            Some("it is longer than 8 characters")
        } else if sep.chars().any(|c| c.is_whitespace() || c.is_control()) {
            Some("whitespace and control characters are not allowed")
        } else {
            None
        };
        match problem {
            Some(problem) => Err(HubError::InvalidSetting {
                setting: "separator",
                problem,
            }),
            None => Ok(Separator(Arc::from(sep))),
        }
    }

    /// The separator.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `server` + separator + `tool`.
    pub fn qualify(&self, server: &ServerName, tool: &str) -> String {
        let mut out = String::with_capacity(server.as_str().len() + self.0.len() + tool.len());
        out.push_str(server.as_str());
        out.push_str(&self.0);
        out.push_str(tool);
        out
    }
}

impl Default for Separator {
    fn default() -> Self {
        Separator(Arc::from("/"))
    }
}

impl fmt::Debug for Separator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_are_validated() {
        assert!(ServerName::new("notes").is_ok());
        assert!(ServerName::new("my-server_2").is_ok());
        assert!(ServerName::new(&"a".repeat(64)).is_ok());
        for bad in [
            "",
            "has space",
            "slash/name",
            "dot.name",
            "ünï",
            &"a".repeat(65),
        ] {
            assert!(
                matches!(
                    ServerName::new(bad),
                    Err(HubError::InvalidServerName { .. })
                ),
                "{bad:?} accepted"
            );
        }
    }

    #[test]
    fn separators_are_validated() {
        assert_eq!(Separator::default().as_str(), "/");
        assert!(Separator::new("__").is_ok());
        assert!(Separator::new("").is_err());
        assert!(Separator::new(" ").is_err());
        assert!(Separator::new("123456789").is_err());
        let notes = ServerName::new("notes").unwrap();
        assert_eq!(
            Separator::new("__").unwrap().qualify(&notes, "search"),
            "notes__search"
        );
    }
}

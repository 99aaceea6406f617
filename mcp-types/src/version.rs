//! Protocol versions and eras.
//!
//! Wire types keep versions as strings (a server may name one we do not know);
//! [`ProtocolVersion`] is the closed set this crate implements.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::TypesError;

/// A dated MCP protocol version this crate implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`.
    V2024_11_05,
    /// `2025-03-26`.
    V2025_03_26,
    /// `2025-06-18`.
    V2025_06_18,
    /// `2025-11-25`.
    V2025_11_25,
    /// `2026-07-28`.
    V2026_07_28,
}

/// How a connection starts in a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2024-11-05 to 2025-11-25: `initialize` request → result →
    /// `notifications/initialized`.
    Legacy,
    /// 2026-07-28: no handshake; every request carries `_meta` with the protocol
    /// version and client capabilities; `server/discover` tells what the server
    /// supports.
    Modern,
}

/// The newest version of the legacy (handshake) era.
pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;
/// The newest version this crate implements.
pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

impl ProtocolVersion {
    /// Every version, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The version as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The version named by `s`, if this crate implements it.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The era the version belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Whether the version's JSON Schema uses `$defs` (2020-12) rather than
    /// `definitions` (draft-07).
    pub const fn schema_uses_defs(self) -> bool {
        matches!(
            self,
            ProtocolVersion::V2025_11_25 | ProtocolVersion::V2026_07_28
        )
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = TypesError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or(TypesError::UnknownProtocolVersion)
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        ProtocolVersion::parse(&s).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Other("an unknown version"),
                &"a dated MCP protocol version",
            )
        })
    }
}

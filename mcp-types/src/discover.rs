//! Discovery (2026-07-28): `server/discover` returns the server's supported
//! versions, capabilities and identity (in `_meta`, key
//! `io.modelcontextprotocol/serverInfo`) with no handshake.

use crate::cache::CacheScope;
use crate::capabilities::ServerCapabilities;
use crate::error::TypesError;
use crate::initialize::Implementation;
use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::open_struct;
use crate::version::ProtocolVersion;

/// Params of `server/discover`: only the request `_meta`.
pub type DiscoverParams = crate::common::RequestParams;

open_struct! {
    /// Result of `server/discover`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct DiscoverResult {
        /// Versions the server supports, as sent (may include unknown ones).
        req supported_versions: Vec<String> = "supportedVersions",
        /// The server's capabilities.
        req capabilities: ServerCapabilities = "capabilities",
        /// Guidance for the model on using this server (server prose).
        opt instructions: String = "instructions",
        /// Cache lifetime hint in milliseconds.
        opt ttl_ms: u64 = "ttlMs",
        /// Who may share a cached copy.
        opt cache_scope: CacheScope = "cacheScope",
        /// The result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata (with `io.modelcontextprotocol/serverInfo`).
        opt meta: Meta = "_meta",
    }
}

impl DiscoverResult {
    /// The supported versions this crate knows, oldest first.
    pub fn known_versions(&self) -> Vec<ProtocolVersion> {
        let mut v: Vec<ProtocolVersion> = self
            .supported_versions
            .iter()
            .filter_map(|s| ProtocolVersion::parse(s))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The server's identity from `_meta`, if given.
    pub fn server_info(&self) -> Result<Option<Implementation>, TypesError> {
        match &self.meta {
            Some(m) => m.server_info(),
            None => Ok(None),
        }
    }
}

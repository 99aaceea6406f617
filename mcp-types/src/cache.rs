//! Cache hints (2026-07-28): `ttlMs` and `cacheScope` on list, read and discover
//! results (`CacheableResult` in the schema).

use std::time::Duration;

use crate::open_struct::open_enum;

open_enum! {
    /// Who may reuse a cached response (like HTTP `Cache-Control: public/private`).
    pub enum CacheScope {
        /// Only within the same authorization context.
        Private = "private",
        /// Any client or intermediary, across authorization contexts.
        Public = "public",
    }
}

/// A result's cache hint, read from its `ttlMs` and `cacheScope`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the result may be considered fresh (zero: immediately stale).
    pub ttl: Duration,
    /// Who may share a cached copy (`None` when the server did not say).
    pub scope: Option<CacheScope>,
}

/// Results that may carry a cache hint.
pub trait Cacheable {
    /// `ttlMs` as sent.
    fn ttl_ms(&self) -> Option<u64>;
    /// `cacheScope` as sent.
    fn cache_scope(&self) -> Option<&CacheScope>;

    /// The hint, when the result has a `ttlMs`.
    fn cache_hint(&self) -> Option<CacheHint> {
        self.ttl_ms().map(|ms| CacheHint {
            ttl: Duration::from_millis(ms),
            scope: self.cache_scope().cloned(),
        })
    }
}

macro_rules! impl_cacheable {
    ($($t:ty),* $(,)?) => {
        $(
            impl Cacheable for $t {
                fn ttl_ms(&self) -> Option<u64> {
                    self.ttl_ms
                }
                fn cache_scope(&self) -> Option<&CacheScope> {
                    self.cache_scope.as_ref()
                }
            }
        )*
    };
}

impl_cacheable!(
    crate::tools::ListToolsResult,
    crate::resources::ListResourcesResult,
    crate::resources::ListResourceTemplatesResult,
    crate::resources::ReadResourceResult,
    crate::prompts::ListPromptsResult,
    crate::discover::DiscoverResult,
);

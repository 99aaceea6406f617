//! The method ↔ params ↔ result pairing (the lsp-types pattern).
//!
//! Each method is an uninhabited marker type (see [`crate::requests`] and
//! [`crate::notifications`]) implementing [`Request`] or [`Notification`]; a
//! generic `request::<R>(params: R::Params) -> R::Result` can then never be given
//! the wrong params or decode the wrong result type. Direction markers say who may
//! send what.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A request method with its params and result types.
pub trait Request {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// Whether `params` may be omitted (they then read as an empty object).
    const PARAMS_OPTIONAL: bool = false;
    /// The params type.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The result type.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A notification method with its params type.
pub trait Notification {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// Whether `params` may be omitted (they then read as an empty object).
    const PARAMS_OPTIONAL: bool = false;
    /// The params type.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
}

/// A request a client may send to a server (in some version).
pub trait ClientRequest: Request {}

/// A request a server may send to a client (in some version; in 2026-07-28 only
/// inside `inputRequests`).
pub trait ServerRequest: Request {}

/// A notification a client may send to a server.
pub trait ClientNotification: Notification {}

/// A notification a server may send to a client.
pub trait ServerNotification: Notification {}

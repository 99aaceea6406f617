//! Dispatch enums: a received request or notification decoded by method.
//!
//! `parse(method, params)` compares the method string once per known method, then
//! decodes the raw params once into that method's type: variants are never tried
//! one after another. Unknown methods are kept as [`Value`] (`Unknown`), so the
//! caller can answer "method not found" or forward them.
//!
//! The enums serialize as `{"method": …, "params": …}` (the shape of a 2026-07-28
//! `inputRequests` entry); wrap them in [`crate::OutgoingRequest`] for a frame.

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{JsonError, TypesError};
use crate::notifications;
use crate::requests;
use crate::traits::{Notification, Request};

/// Decodes the params of a known method.
fn decode_params<P: DeserializeOwned>(
    method: &'static str,
    optional: bool,
    params: Option<&RawValue>,
) -> Result<P, TypesError> {
    let text = match params {
        Some(raw) => raw.get(),
        None if optional => "{}",
        None => return Err(TypesError::MissingParams { method }),
    };
    serde_json::from_str(text).map_err(|e| TypesError::InvalidParams {
        method,
        source: JsonError::from(e),
    })
}

fn decode_unknown(params: Option<&RawValue>) -> Result<Option<Value>, TypesError> {
    params
        .map(|raw| serde_json::from_str(raw.get()).map_err(TypesError::json))
        .transpose()
}

macro_rules! dispatch_enum {
    (
        $(#[$outer:meta])*
        pub enum $name:ident : $tr:ident {
            $( $(#[$vdoc:meta])* $variant:ident($marker:ty), )*
        }
    ) => {
        $(#[$outer])*
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        // Transient message values decoded once and consumed: boxing the large
        // variants would add an allocation per message for no lasting gain.
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $( $(#[$vdoc])* $variant(<$marker as $tr>::Params), )*
            /// A method this crate does not know, its params kept as JSON.
            Unknown {
                /// The method name.
                method: String,
                /// The params, if any.
                params: Option<Value>,
            },
        }

        impl $name {
            /// Decodes a message by its method: one string comparison per known
            /// method, then one decode of the params.
            pub fn parse(method: &str, params: Option<&RawValue>) -> Result<Self, TypesError> {
                $(
                    if method == <$marker as $tr>::METHOD {
                        return decode_params(<$marker as $tr>::METHOD, <$marker as $tr>::PARAMS_OPTIONAL, params)
                            .map($name::$variant);
                    }
                )*
                Ok($name::Unknown { method: method.to_owned(), params: decode_unknown(params)? })
            }

            /// The method name.
            pub fn method(&self) -> &str {
                match self {
                    $( $name::$variant(_) => <$marker as $tr>::METHOD, )*
                    $name::Unknown { method, .. } => method,
                }
            }

            /// Writes `method` and `params` into an open map (`params` left out when
            /// `omit_params`, for a message that arrived without them).
            pub(crate) fn write_members<M: SerializeMap>(&self, m: &mut M, omit_params: bool) -> Result<(), M::Error> {
                match self {
                    $(
                        $name::$variant(p) => {
                            m.serialize_entry("method", <$marker as $tr>::METHOD)?;
                            if !omit_params {
                                m.serialize_entry("params", p)?;
                            }
                        }
                    )*
                    $name::Unknown { method, params } => {
                        m.serialize_entry("method", method)?;
                        if let Some(p) = params {
                            m.serialize_entry("params", p)?;
                        }
                    }
                }
                Ok(())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                self.write_members(&mut m, false)?;
                m.end()
            }
        }
    };
}

dispatch_enum! {
    /// A request a server sends a client (legacy era directly; 2026-07-28 inside
    /// `inputRequests` and task `inputRequests`).
    pub enum ServerRequestMessage: Request {
        /// `ping`.
        Ping(requests::Ping),
        /// `sampling/createMessage`.
        CreateMessage(requests::CreateMessage),
        /// `elicitation/create`.
        Elicit(requests::Elicit),
        /// `roots/list`.
        ListRoots(requests::ListRoots),
        /// `tasks/get` (2025-11-25: the server polls a client-hosted task).
        GetTask(requests::GetTask),
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(requests::GetTaskPayload),
        /// `tasks/list` (2025-11-25).
        ListTasks(requests::ListTasks),
        /// `tasks/cancel` (2025-11-25).
        CancelTask(requests::CancelTask),
    }
}

dispatch_enum! {
    /// A notification a server sends a client.
    pub enum ServerNotificationMessage: Notification {
        /// `notifications/cancelled`.
        Cancelled(notifications::Cancelled),
        /// `notifications/progress`.
        Progress(notifications::Progress),
        /// `notifications/message`.
        LoggingMessage(notifications::LoggingMessage),
        /// `notifications/resources/updated`.
        ResourceUpdated(notifications::ResourceUpdated),
        /// `notifications/resources/list_changed`.
        ResourceListChanged(notifications::ResourceListChanged),
        /// `notifications/tools/list_changed`.
        ToolListChanged(notifications::ToolListChanged),
        /// `notifications/prompts/list_changed`.
        PromptListChanged(notifications::PromptListChanged),
        /// `notifications/elicitation/complete` (2025-11-25).
        ElicitationComplete(notifications::ElicitationComplete),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(notifications::TaskStatus),
        /// `notifications/tasks` (tasks extension).
        Task(notifications::Task),
        /// `notifications/subscriptions/acknowledged` (2026-07-28).
        SubscriptionsAcknowledged(notifications::SubscriptionsAcknowledged),
    }
}

dispatch_enum! {
    /// A request a client sends a server (for servers, fakes and proxies).
    pub enum ClientRequestMessage: Request {
        /// `initialize`.
        Initialize(requests::Initialize),
        /// `ping`.
        Ping(requests::Ping),
        /// `server/discover`.
        Discover(requests::Discover),
        /// `tools/list`.
        ListTools(requests::ListTools),
        /// `tools/call`.
        CallTool(requests::CallTool),
        /// `resources/list`.
        ListResources(requests::ListResources),
        /// `resources/templates/list`.
        ListResourceTemplates(requests::ListResourceTemplates),
        /// `resources/read`.
        ReadResource(requests::ReadResource),
        /// `resources/subscribe`.
        Subscribe(requests::Subscribe),
        /// `resources/unsubscribe`.
        Unsubscribe(requests::Unsubscribe),
        /// `skills/list` (Skills extension).
        ListSkills(requests::ListSkills),
        /// `skills/get` (Skills extension).
        GetSkill(requests::GetSkill),
        /// `resources/directory/read` (Skills extension).
        ReadDirectory(requests::ReadDirectory),
        /// `prompts/list`.
        ListPrompts(requests::ListPrompts),
        /// `prompts/get`.
        GetPrompt(requests::GetPrompt),
        /// `completion/complete`.
        Complete(requests::Complete),
        /// `logging/setLevel`.
        SetLevel(requests::SetLevel),
        /// `subscriptions/listen`.
        SubscriptionsListen(requests::SubscriptionsListen),
        /// `tasks/get`.
        GetTask(requests::GetTask),
        /// `tasks/result`.
        GetTaskPayload(requests::GetTaskPayload),
        /// `tasks/list`.
        ListTasks(requests::ListTasks),
        /// `tasks/cancel`.
        CancelTask(requests::CancelTask),
        /// `tasks/update`.
        UpdateTask(requests::UpdateTask),
    }
}

dispatch_enum! {
    /// A notification a client sends a server (for servers, fakes and proxies).
    pub enum ClientNotificationMessage: Notification {
        /// `notifications/initialized`.
        Initialized(notifications::Initialized),
        /// `notifications/cancelled`.
        Cancelled(notifications::Cancelled),
        /// `notifications/progress`.
        Progress(notifications::Progress),
        /// `notifications/roots/list_changed`.
        RootsListChanged(notifications::RootsListChanged),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(notifications::TaskStatus),
    }
}

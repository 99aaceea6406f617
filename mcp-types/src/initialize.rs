//! The legacy handshake (`initialize`, `notifications/initialized`) and the
//! implementation descriptors (`clientInfo`, `serverInfo`) and icons used in
//! several places.

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::{open_enum, open_struct};

open_struct! {
    /// Name and version of an MCP implementation (`clientInfo`, `serverInfo`). Self
    /// reported: for display and logs, never for decisions.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Implementation {
        /// Programmatic name.
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
        opt title: String = "title",
        /// Version string.
        req version: String = "version",
        /// 2025-11-25+: description of the implementation.
        opt description: String = "description",
        /// 2025-11-25+: icons.
        opt icons: Vec<Icon> = "icons",
        /// 2025-11-25+: the implementation's website.
        opt website_url: String = "websiteUrl",
    }
}

impl Implementation {
    /// An implementation descriptor with just a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Default::default()
        }
    }
}

open_enum! {
    /// The theme an icon is designed for.
    pub enum IconTheme {
        /// For a light background.
        Light = "light",
        /// For a dark background.
        Dark = "dark",
    }
}

open_struct! {
    /// An icon (2025-11-25+) for an implementation, tool, prompt or resource.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Icon {
        /// URI of the icon (`https:` or `data:`). Untrusted: fetch with care.
        req src: String = "src",
        /// MIME type override.
        opt mime_type: String = "mimeType",
        /// Sizes (`"48x48"`, `"any"`).
        opt sizes: Vec<String> = "sizes",
        /// The theme the icon is for.
        opt theme: IconTheme = "theme",
    }
}

open_struct! {
    /// Params of `initialize` (legacy era).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct InitializeParams {
        /// The newest version the client supports (and would like to use).
        req protocol_version: String = "protocolVersion",
        /// The client's capabilities.
        req capabilities: ClientCapabilities = "capabilities",
        /// The client's name and version.
        req client_info: Implementation = "clientInfo",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl InitializeParams {
    /// Params offering `version` with the given capabilities and identity.
    pub fn new(
        version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeParams {
            protocol_version: version.into(),
            capabilities,
            client_info,
            ..Default::default()
        }
    }
}

open_struct! {
    /// Result of `initialize` (legacy era).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct InitializeResult {
        /// The version the server chose (may differ from the one offered).
        req protocol_version: String = "protocolVersion",
        /// The server's capabilities.
        req capabilities: ServerCapabilities = "capabilities",
        /// The server's name and version.
        req server_info: Implementation = "serverInfo",
        /// Guidance for the model on using this server (server prose).
        opt instructions: String = "instructions",
        /// Never sent by legacy servers; kept for symmetry with other results.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

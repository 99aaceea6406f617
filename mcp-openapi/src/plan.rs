//! What a tool call turns into: everything about an operation's request
//! that does not depend on the arguments, worked out once at load.

use crate::security::Security;
use crate::style::{Location, Style};

/// One operation's request.
#[derive(Debug)]
pub(crate) struct CallPlan {
    pub(crate) method: reqwest::Method,
    /// `GET /pets/{id}`: how the operation is named in results.
    pub(crate) label: String,
    /// Scheme, host, port and base path, without a trailing `/`.
    pub(crate) base: String,
    /// The origin every request of this operation goes to.
    pub(crate) origin: url::Origin,
    pub(crate) path: Vec<PathPart>,
    pub(crate) params: Vec<ParamPlan>,
    pub(crate) body: BodyPlan,
    /// The success responses' media types, for `Accept`.
    pub(crate) accept: Option<String>,
    pub(crate) security: Security,
}

/// A piece of the path template.
#[derive(Debug)]
pub(crate) enum PathPart {
    /// Literal text, already safe for a URL path.
    Literal(String),
    /// The value of `params[i]`.
    Param(usize),
}

/// One parameter and the argument that fills it.
#[derive(Debug)]
pub(crate) struct ParamPlan {
    /// The argument's name in the tool's input.
    pub(crate) key: String,
    /// The parameter's name in the request.
    pub(crate) name: String,
    pub(crate) location: Location,
    pub(crate) style: Style,
    pub(crate) explode: bool,
    pub(crate) allow_reserved: bool,
    /// Sent as its JSON text (a parameter with `content`).
    pub(crate) json: bool,
    pub(crate) required: bool,
}

/// How a request body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    Form,
    Text,
    /// Base64 in the arguments, raw bytes on the wire.
    Binary,
}

/// Where the request body comes from.
#[derive(Debug)]
pub(crate) enum BodyPlan {
    None,
    /// An object body whose properties are arguments of their own.
    Fields {
        media: Media,
        content_type: String,
        /// (argument, property, required).
        fields: Vec<(String, String, bool)>,
        /// Arguments that are neither parameters nor listed properties go
        /// into the body (the body allows other properties).
        rest: bool,
        required: bool,
    },
    /// The whole body is one argument.
    Whole {
        key: String,
        media: Media,
        content_type: String,
        required: bool,
    },
}

//! Requests the server makes of the client (legacy server→client requests
//! and 2026-07-28 `input_required` input requests): which of them reach the
//! host's handlers, and the refusals the core gives on its own.
//!
//! A capability is declared only for a handler the host registered, and a
//! request for anything else is refused with an error naming the feature:
//! sampling without a sampling handler, sampling with tools when
//! `sampling.tools` was not declared, an elicitation mode that was not
//! declared, roots without roots. `ping` needs no host at all.

use mcp_types::Request as _;
use mcp_types::requests::{CreateMessage, Elicit, ListRoots};
use mcp_types::{
    ClientCapabilities, CreateMessageParams, ElicitParams, ErrorObject, ServerRequestMessage,
    error_codes,
};

/// The client features the host offers, as declared to the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offered {
    pub(crate) sampling: bool,
    pub(crate) sampling_tools: bool,
    pub(crate) elicitation_form: bool,
    pub(crate) elicitation_url: bool,
    pub(crate) roots: bool,
}

impl Offered {
    /// What `capabilities` (the declared ones) offer.
    pub(crate) fn from_capabilities(capabilities: &ClientCapabilities) -> Self {
        let sampling = capabilities.sampling.as_ref();
        let elicitation = capabilities.elicitation.as_ref();
        // An elicitation capability naming no mode is form mode (2025-06-18).
        let no_mode = elicitation.is_some_and(|e| e.form.is_none() && e.url.is_none());
        Self {
            sampling: sampling.is_some(),
            sampling_tools: sampling.is_some_and(|s| s.tools.is_some()),
            elicitation_form: elicitation.is_some_and(|e| e.form.is_some()) || no_mode,
            elicitation_url: elicitation.is_some_and(|e| e.url.is_some()),
            roots: capabilities.roots.is_some(),
        }
    }
}

/// Whether the host takes `request`; else the refusal to answer with.
pub(crate) fn admit(request: &ServerRequestMessage, offered: Offered) -> Result<(), ErrorObject> {
    match request {
        ServerRequestMessage::Ping(_) => Ok(()),
        ServerRequestMessage::CreateMessage(params) => {
            if !offered.sampling {
                Err(not_offered(CreateMessage::METHOD, "sampling"))
            } else if !offered.sampling_tools && sampling_uses_tools(params) {
                Err(invalid(
                    "this client did not declare sampling.tools; tools are not allowed in sampling requests",
                ))
            } else {
                Ok(())
            }
        }
        ServerRequestMessage::Elicit(params) => {
            if !offered.elicitation_form && !offered.elicitation_url {
                return Err(not_offered(Elicit::METHOD, "elicitation"));
            }
            match params {
                ElicitParams::Form(_) if offered.elicitation_form => Ok(()),
                ElicitParams::Url(_) if offered.elicitation_url => Ok(()),
                _ => Err(invalid(
                    "this elicitation mode was not declared by this client",
                )),
            }
        }
        ServerRequestMessage::ListRoots(_) if offered.roots => Ok(()),
        ServerRequestMessage::ListRoots(_) => Err(not_offered(ListRoots::METHOD, "roots")),
        other => Err(method_not_found(other.method())),
    }
}

/// The refusal of a method this client does not know.
pub(crate) fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject {
        code: error_codes::METHOD_NOT_FOUND,
        message: format!("this client does not support `{method}`"),
        data: None,
    }
}

/// The refusal of params that do not match the method.
pub(crate) fn invalid_params(method: &str) -> ErrorObject {
    ErrorObject {
        code: error_codes::INVALID_PARAMS,
        message: format!("the params of `{method}` do not match the protocol"),
        data: None,
    }
}

/// The refusal of a request over the bound of those handled at once.
pub(crate) fn too_many() -> ErrorObject {
    ErrorObject {
        code: error_codes::INTERNAL_ERROR,
        message: "this client is handling too many requests at once".to_owned(),
        data: None,
    }
}

fn not_offered(method: &str, feature: &str) -> ErrorObject {
    ErrorObject {
        code: error_codes::METHOD_NOT_FOUND,
        message: format!(
            "this client does not support {feature} (`{method}`): no handler registered"
        ),
        data: None,
    }
}

fn invalid(message: &str) -> ErrorObject {
    ErrorObject {
        code: error_codes::INVALID_PARAMS,
        message: message.to_owned(),
        data: None,
    }
}

/// Whether a sampling request carries tools, a tool choice, or tool
/// use / result content.
fn sampling_uses_tools(params: &CreateMessageParams) -> bool {
    if params.tools.is_some() || params.tool_choice.is_some() {
        return true;
    }
    let text = serde_json::to_string(&params.messages).unwrap_or_default();
    text.contains("\"tool_use\"") || text.contains("\"tool_result\"")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn request(method: &str, params: Value) -> ServerRequestMessage {
        let raw = serde_json::value::to_raw_value(&params).unwrap();
        ServerRequestMessage::parse(method, Some(&raw)).unwrap()
    }

    fn code(result: Result<(), ErrorObject>) -> Option<i64> {
        result.err().map(|e| e.code)
    }

    #[test]
    fn only_declared_features_in_declared_modes_reach_the_host() {
        let sampling = request(
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}),
        );
        let with_tools = request(
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 5, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        );
        let form = request(
            "elicitation/create",
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}),
        );
        let url = request(
            "elicitation/create",
            json!({"mode": "url", "message": "m", "url": "https://e.com/x", "elicitationId": "1"}),
        );
        let roots = request("roots/list", json!({}));
        let none = Offered::default();
        for r in [&sampling, &form, &roots] {
            assert_eq!(code(admit(r, none)), Some(error_codes::METHOD_NOT_FOUND));
        }
        let err = admit(&roots, none).unwrap_err();
        assert!(err.message.contains("roots"), "{}", err.message);

        let some = Offered {
            sampling: true,
            elicitation_form: true,
            roots: true,
            ..Offered::default()
        };
        assert!(admit(&sampling, some).is_ok());
        assert_eq!(
            code(admit(&with_tools, some)),
            Some(error_codes::INVALID_PARAMS)
        );
        assert!(admit(&form, some).is_ok());
        assert_eq!(code(admit(&url, some)), Some(error_codes::INVALID_PARAMS));
        assert!(admit(&roots, some).is_ok());
        let all = Offered {
            sampling_tools: true,
            elicitation_url: true,
            ..some
        };
        assert!(admit(&with_tools, all).is_ok() && admit(&url, all).is_ok());
    }

    #[test]
    fn what_is_offered_follows_the_declared_capabilities() {
        let caps: ClientCapabilities = serde_json::from_value(json!({
            "sampling": {"tools": {}}, "elicitation": {}, "roots": {"listChanged": true}
        }))
        .unwrap();
        assert_eq!(
            Offered::from_capabilities(&caps),
            Offered {
                sampling: true,
                sampling_tools: true,
                elicitation_form: true,
                elicitation_url: false,
                roots: true
            }
        );
        assert_eq!(
            Offered::from_capabilities(&ClientCapabilities::default()),
            Offered::default()
        );
    }
}

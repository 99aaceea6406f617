//! Requests whose result may be `input_required` (2026-07-28) or a task:
//! this pumps the rounds (each a new request; the host's handlers answer
//! the input requests), and `protocol/rounds.rs` decides what each round
//! sends and what each answer means (the echoed `requestState`, the round
//! limit).

use std::borrow::Cow;
use std::sync::Arc;

use mcp_types::{InputRequiredResult, RequestOutcome};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::SessionError;
use crate::driver::RequestOptions;
use crate::params::Params;
use crate::protocol::rounds::{RoundStep, Rounds};
use crate::protocol::server_requests::admit;
use crate::session::{Ready, Session};

impl Session<Ready> {
    /// Sends `method` with `params` and follows `input_required` rounds until
    /// the result is complete or a task.
    pub(crate) async fn call_outcome<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &Map<String, Value>,
        options: RequestOptions,
    ) -> Result<RequestOutcome<T>, SessionError> {
        // Borrowed: each round builds its own body from it, and the params
        // (a tool's arguments) may be megabytes.
        self.with_expiry(method, || self.call_rounds(method, params, options.clone()))
            .await
    }

    async fn call_rounds<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &Map<String, Value>,
        options: RequestOptions,
    ) -> Result<RequestOutcome<T>, SessionError> {
        let method_arc: Arc<str> = Arc::from(method);
        let meta_arc = self.request_meta();
        let meta = meta_arc.as_deref();
        let mut rounds = Rounds::new(method, self.link.config.max_input_rounds);
        loop {
            let body = rounds.body(params);
            let editable = meta.is_some() || options.progress.is_some();
            let encoded = if editable {
                Params::Object(body)
            } else {
                Params::encode(&body, false)?
            };
            let raw = self
                .link
                .shared
                .call(
                    &method_arc,
                    encoded,
                    meta,
                    RequestOptions {
                        protocol_version: self.link.version_header(meta.is_some()),
                        ..options.clone()
                    },
                )
                .await?;
            match rounds.on_outcome(decode_outcome::<T>(method, &raw)?)? {
                RoundStep::Done(outcome) => return Ok(outcome),
                RoundStep::Ask(input) => {
                    let state = input.request_state.clone();
                    let responses = self.answer_inputs(method, input).await?;
                    rounds.answered(responses, state);
                }
            }
        }
    }

    /// Answers every input request with the host's handlers.
    async fn answer_inputs(
        &self,
        method: &str,
        input: InputRequiredResult,
    ) -> Result<Map<String, Value>, SessionError> {
        let mut responses = Map::new();
        // The same admission as a legacy server request: a declared feature,
        // in a declared mode.
        let offered = self.link.shared.offered();
        for (key, request) in input.input_requests.unwrap_or_default() {
            let asked = request.request.method().to_owned();
            let answer = match admit(&request.request, offered) {
                Ok(()) => {
                    self.link
                        .config
                        .handlers
                        .answer(request.request, Default::default())
                        .await
                }
                Err(refusal) => Err(refusal),
            };
            match answer {
                Ok(value) => {
                    responses.insert(key, value);
                }
                Err(error) => {
                    return Err(SessionError::InputNotProvided {
                        method: method.to_owned(),
                        asked,
                        code: error.code,
                    });
                }
            }
        }
        Ok(responses)
    }
}

/// Decodes a raw result into its outcome.
pub(crate) fn decode_outcome<T: DeserializeOwned>(
    method: &str,
    raw: &crate::protocol::RawResult,
) -> Result<RequestOutcome<T>, SessionError> {
    raw.decode(|bytes| RequestOutcome::from_slice(bytes))
        .map_err(|e| SessionError::BadResult {
            method: method.to_owned(),
            source: serde::de::Error::custom(format!("{e}")),
        })
}

/// A request whose answer may be `input_required` (2026-07-28):
/// `tools/call`, `prompts/get`, `resources/read`. Sealed: implemented for
/// [`CallTool`](mcp_types::requests::CallTool),
/// [`GetPrompt`](mcp_types::requests::GetPrompt) and
/// [`ReadResource`](mcp_types::requests::ReadResource) only.
pub trait RoundMethod: mcp_types::Request + sealed::Sealed {
    /// The request's own (complete) result.
    type Complete: DeserializeOwned;

    /// What the request names (the tool, the prompt, the URI), for the
    /// `Mcp-Name` header.
    fn target(params: &Self::Params) -> &str;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for mcp_types::requests::CallTool {}
    impl Sealed for mcp_types::requests::GetPrompt {}
    impl Sealed for mcp_types::requests::ReadResource {}
}

impl RoundMethod for mcp_types::requests::CallTool {
    type Complete = mcp_types::CallToolResult;

    fn target(params: &Self::Params) -> &str {
        &params.name
    }
}

impl RoundMethod for mcp_types::requests::GetPrompt {
    type Complete = mcp_types::GetPromptResult;

    fn target(params: &Self::Params) -> &str {
        &params.name
    }
}

impl RoundMethod for mcp_types::requests::ReadResource {
    type Complete = mcp_types::ReadResourceResult;

    fn target(params: &Self::Params) -> &str {
        &params.uri
    }
}

impl Session<Ready> {
    /// Sends ONE round of a 2026-07-28 request whose answer may be
    /// `input_required`, and returns the server's answer as it is, without
    /// following the rounds: the caller answers the `inputRequests` itself
    /// (or passes them on, as a gateway does) and sends the next round with
    /// `inputResponses` and the server's `requestState` in `params`.
    ///
    /// `params` are sent as given, with the session's per-request `_meta`
    /// keys added where `params._meta` does not set them: to declare other
    /// client capabilities for this request (what the server may ask in
    /// `inputRequests`), set
    /// `_meta["io.modelcontextprotocol/clientCapabilities"]` in `params`.
    /// The session's handlers are not asked, the round count is the
    /// caller's to bound, and a tool result's `structuredContent` is not
    /// validated. The automatic path ([`Session::call_tool`],
    /// [`Session::get_prompt`], [`Session::read_resource`]) stays the one
    /// that follows rounds.
    ///
    /// Legacy era (no rounds exist there): [`SessionError::Unsupported`]
    /// before anything is sent. A tool call's params longer than the
    /// session's `max_argument_bytes`: [`SessionError::ArgumentsTooLarge`].
    /// An `input_required` answer with neither `inputRequests` nor
    /// `requestState`: [`SessionError::BadResult`].
    pub async fn send_round<R: RoundMethod>(
        &self,
        params: &R::Params,
        options: &crate::CallOptions,
    ) -> Result<RequestOutcome<R::Complete>, SessionError> {
        if !self.is_modern() {
            return Err(SessionError::Unsupported {
                method: R::METHOD.to_owned(),
                feature: "input_required rounds outside the 2026-07-28 era",
            });
        }
        let body = match serde_json::to_value(params).map_err(SessionError::Params)? {
            Value::Object(map) => map,
            _ => {
                return Err(SessionError::Params(serde::ser::Error::custom(
                    "request params must be an object",
                )));
            }
        };
        let size = mcp_types::json_len(&body).unwrap_or(usize::MAX);
        let limit = self.link.config.max_argument_bytes;
        if size > limit {
            return Err(SessionError::ArgumentsTooLarge { size, limit });
        }
        let method_arc: Arc<str> = Arc::from(R::METHOD);
        let meta = self.request_meta();
        let headers = self.modern_headers(R::METHOD, R::target(params));
        let timing = self.call_timing(options);
        let raw = self
            .with_expiry(R::METHOD, || {
                self.link.shared.call(
                    &method_arc,
                    Params::Object(Cow::Borrowed(&body)),
                    meta.as_deref(),
                    RequestOptions {
                        protocol_version: self.link.version_header(true),
                        headers: headers.clone(),
                        ..options.request(timing)
                    },
                )
            })
            .await?;
        let outcome = decode_outcome::<R::Complete>(R::METHOD, &raw)?;
        if let RequestOutcome::InputRequired(input) = &outcome
            && input.input_requests.is_none()
            && input.request_state.is_none()
        {
            return Err(SessionError::BadResult {
                method: R::METHOD.to_owned(),
                source: serde::de::Error::custom(
                    "input_required result with neither inputRequests nor requestState",
                ),
            });
        }
        Ok(outcome)
    }
}

//! Requests whose result may be `input_required` (2026-07-28) or a task:
//! this pumps the rounds (each a new request; the host's handlers answer
//! the input requests), and `protocol/rounds.rs` decides what each round
//! sends and what each answer means (the echoed `requestState`, the round
//! limit).

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
                Ok(()) => self.link.config.handlers.answer(request.request).await,
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

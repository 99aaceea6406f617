//! The `input_required` rounds of one request (2026-07-28), as a state
//! machine without IO: what each round sends, and what each answer means.
//!
//! ```text
//!  round 0: params ──► complete | task ─────────────────────► done
//!               └────► input_required {inputRequests, requestState}
//!                        host answers each input request
//!  round n: params + inputResponses + requestState (echoed as given,
//!           never invented, never carried into a later round) ──► …
//!           at most `max_rounds` rounds after the first
//! ```
//!
//! The caller (`rounds.rs`) sends each round as a new request (a new id)
//! and asks the host's handlers; this decides everything else.

use std::borrow::Cow;

use mcp_types::{InputRequiredResult, RequestOutcome};
use serde_json::{Map, Value};

use crate::SessionError;

/// What an answer means for the request.
// The large variant is the common one (every call ends with it); boxing it
// would allocate on every call to save room on the rare path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum RoundStep<T> {
    /// Complete, or a task: the request is done.
    Done(RequestOutcome<T>),
    /// The server needs input: answer these requests, then
    /// [`Rounds::answered`] and send the next round.
    Ask(InputRequiredResult),
}

/// The rounds of one request.
#[derive(Debug)]
pub(crate) struct Rounds {
    method: &'static str,
    max_rounds: usize,
    /// Rounds sent so far.
    sent: usize,
    /// What the next round adds: the responses and the state to echo.
    next: Option<(Value, Option<String>)>,
}

impl Rounds {
    /// The rounds of a `method` request, at most `max_rounds` after the
    /// first.
    pub(crate) fn new(method: &'static str, max_rounds: usize) -> Self {
        Self {
            method,
            max_rounds,
            sent: 0,
            next: None,
        }
    }

    /// The body of the next round: `params`, plus the previous round's
    /// `inputResponses` and, when the server gave one, its `requestState`.
    pub(crate) fn body<'a>(
        &mut self,
        params: &'a Map<String, Value>,
    ) -> Cow<'a, Map<String, Value>> {
        self.sent += 1;
        // The first round sends the caller's params as they are (they may
        // hold megabytes of arguments); a later one adds its answers to a copy.
        let Some((responses, state)) = self.next.take() else {
            return Cow::Borrowed(params);
        };
        let mut body = params.clone();
        body.insert("inputResponses".to_owned(), responses);
        if let Some(state) = state {
            body.insert("requestState".to_owned(), Value::String(state));
        }
        Cow::Owned(body)
    }

    /// What the server's answer to the last round means.
    pub(crate) fn on_outcome<T>(
        &mut self,
        outcome: RequestOutcome<T>,
    ) -> Result<RoundStep<T>, SessionError> {
        let RequestOutcome::InputRequired(input) = outcome else {
            return Ok(RoundStep::Done(outcome));
        };
        if input.input_requests.is_none() && input.request_state.is_none() {
            return Err(SessionError::BadResult {
                method: self.method.to_owned(),
                source: serde::de::Error::custom(
                    "input_required result with neither inputRequests nor requestState",
                ),
            });
        }
        if self.sent > self.max_rounds {
            return Err(SessionError::TooManyRounds {
                method: self.method.to_owned(),
                limit: self.max_rounds,
            });
        }
        Ok(RoundStep::Ask(input))
    }

    /// The host's answers to the input requests of the last round (keyed as
    /// the server keyed them), and the state that round carried.
    pub(crate) fn answered(&mut self, responses: Map<String, Value>, state: Option<String>) {
        self.next = Some((Value::Object(responses), state));
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::CallToolResult;
    use serde_json::json;

    use super::*;

    fn outcome(v: Value) -> RequestOutcome<CallToolResult> {
        RequestOutcome::from_slice(&serde_json::to_vec(&v).unwrap()).unwrap()
    }

    fn input_required(state: Option<&str>) -> RequestOutcome<CallToolResult> {
        let mut v = json!({"resultType": "input_required",
            "inputRequests": {"ask": {"method": "roots/list", "params": {}}}});
        if let Some(state) = state {
            v["requestState"] = json!(state);
        }
        outcome(v)
    }

    fn params() -> Map<String, Value> {
        json!({"name": "t", "arguments": {"a": 1}})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_complete_answer_ends_the_first_round() {
        let mut rounds = Rounds::new("tools/call", 8);
        let first = params();
        assert!(matches!(rounds.body(&first), Cow::Borrowed(b) if *b == params()));
        let step = rounds.on_outcome(outcome(json!({"content": []}))).unwrap();
        assert!(matches!(step, RoundStep::Done(RequestOutcome::Complete(_))));
    }

    #[test]
    fn each_round_echoes_only_the_state_of_the_round_before() {
        let mut rounds = Rounds::new("tools/call", 8);
        rounds.body(&params());
        let RoundStep::Ask(input) = rounds.on_outcome(input_required(Some("s1"))).unwrap() else {
            panic!("not asked");
        };
        let answers = json!({"ask": {"roots": []}}).as_object().unwrap().clone();
        rounds.answered(answers.clone(), input.request_state);
        let base = params();
        let second = rounds.body(&base);
        assert_eq!(second["inputResponses"], Value::Object(answers.clone()));
        assert_eq!(second["requestState"], "s1");
        assert_eq!(second["name"], "t");
        // A round without state sends none: the old one is never reused.
        let RoundStep::Ask(input) = rounds.on_outcome(input_required(None)).unwrap() else {
            panic!("not asked");
        };
        rounds.answered(answers, input.request_state);
        let third = rounds.body(&base);
        assert!(third.contains_key("inputResponses"));
        assert!(!third.contains_key("requestState"), "{third:?}");
    }

    #[test]
    fn rounds_are_bounded_and_an_empty_request_for_input_is_refused() {
        let mut rounds = Rounds::new("tools/call", 2);
        for _ in 0..3 {
            rounds.body(&params());
            match rounds.on_outcome(input_required(Some("s"))) {
                Ok(RoundStep::Ask(_)) => rounds.answered(Map::new(), None),
                Err(SessionError::TooManyRounds { limit: 2, .. }) => {
                    assert_eq!(rounds.sent, 3, "the first and two more");
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(rounds.sent, 3);
        let mut rounds = Rounds::new("prompts/get", 8);
        rounds.body(&params());
        let empty = outcome(json!({"resultType": "input_required"}));
        assert!(matches!(
            rounds.on_outcome(empty),
            Err(SessionError::BadResult { .. })
        ));
    }
}

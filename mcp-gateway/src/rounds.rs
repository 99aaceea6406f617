//! `input_required` rounds for a 2026-07-28 host (SEP-2322), one at a time.
//!
//! A stateless host cannot be asked anything by server→client request, so
//! the gateway does not let the hub's session follow the rounds (as it does
//! for a legacy host, asking through the [`HostLink`](crate::HostLink)):
//!
//! ```text
//! host ── tools/call ──► gateway ── one round (hub, governed) ──► server
//!      ◄─ input_required ─┘  inputRequests as the server sent them,
//!         requestState: the GATEWAY's seal over {method, the name and
//!         arguments the host sent, server, the server's own name, the keys
//!         asked (and their methods), the server's requestState, round,
//!         expiry}
//! host ── retry (+ inputResponses, the seal) ──► gateway: seal checked,
//!         answers checked ──► the same server and tool, with the server's
//!         own requestState ──► …
//! ```
//!
//! The seal is HMAC-SHA256 under a key drawn at random once per process:
//! it survives nothing but this process, and no other gateway can forge it.
//! A retry takes the same governed path as a first call (authority,
//! approval hook, audit, limits: the hook sees every round, with the same
//! arguments) and may only go where the first round went. Refusals are
//! JSON-RPC errors with `data.kind` naming them: `-32602` for the host's
//! mistakes (a state that is not ours or not for this request, expired,
//! too long; `inputResponses` missing or of the wrong shape), `-32603` for
//! a server past a bound (too many input requests, too long a state, too
//! many rounds).
//!
//! The host's per-request client capabilities travel to the server (only
//! the members the gateway can pass on: `sampling`, `elicitation`,
//! `roots`), so a server that needs one the host did not declare answers
//! `-32021`, which reaches the host as that error (HTTP 400).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::{SecureRandom as _, SystemRandom};
use aws_lc_rs::{digest, hmac};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_hub::{CallOptions, HubError, RoundRoute, ToolRound};
use mcp_server::{HandlerResult, RequestContext};
use mcp_types::requests::{CallTool, GetPrompt, ReadResource};
use mcp_types::text::Untrusted;
use mcp_types::{
    CallToolParams, CallToolResult, ClientCapabilities, ElicitAction, ElicitFormParams,
    ElicitParams, ErrorObject, GetPromptParams, GetPromptResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponse, InputResponses, Meta, MissingRequiredClientCapabilityData,
    ReadResourceParams, ReadResourceResult, Request, RequestOutcome, RequestedSchema, ResultType,
    SchemaProperties, ServerRequestMessage, error_codes,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::approval::{Question, RoundApproval};
use crate::bridge::{self, Calling, RoundCall, Running};
use crate::handler::{GatewayHandler, call_failure, error_object, not_found, served_uris};
use crate::host::SERVER_META;

/// How long a sealed state is honoured after it was issued (a person may
/// be answering an elicitation meanwhile).
pub(crate) const STATE_TTL: Duration = Duration::from_secs(600);

/// The longest `requestState` a host may send back (the gateway's seals are
/// far shorter; a longer one is refused before it is decoded).
pub(crate) const MAX_STATE_BYTES: usize = 64 * 1024;

/// The longest `requestState` of a server the gateway carries in its seal.
pub(crate) const MAX_SERVER_STATE_BYTES: usize = 32 * 1024;

/// The most input requests one round of a server may ask.
pub(crate) const MAX_INPUT_REQUESTS: usize = 16;

/// The longest key of an input request.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// The most `inputResponses` a host may send with a retry the gateway did
/// not seal (no `requestState`: passed on for the server to judge).
pub(crate) const MAX_UNSEALED_RESPONSES: usize = 64;

/// States carrying a user's confirmation remembered as used (each until it
/// expires); past it, a confirmed round is refused by name.
pub(crate) const MAX_CONFIRMED: usize = 4096;

/// The version of the sealed payload.
const SEAL_VERSION: u64 = 1;

/// The most rounds after the first, as the session's own rounds are bounded
/// (`SessionConfig::max_input_rounds`).
fn max_rounds() -> usize {
    mcp_session::SessionConfig::default().max_input_rounds
}

/// A round the gateway refuses, named in `data.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The `requestState` is not a seal of this gateway (altered, foreign,
    /// from before a restart).
    StateInvalid,
    /// The seal is for another request (another method, name, arguments).
    StateForeign,
    /// The seal is past its lifetime.
    StateExpired,
    /// The `requestState` is longer than [`MAX_STATE_BYTES`].
    StateTooLarge,
    /// A retry with the gateway's state but no `inputResponses`.
    ResponsesMissing,
    /// An answer that is not what its request asks for.
    ResponseInvalid,
    /// More unsealed `inputResponses` than [`MAX_UNSEALED_RESPONSES`].
    TooManyResponses,
    /// The server asked more than [`MAX_INPUT_REQUESTS`] at once, or a key
    /// longer than [`MAX_KEY_BYTES`].
    TooManyInputRequests,
    /// The server's `requestState` is longer than [`MAX_SERVER_STATE_BYTES`].
    ServerStateTooLarge,
    /// More rounds than the bound.
    TooManyRounds,
    /// No key to seal with (the system gave no randomness).
    NoKey,
    /// The parked call a retry answers for is not waiting (answered
    /// already, past its time, or from before a restart).
    CallGone,
    /// A state that carries the user's confirmation was used already: one
    /// yes is one call.
    StateUsed,
    /// More confirmed states in use than [`MAX_CONFIRMED`].
    TooManyConfirmed,
}

impl Refusal {
    /// The stable name in `data.kind`.
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Refusal::StateInvalid => "request_state_invalid",
            Refusal::StateForeign => "request_state_foreign",
            Refusal::StateExpired => "request_state_expired",
            Refusal::StateTooLarge => "request_state_too_large",
            Refusal::ResponsesMissing => "input_responses_missing",
            Refusal::ResponseInvalid => "input_response_invalid",
            Refusal::TooManyResponses => "too_many_input_responses",
            Refusal::TooManyInputRequests => "too_many_input_requests",
            Refusal::ServerStateTooLarge => "server_request_state_too_large",
            Refusal::TooManyRounds => "too_many_rounds",
            Refusal::NoKey => "no_seal_key",
            Refusal::CallGone => "waiting_call_gone",
            Refusal::StateUsed => "request_state_used",
            Refusal::TooManyConfirmed => "too_many_confirmed_calls",
        }
    }

    fn message(self) -> String {
        match self {
            Refusal::StateInvalid => {
                "requestState was not issued by this gateway (or was altered)".to_owned()
            }
            Refusal::StateForeign => {
                "requestState was issued for another request (method, name or arguments)".to_owned()
            }
            Refusal::StateExpired => format!(
                "requestState expired ({} s after it was issued); start the request again",
                STATE_TTL.as_secs()
            ),
            Refusal::StateTooLarge => {
                format!("requestState is longer than {MAX_STATE_BYTES} bytes")
            }
            Refusal::ResponsesMissing => {
                "a retry with requestState needs inputResponses (an object)".to_owned()
            }
            Refusal::ResponseInvalid => "an inputResponses answer is not a result of the request \
                                          it answers"
                .to_owned(),
            Refusal::TooManyResponses => {
                format!("more than {MAX_UNSEALED_RESPONSES} inputResponses")
            }
            Refusal::TooManyInputRequests => format!(
                "the server asked for more than {MAX_INPUT_REQUESTS} inputs at once (or used a key \
                 longer than {MAX_KEY_BYTES} bytes)"
            ),
            Refusal::ServerStateTooLarge => {
                format!("the server's requestState is longer than {MAX_SERVER_STATE_BYTES} bytes")
            }
            Refusal::TooManyRounds => format!(
                "the server asked for input in more than {} rounds after the first",
                max_rounds()
            ),
            Refusal::NoKey => "the gateway has no key to seal a requestState with".to_owned(),
            Refusal::CallGone => "the call these answers are for is no longer waiting (answered \
                                  already, past its time, or the gateway restarted); start the \
                                  call again"
                .to_owned(),
            Refusal::StateUsed => "this requestState carries the user's confirmation and was \
                                   used already (one confirmation is one call); start the call \
                                   again"
                .to_owned(),
            Refusal::TooManyConfirmed => {
                format!("more than {MAX_CONFIRMED} confirmed calls are in progress at the gateway")
            }
        }
    }

    fn code(self) -> i64 {
        match self {
            Refusal::TooManyInputRequests
            | Refusal::ServerStateTooLarge
            | Refusal::TooManyRounds
            | Refusal::TooManyConfirmed
            | Refusal::NoKey => error_codes::INTERNAL_ERROR,
            _ => error_codes::INVALID_PARAMS,
        }
    }

    /// The JSON-RPC error the host gets; `key` names the answer at fault.
    pub(crate) fn error(self, key: Option<&str>) -> ErrorObject {
        let mut message = self.message();
        if let Some(key) = key {
            message.push_str(&format!(" (key `{}`)", Untrusted::new(key)));
        }
        let mut error = ErrorObject::new(self.code(), message);
        error.data = Some(json!({ "kind": self.kind() }));
        error
    }
}

/// The process's sealing key, drawn once.
fn key() -> Option<&'static hmac::Key> {
    static KEY: OnceLock<Option<hmac::Key>> = OnceLock::new();
    KEY.get_or_init(|| hmac::Key::generate(hmac::HMAC_SHA256, &SystemRandom::new()).ok())
        .as_ref()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The states carrying a confirmation that were used: a digest of each,
/// with its expiry.
fn used_states() -> &'static std::sync::Mutex<BTreeMap<[u8; 32], u64>> {
    static USED: OnceLock<std::sync::Mutex<BTreeMap<[u8; 32], u64>>> = OnceLock::new();
    USED.get_or_init(Default::default)
}

/// Spends a state that carries the user's confirmation: once only (a
/// replayed retry would run the confirmed call again without asking).
fn spend(state: &str, expires: u64) -> Result<(), Refusal> {
    spend_at(state, expires, now_secs())
}

fn spend_at(state: &str, expires: u64, now: u64) -> Result<(), Refusal> {
    let mut key = [0u8; 32];
    key.copy_from_slice(digest::digest(&digest::SHA256, state.as_bytes()).as_ref());
    let mut used = used_states()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    used.retain(|_, until| *until >= now);
    if used.contains_key(&key) {
        return Err(Refusal::StateUsed);
    }
    if used.len() >= MAX_CONFIRMED {
        return Err(Refusal::TooManyConfirmed);
    }
    used.insert(key, expires);
    Ok(())
}

/// What one request is, for the seal: the method, the name (tool, prompt,
/// URI) as the host sent it, and a digest of its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestKey {
    pub(crate) method: &'static str,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

impl RequestKey {
    pub(crate) fn new(method: &'static str, name: &str, arguments: &Value) -> Self {
        let mut canonical = Vec::new();
        write_canonical(arguments, &mut canonical);
        let digest = digest::digest(&digest::SHA256, &canonical);
        Self {
            method,
            name: name.to_owned(),
            arguments: URL_SAFE_NO_PAD.encode(digest.as_ref()),
        }
    }
}

/// JSON with object keys in order, so the same arguments hash alike however
/// the host ordered them.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(&Value::String(k.clone()), out);
                out.push(b':');
                write_canonical(&map[k], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        // Scalars: serde_json writes them one way only.
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// Where a call stands with the operator's confirmation
/// ([`crate::HostApproval`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Gate {
    /// Nothing asked (the call is not marked, or not yet known to be).
    #[default]
    Open,
    /// The gateway asked the host's user ([`CONFIRM_KEY`]); the retry
    /// carries the answer.
    Asked,
    /// The host's user accepted: every later round of the call goes ahead
    /// without asking again.
    Granted,
}

impl Gate {
    fn code(self) -> u64 {
        match self {
            Gate::Open => 0,
            Gate::Asked => 1,
            Gate::Granted => 2,
        }
    }

    fn from_code(code: Option<u64>) -> Option<Self> {
        match code {
            None | Some(0) => Some(Gate::Open),
            Some(1) => Some(Gate::Asked),
            Some(2) => Some(Gate::Granted),
            Some(_) => None,
        }
    }
}

/// The key of the gateway's own input request: the confirmation of a
/// marked call.
pub(crate) const CONFIRM_KEY: &str = "mcp-gateway/confirm";

/// What a seal holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sealed {
    pub(crate) request: RequestKey,
    /// The server the request went to.
    pub(crate) server: String,
    /// The tool, prompt or URI by the server's own name.
    pub(crate) local: String,
    /// The keys asked, with each request's method.
    pub(crate) asked: BTreeMap<String, String>,
    /// The server's own `requestState`.
    pub(crate) state: Option<String>,
    /// Rounds answered so far (1 after the first).
    pub(crate) round: usize,
    /// Seconds since the epoch after which the seal is refused.
    pub(crate) expires: u64,
    /// The operator's confirmation of the call.
    pub(crate) gate: Gate,
    /// The parked call (crate::bridge) the answers are for.
    pub(crate) parked: Option<u64>,
}

impl Sealed {
    /// The seal of the round after `round` of `request`, on `server`'s
    /// `local` (nothing asked yet, no server state, no confirmation, not
    /// parked), expiring [`STATE_TTL`] from now.
    fn after(request: &RequestKey, server: String, local: String, round: usize) -> Self {
        Sealed {
            request: request.clone(),
            server,
            local,
            asked: BTreeMap::new(),
            state: None,
            round: round + 1,
            expires: now_secs().saturating_add(STATE_TTL.as_secs()),
            gate: Gate::Open,
            parked: None,
        }
    }

    /// The host's `input_required` answer asking `requests`, with this
    /// seal (its keys and their methods taken from `requests`) as
    /// `requestState`.
    fn ask(mut self, requests: InputRequests) -> Result<InputRequiredResult, ErrorObject> {
        self.asked = requests
            .iter()
            .map(|(k, r)| (k.clone(), r.request.method().to_owned()))
            .collect();
        let state = self.seal().map_err(|r| r.error(None))?;
        Ok(InputRequiredResult {
            result_type: Some(ResultType::InputRequired),
            input_requests: Some(requests),
            request_state: Some(state),
            meta: None,
            ..Default::default()
        })
    }

    /// The seal as `payload.tag`, both base64url.
    pub(crate) fn seal(&self) -> Result<String, Refusal> {
        let key = key().ok_or(Refusal::NoKey)?;
        // Every seal is its own, even for the same request in the same
        // second (a confirmation's is spent once, by its text).
        let mut nonce = [0u8; 12];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| Refusal::NoKey)?;
        let payload = json!({
            "x": URL_SAFE_NO_PAD.encode(nonce),
            "v": SEAL_VERSION,
            "m": self.request.method,
            "n": self.request.name,
            "a": self.request.arguments,
            "s": self.server,
            "l": self.local,
            "k": self.asked,
            "r": self.state,
            "i": self.round,
            "e": self.expires,
            "g": self.gate.code(),
            "w": self.parked,
        })
        .to_string();
        let tag = hmac::sign(key, payload.as_bytes());
        Ok(format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload.as_bytes()),
            URL_SAFE_NO_PAD.encode(tag.as_ref())
        ))
    }

    /// Opens a seal a host sent back for `request`.
    pub(crate) fn open(text: &str, request: &RequestKey) -> Result<Self, Refusal> {
        Self::open_at(text, request, now_secs())
    }

    fn open_at(text: &str, request: &RequestKey, now: u64) -> Result<Self, Refusal> {
        if text.len() > MAX_STATE_BYTES {
            return Err(Refusal::StateTooLarge);
        }
        let key = key().ok_or(Refusal::NoKey)?;
        let (payload, tag) = text.split_once('.').ok_or(Refusal::StateInvalid)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| Refusal::StateInvalid)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| Refusal::StateInvalid)?;
        hmac::verify(key, &payload, &tag).map_err(|_| Refusal::StateInvalid)?;
        // Ours from here on: a payload the gateway wrote.
        let v: Value = serde_json::from_slice(&payload).map_err(|_| Refusal::StateInvalid)?;
        let text_of = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        if v.get("v").and_then(Value::as_u64) != Some(SEAL_VERSION) {
            return Err(Refusal::StateInvalid);
        }
        let sealed = Sealed {
            request: RequestKey {
                method: request.method,
                name: text_of("n").ok_or(Refusal::StateInvalid)?,
                arguments: text_of("a").ok_or(Refusal::StateInvalid)?,
            },
            server: text_of("s").ok_or(Refusal::StateInvalid)?,
            local: text_of("l").ok_or(Refusal::StateInvalid)?,
            asked: serde_json::from_value(v.get("k").cloned().unwrap_or(Value::Null))
                .map_err(|_| Refusal::StateInvalid)?,
            state: text_of("r"),
            round: v
                .get("i")
                .and_then(Value::as_u64)
                .ok_or(Refusal::StateInvalid)? as usize,
            expires: v
                .get("e")
                .and_then(Value::as_u64)
                .ok_or(Refusal::StateInvalid)?,
            gate: Gate::from_code(v.get("g").and_then(Value::as_u64))
                .ok_or(Refusal::StateInvalid)?,
            parked: v.get("w").and_then(Value::as_u64),
        };
        if text_of("m").as_deref() != Some(request.method) || sealed.request != *request {
            return Err(Refusal::StateForeign);
        }
        if now > sealed.expires {
            return Err(Refusal::StateExpired);
        }
        Ok(sealed)
    }
}

/// What a host's round is.
#[derive(Debug)]
pub(crate) enum Retry {
    /// A first round (no state, no answers).
    First,
    /// Answers without a state of ours: passed on for the server to judge
    /// (a server may need no state), each checked to be an object.
    Unsealed(InputResponses),
    /// A retry of a round the gateway sealed: the answers to its keys.
    Sealed(Box<Sealed>, InputResponses),
}

/// Reads and checks a host's round: its state (when given) must be our seal
/// for this request, unexpired; its answers must answer what was asked
/// (answers to keys not asked are dropped; keys not answered are left to
/// the server, which asks again).
pub(crate) fn check_retry(
    request: &RequestKey,
    state: Option<&str>,
    responses: Option<InputResponses>,
) -> Result<Retry, ErrorObject> {
    match (state, responses) {
        (None, None) => Ok(Retry::First),
        (None, Some(responses)) => {
            check_unsealed(&responses)?;
            Ok(Retry::Unsealed(responses))
        }
        (Some(state), responses) => {
            let sealed = Sealed::open(state, request).map_err(|r| r.error(None))?;
            let responses = responses.ok_or_else(|| Refusal::ResponsesMissing.error(None))?;
            let mut kept = InputResponses::new();
            for (key, answer) in responses {
                let Some(method) = sealed.asked.get(&key) else {
                    continue;
                };
                if !answers(method, &answer) {
                    return Err(Refusal::ResponseInvalid.error(Some(&key)));
                }
                kept.insert(key, answer);
            }
            Ok(Retry::Sealed(Box::new(sealed), kept))
        }
    }
}

/// Answers the gateway cannot hold against a request of its own (none was
/// sealed: they are passed on for the server to judge): at most
/// [`MAX_UNSEALED_RESPONSES`], each an object.
pub(crate) fn check_unsealed(responses: &InputResponses) -> Result<(), ErrorObject> {
    if responses.len() > MAX_UNSEALED_RESPONSES {
        return Err(Refusal::TooManyResponses.error(None));
    }
    for (key, answer) in responses {
        if let InputResponse::Unknown(v) = answer
            && !v.is_object()
        {
            return Err(Refusal::ResponseInvalid.error(Some(key)));
        }
    }
    Ok(())
}

/// Whether `answer` is a result of a `method` request.
fn answers(method: &str, answer: &InputResponse) -> bool {
    match (method, answer) {
        ("elicitation/create", InputResponse::Elicit(_))
        | ("sampling/createMessage", InputResponse::CreateMessage(_))
        | ("roots/list", InputResponse::ListRoots(_)) => true,
        ("elicitation/create" | "sampling/createMessage" | "roots/list", _) => false,
        (_, InputResponse::Unknown(v)) => v.is_object(),
        _ => true,
    }
}

/// The server's `input_required` answer as the host gets it: the same
/// `inputRequests`, the gateway's seal as `requestState`.
pub(crate) fn reseal(
    request: &RequestKey,
    server: &str,
    local: &str,
    round: usize,
    gate: Gate,
    input: InputRequiredResult,
) -> Result<InputRequiredResult, ErrorObject> {
    if round >= max_rounds() {
        return Err(Refusal::TooManyRounds.error(None));
    }
    let requests = input.input_requests.unwrap_or_default();
    if requests.len() > MAX_INPUT_REQUESTS || requests.keys().any(|k| k.len() > MAX_KEY_BYTES) {
        return Err(Refusal::TooManyInputRequests.error(None));
    }
    if input
        .request_state
        .as_ref()
        .is_some_and(|s| s.len() > MAX_SERVER_STATE_BYTES)
    {
        return Err(Refusal::ServerStateTooLarge.error(None));
    }
    Sealed {
        state: input.request_state,
        gate,
        ..Sealed::after(request, server.to_owned(), local.to_owned(), round)
    }
    .ask(requests)
}

/// The host's client capabilities the gateway can pass on (it hands the
/// server's `inputRequests` to the host as they are): `sampling`,
/// `elicitation`, `roots`, and the tasks extension (whose tasks it
/// forwards, `tasks.rs`); nothing else (no other extension, no 2025-11-25
/// `tasks`).
pub(crate) fn passed_capabilities(host: &ClientCapabilities) -> ClientCapabilities {
    let mut passed = ClientCapabilities {
        sampling: host.sampling.clone(),
        elicitation: host.elicitation.clone(),
        roots: host.roots.clone(),
        ..Default::default()
    };
    if crate::tasks::host_takes_tasks(host) {
        passed.add_extension(mcp_types::TASKS_EXTENSION);
    }
    passed
}

/// The `_meta` the downstream request carries: the capabilities passed on.
fn downstream_meta(ctx: &RequestContext) -> Option<Meta> {
    let mut meta = Meta::new();
    meta.set_client_capabilities(&passed_capabilities(ctx.client_capabilities()))
        .ok()?;
    Some(meta)
}

/// A server's `-32021` as the host gets it: the code, our words, and the
/// capabilities it named (re-encoded, nothing else of the server's data).
fn missing_capability(error: &HubError) -> Option<ErrorObject> {
    let HubError::Session { error: session, .. } = error else {
        return None;
    };
    let server = session.error_object()?;
    if server.code != error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY {
        return None;
    }
    let mut object = ErrorObject::new(
        error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "{error}; the server said: {}",
            Untrusted::new(&server.message)
        ),
    );
    let required = server
        .data
        .and_then(|d| serde_json::from_value::<MissingRequiredClientCapabilityData>(d).ok())
        .map(|d| passed_capabilities(&d.required_capabilities));
    if let Some(required) = required {
        object.data = serde_json::to_value(MissingRequiredClientCapabilityData {
            required_capabilities: required,
        })
        .ok();
    }
    Some(object)
}

/// How a round's call came back: ended, or parked with the questions its
/// server asked the host.
enum Driven {
    Done(Box<Result<ToolRound, HubError>>),
    Parked(InputRequiredResult),
}

/// Whether the host's user accepted the gateway's confirmation question.
fn confirmed(responses: &InputResponses) -> bool {
    matches!(
        responses.get(CONFIRM_KEY),
        Some(InputResponse::Elicit(answer)) if answer.action == ElicitAction::Accept
    )
}

/// The round that asks a 2026-07-28 host's user to confirm a marked call
/// (the hook noted `question` and denied the call): one form elicitation
/// with no fields, under [`CONFIRM_KEY`], sealed with the route it is
/// about. A host that declared no form elicitation cannot be asked: its
/// call is refused with `-32021`, naming what it lacks.
fn confirm_round(
    request: &RequestKey,
    round: usize,
    question: Question,
    ctx: &RequestContext,
) -> HandlerResult<InputRequiredResult> {
    if ctx.client_capabilities().elicitation.is_none() {
        let mut error = ErrorObject::new(
            error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "the call of `{}` on server `{}` needs the user's confirmation, asked by \
                 elicitation, which this request's client capabilities do not declare",
                Untrusted::new(&question.tool),
                Untrusted::new(&question.server),
            ),
        );
        let required = ClientCapabilities {
            elicitation: serde_json::from_value(json!({"form": {}})).ok(),
            ..Default::default()
        };
        error.data = serde_json::to_value(MissingRequiredClientCapabilityData {
            required_capabilities: required,
        })
        .ok();
        return Err(error);
    }
    if round >= max_rounds() {
        return Err(Refusal::TooManyRounds.error(None));
    }
    let mut meta = Meta::new();
    meta.insert(SERVER_META, Value::from(question.server.as_str()));
    let ask = ElicitParams::Form(ElicitFormParams {
        message: question.message,
        requested_schema: RequestedSchema {
            properties: SchemaProperties::default(),
            ..RequestedSchema::default()
        },
        meta: Some(meta),
        ..ElicitFormParams::default()
    });
    let requests = InputRequests::from([(
        CONFIRM_KEY.to_owned(),
        InputRequest::from(ServerRequestMessage::Elicit(ask)),
    )]);
    Sealed {
        gate: Gate::Asked,
        ..Sealed::after(request, question.server, question.tool, round)
    }
    .ask(requests)
}

/// The answers and the server's state a round sends on, and the round's
/// number and pinned target.
struct Next {
    responses: Option<InputResponses>,
    state: Option<String>,
    round: usize,
    pinned: Option<(String, String)>,
}

fn next(retry: Retry) -> Next {
    match retry {
        Retry::First => Next {
            responses: None,
            state: None,
            round: 0,
            pinned: None,
        },
        Retry::Unsealed(responses) => Next {
            responses: Some(responses),
            state: None,
            round: 0,
            pinned: None,
        },
        Retry::Sealed(sealed, responses) => Next {
            responses: Some(responses),
            state: sealed.state,
            round: sealed.round,
            pinned: Some((sealed.server, sealed.local)),
        },
    }
}

/// A host's request it cancelled while the gateway worked on it (the
/// answer goes nowhere; dropping the work cancels it downstream).
pub(crate) fn cancelled() -> ErrorObject {
    ErrorObject::new(error_codes::INTERNAL_ERROR, "cancelled")
}

impl GatewayHandler {
    /// A 2026-07-28 host's `tools/call`: one round; see the module docs
    /// (and crate::bridge for a call that parked for the host's answers).
    pub(crate) async fn call_tool_round(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> HandlerResult<RequestOutcome<CallToolResult>> {
        let arguments = params.arguments.clone().unwrap_or_default();
        let request = RequestKey::new(
            CallTool::METHOD,
            &params.name,
            &Value::Object(arguments.clone()),
        );
        let retry = check_retry(
            &request,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        if let (Retry::Sealed(sealed, _), Some(state)) = (&retry, params.request_state.as_deref())
            && sealed.gate != Gate::Open
        {
            spend(state, sealed.expires).map_err(|r| r.error(None))?;
        }
        let (gate, next, parked) = match retry {
            Retry::Sealed(sealed, responses) if sealed.parked.is_some() => {
                // Answers for a call parked on its server's requests: they
                // go to the server, and the call goes on where it stopped.
                let number = sealed.parked.unwrap_or_default();
                let (taken, expired) = self.link.parking().unpark(number);
                drop(expired);
                let (mut running, waiting) = taken.ok_or_else(|| Refusal::CallGone.error(None))?;
                // The call is this retry's now (before the server is
                // answered: its next request may follow at once).
                running.follow(&self.link, self.host, ctx.id().clone());
                bridge::answer(waiting, responses);
                let next = Next {
                    responses: None,
                    state: None,
                    round: sealed.round,
                    pinned: Some((sealed.server, sealed.local)),
                };
                (sealed.gate, next, Some(running))
            }
            Retry::Sealed(sealed, responses) if sealed.gate == Gate::Asked => {
                // The answer to the gateway's own question: the call's first
                // round proper, on the route the question was about.
                if !confirmed(&responses) {
                    let refused = HubError::NotApproved {
                        server: mcp_hub::ServerName::new(&sealed.server)
                            .map_err(|e| error_object(&e))?,
                        tool: sealed.local,
                    };
                    return call_failure(&refused).map(RequestOutcome::Complete);
                }
                let next = Next {
                    responses: None,
                    state: None,
                    round: sealed.round,
                    pinned: Some((sealed.server, sealed.local)),
                };
                (Gate::Granted, next, None)
            }
            retry => {
                let gate = match &retry {
                    Retry::Sealed(sealed, _) => sealed.gate,
                    _ => Gate::Open,
                };
                (gate, next(retry), None)
            }
        };
        let (running, approval, hint) = match parked {
            Some(running) => {
                let hint = next.pinned.clone().unwrap_or_default();
                (running, None, hint)
            }
            None => {
                let (running, approval, hint) =
                    self.start_call(params.name, arguments, &next, gate, &ctx);
                (running, Some(approval), hint)
            }
        };
        let round = match self
            .drive(running, &request, next.round, gate, &hint, &ctx)
            .await?
        {
            Driven::Done(round) => *round,
            Driven::Parked(input) => return Ok(RequestOutcome::InputRequired(input)),
        };
        let round = match round {
            Ok(round) => round,
            Err(error) => {
                if let Some(object) = missing_capability(&error) {
                    return Err(object);
                }
                if let (HubError::NotApproved { .. }, Some(question)) =
                    (&error, approval.as_ref().and_then(|a| a.question()))
                {
                    return confirm_round(&request, next.round, question, &ctx)
                        .map(RequestOutcome::InputRequired);
                }
                if matches!(error, HubError::RoundRouteChanged { .. }) {
                    return Err(error_object(&error));
                }
                return call_failure(&error).map(RequestOutcome::Complete);
            }
        };
        match round.outcome {
            RequestOutcome::Complete(mut result) => {
                served_uris(&round.route.server, &mut result.content);
                Ok(RequestOutcome::Complete(result))
            }
            RequestOutcome::InputRequired(input) => reseal(
                &request,
                &round.route.server,
                &round.route.tool,
                next.round,
                gate,
                input,
            )
            .map(RequestOutcome::InputRequired),
            // Only when the host declared the tasks extension (passed on).
            RequestOutcome::Task(created) => {
                crate::tasks::created(&round.route.server, created).map(RequestOutcome::Task)
            }
            _ => Err(ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                "the server answered with a task, which the gateway did not ask for",
            )),
        }
    }

    /// Starts one round's call through the hub: owned (it may park), in
    /// the round's approval scope, recorded in the link with a bridge for
    /// its server's requests. Gives the call, its approval state and the
    /// route a parked seal names (the server it resolves to now, and the
    /// name as the host sent it; a parked call is resumed, never routed
    /// again).
    fn start_call(
        &self,
        name: String,
        arguments: serde_json::Map<String, Value>,
        next: &Next,
        gate: Gate,
        ctx: &RequestContext,
    ) -> (Running, Arc<RoundApproval>, (String, String)) {
        let approval = RoundApproval::new(match gate {
            Gate::Granted => next.pinned.clone(),
            _ => None,
        });
        let options = crate::handler::call_options(ctx);
        let pinned = next.pinned.clone().map(|(s, l)| RoundRoute::new(s, l));
        let server = match &pinned {
            Some(route) => Some(route.server.clone()),
            None => self
                .hub
                .namespace()
                .resolve(&name)
                .ok()
                .map(|t| t.server().to_string()),
        };
        let hint = (server.clone().unwrap_or_default(), name.clone());
        let downstream = CallToolParams {
            name,
            arguments: Some(arguments),
            input_responses: next.responses.clone(),
            request_state: next.state.clone(),
            meta: downstream_meta(ctx),
            ..Default::default()
        };
        let (bridge, asks) = mpsc::channel(bridge::BRIDGE_QUEUE);
        // While it runs, the server's requests come to this round.
        let calling = server.map(|server| Calling {
            _guard: self
                .link
                .calling_bridged(self.host, &server, ctx.id().clone(), bridge.clone()),
            server,
            bridge,
        });
        let hub = Arc::clone(&self.hub);
        let scope = Arc::clone(&approval);
        let call: RoundCall = Box::pin(async move {
            scope
                .scope(hub.call_tool_round(downstream, &options, pinned.as_ref()))
                .await
        });
        let running = Running {
            call,
            asks,
            calling,
        };
        (running, approval, hint)
    }

    /// Runs a round's call until it ends, or until its server asks the host
    /// something (then the call parks and the host gets the question).
    async fn drive(
        &self,
        mut running: Running,
        request: &RequestKey,
        round: usize,
        gate: Gate,
        hint: &(String, String),
        ctx: &RequestContext,
    ) -> HandlerResult<Driven> {
        loop {
            let first = tokio::select! {
                done = running.call.as_mut() => return Ok(Driven::Done(Box::new(done))),
                Some(first) = running.asks.recv() => first,
                // Dropping the call cancels it downstream.
                () = ctx.cancelled() => return Err(cancelled()),
            };
            let mut asks = vec![first];
            while asks.len() < MAX_INPUT_REQUESTS {
                match running.asks.try_recv() {
                    Ok(more) => asks.push(more),
                    Err(_) => break,
                }
            }
            let (requests, waiting) = bridge::ask_host(asks, ctx.client_capabilities());
            if requests.is_empty() {
                continue;
            }
            if round >= max_rounds() {
                bridge::refuse(waiting, &Refusal::TooManyRounds.message());
                continue;
            }
            let (parked, expired) = self.link.parking().park(running, waiting);
            drop(expired);
            let number = match parked {
                Ok(number) => number,
                Err((back, waiting)) => {
                    bridge::refuse(
                        waiting,
                        "too many calls are waiting for their hosts' answers at the gateway",
                    );
                    running = back;
                    continue;
                }
            };
            // Without a seal the parked call cannot be found again: it is
            // dropped at its time (cancelled downstream).
            let sealed = Sealed {
                gate,
                parked: Some(number),
                ..Sealed::after(request, hint.0.clone(), hint.1.clone(), round)
            };
            return sealed.ask(requests).map(Driven::Parked);
        }
    }

    /// A 2026-07-28 host's `prompts/get`: one round; see the module docs.
    pub(crate) async fn get_prompt_round(
        &self,
        params: GetPromptParams,
        ctx: RequestContext,
    ) -> HandlerResult<RequestOutcome<GetPromptResult>> {
        let arguments = serde_json::to_value(params.arguments.clone().unwrap_or_default())
            .unwrap_or(Value::Null);
        let request = RequestKey::new(GetPrompt::METHOD, &params.name, &arguments);
        let next = next(check_retry(
            &request,
            params.request_state.as_deref(),
            params.input_responses,
        )?);
        let (server, name) = match next.pinned {
            Some(pinned) => pinned,
            None => self.prompt_owner(&params.name).await?,
        };
        let downstream = GetPromptParams {
            name: name.clone(),
            arguments: params.arguments,
            input_responses: next.responses,
            request_state: next.state,
            meta: downstream_meta(&ctx),
            ..Default::default()
        };
        let options = CallOptions::new();
        let call = self.hub.get_prompt_round(&server, downstream, &options);
        let outcome = tokio::select! {
            outcome = call => outcome,
            () = ctx.cancelled() => return Err(cancelled()),
        };
        match outcome {
            Ok(RequestOutcome::InputRequired(input)) => {
                reseal(&request, &server, &name, next.round, Gate::Open, input)
                    .map(RequestOutcome::InputRequired)
            }
            Ok(RequestOutcome::Complete(result)) => Ok(RequestOutcome::Complete(result)),
            Ok(_) => Err(ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                "the server answered with a task, which the gateway did not ask for",
            )),
            Err(error) => Err(missing_capability(&error).unwrap_or_else(|| error_object(&error))),
        }
    }

    /// A 2026-07-28 host's `resources/read`: one round; see the module docs.
    pub(crate) async fn read_resource_round(
        &self,
        params: ReadResourceParams,
        ctx: RequestContext,
    ) -> HandlerResult<RequestOutcome<ReadResourceResult>> {
        let request = RequestKey::new(ReadResource::METHOD, &params.uri, &Value::Null);
        let next = next(check_retry(
            &request,
            params.request_state.as_deref(),
            params.input_responses,
        )?);
        let (server, uri) = match next.pinned {
            Some(pinned) => pinned,
            None => self
                .resource_owner(&params.uri)
                .await?
                .ok_or_else(|| not_found(&params.uri, ctx.protocol_version()))?,
        };
        let downstream = ReadResourceParams {
            uri: uri.clone(),
            input_responses: next.responses,
            request_state: next.state,
            meta: downstream_meta(&ctx),
            ..Default::default()
        };
        let options = CallOptions::new();
        let call = self.hub.read_resource_round(&server, downstream, &options);
        let outcome = tokio::select! {
            outcome = call => outcome,
            () = ctx.cancelled() => return Err(cancelled()),
        };
        match outcome {
            Ok(RequestOutcome::InputRequired(input)) => {
                reseal(&request, &server, &uri, next.round, Gate::Open, input)
                    .map(RequestOutcome::InputRequired)
            }
            Ok(RequestOutcome::Complete(mut result)) => {
                crate::handler::served_contents(&server, &mut result.contents);
                Ok(RequestOutcome::Complete(result))
            }
            Ok(_) => Err(ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                "the server answered with a task, which the gateway did not ask for",
            )),
            Err(error) => Err(missing_capability(&error).unwrap_or_else(|| error_object(&error))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(name: &str, args: Value) -> RequestKey {
        RequestKey::new(CallTool::METHOD, name, &args)
    }

    fn sealed(request: &RequestKey) -> Sealed {
        Sealed {
            request: request.clone(),
            server: "alpha".into(),
            local: "ask".into(),
            asked: BTreeMap::from([("name".to_owned(), "elicitation/create".to_owned())]),
            state: Some("inner".into()),
            round: 1,
            expires: now_secs() + 60,
            gate: Gate::Open,
            parked: None,
        }
    }

    #[test]
    fn a_seal_opens_for_its_request_only() {
        let request = key_of("alpha/ask", json!({"a": 1, "b": [1, {"y": 2, "x": 1}]}));
        // One seal, compared with itself (two calls of `sealed` may fall on
        // either side of a second and differ in `expires`).
        let seal = sealed(&request);
        let text = seal.seal().unwrap();
        assert_eq!(Sealed::open(&text, &request).unwrap(), seal);
        // The same arguments in another order are the same request.
        let reordered = key_of("alpha/ask", json!({"b": [1, {"x": 1, "y": 2}], "a": 1}));
        assert!(Sealed::open(&text, &reordered).is_ok());
        let other_args = key_of("alpha/ask", json!({"a": 2, "b": []}));
        assert_eq!(Sealed::open(&text, &other_args), Err(Refusal::StateForeign));
        let other_tool = key_of("alpha/other", json!({"a": 1}));
        assert_eq!(Sealed::open(&text, &other_tool), Err(Refusal::StateForeign));
        let other_method = RequestKey::new(GetPrompt::METHOD, "alpha/ask", &json!({}));
        assert_eq!(
            Sealed::open(&text, &other_method),
            Err(Refusal::StateForeign)
        );
    }

    #[test]
    fn an_altered_expired_or_oversized_state_is_refused() {
        let request = key_of("t", json!({}));
        let text = sealed(&request).seal().unwrap();
        assert_eq!(
            Sealed::open(&format!("{text}-TAMPERED"), &request),
            Err(Refusal::StateInvalid)
        );
        let (payload, tag) = text.split_once('.').unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(payload).unwrap();
        let at = bytes.iter().position(|&b| b == b'a').unwrap();
        bytes[at] = b'b';
        let forged = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(Sealed::open(&forged, &request), Err(Refusal::StateInvalid));
        assert_eq!(
            Sealed::open("not a seal", &request),
            Err(Refusal::StateInvalid)
        );
        let later = now_secs() + 61;
        assert_eq!(
            Sealed::open_at(&text, &request, later),
            Err(Refusal::StateExpired)
        );
        let long = "a".repeat(MAX_STATE_BYTES + 1);
        assert_eq!(Sealed::open(&long, &request), Err(Refusal::StateTooLarge));
    }

    #[test]
    fn answers_must_fit_what_was_asked_and_extras_are_dropped() {
        let request = key_of("t", json!({}));
        let text = sealed(&request).seal().unwrap();
        let responses: InputResponses = serde_json::from_value(json!({
            "name": {"action": "accept", "content": {"name": "A"}},
            "extra": {"action": "accept"}
        }))
        .unwrap();
        let Retry::Sealed(opened, kept) =
            check_retry(&request, Some(&text), Some(responses)).unwrap()
        else {
            panic!("not sealed");
        };
        assert_eq!(opened.state.as_deref(), Some("inner"));
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["name"]);
        let wrong: InputResponses = serde_json::from_value(json!({"name": {"roots": []}})).unwrap();
        let error = check_retry(&request, Some(&text), Some(wrong)).unwrap_err();
        assert_eq!(error.code, error_codes::INVALID_PARAMS);
        assert_eq!(error.data.unwrap()["kind"], "input_response_invalid");
        let error = check_retry(&request, Some(&text), None).unwrap_err();
        assert_eq!(error.data.unwrap()["kind"], "input_responses_missing");
        let number: InputResponses = serde_json::from_value(json!({"name": 12345})).unwrap();
        let error = check_retry(&request, None, Some(number)).unwrap_err();
        assert_eq!(error.data.unwrap()["kind"], "input_response_invalid");
    }

    #[test]
    fn a_state_carrying_a_confirmation_is_spent_once() {
        let now = now_secs();
        let state = format!("state-{now}-{}", line!());
        assert_eq!(spend_at(&state, now + 60, now), Ok(()));
        assert_eq!(spend_at(&state, now + 60, now), Err(Refusal::StateUsed));
        // Forgotten once expired (the seal itself is refused then).
        assert_eq!(spend_at(&state, now + 200, now + 61), Ok(()));
    }

    #[test]
    fn a_server_past_a_bound_is_refused_by_name() {
        let request = key_of("t", json!({}));
        let mut requests = serde_json::Map::new();
        for i in 0..=MAX_INPUT_REQUESTS {
            requests.insert(format!("k{i}"), json!({"method": "roots/list"}));
        }
        let many: InputRequiredResult = serde_json::from_value(
            json!({"resultType": "input_required", "inputRequests": requests}),
        )
        .unwrap();
        let error = reseal(&request, "s", "t", 0, Gate::Open, many).unwrap_err();
        assert_eq!(error.data.unwrap()["kind"], "too_many_input_requests");
        let one: InputRequiredResult = serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": {"r": {"method": "roots/list"}},
            "requestState": "x".repeat(MAX_SERVER_STATE_BYTES + 1)
        }))
        .unwrap();
        let error = reseal(&request, "s", "t", 0, Gate::Open, one.clone()).unwrap_err();
        assert_eq!(
            error.data.unwrap()["kind"],
            "server_request_state_too_large"
        );
        let mut small = one;
        small.request_state = Some("s1".into());
        let error =
            reseal(&request, "s", "t", max_rounds(), Gate::Open, small.clone()).unwrap_err();
        assert_eq!(error.data.unwrap()["kind"], "too_many_rounds");
        let resealed = reseal(&request, "s", "t", max_rounds() - 1, Gate::Granted, small).unwrap();
        let opened = Sealed::open(resealed.request_state.as_deref().unwrap(), &request).unwrap();
        assert_eq!(opened.state.as_deref(), Some("s1"));
        assert_eq!(opened.asked["r"], "roots/list");
        assert_eq!(opened.round, max_rounds());
        assert_eq!(opened.gate, Gate::Granted);
    }
}

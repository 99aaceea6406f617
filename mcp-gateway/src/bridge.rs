//! A server's requests during a 2026-07-28 host's tool call, carried as
//! that host's `input_required` rounds.
//!
//! A 2026-07-28 host cannot be sent a request, yet a legacy-era server
//! asks by request (sampling, elicitation) in the middle of a call that the
//! hub's session is still waiting on. So the round's call registers a
//! bridge with the [`HostLink`](crate::HostLink): the server's request
//! attributed to the call comes to the round instead of the host, and the
//! round stops there, answering the host `input_required` with the
//! request(s) and a sealed state naming the call, which waits *parked*:
//!
//! ```text
//! host ── tools/call ──► round ── hub call (legacy server) ──► server
//!                          ◄── bridge ◄─ sampling/createMessage ─┘
//!      ◄─ input_required {mcp-gateway/ask-1: the request}, seal{parked: n}
//!         (the call, its bridge and the answer slot park under n)
//! host ── retry (+ inputResponses, the seal) ──► round: unpark n, the
//!         answer goes to the server, the call goes on ──► complete
//! ```
//!
//! Bounds: [`MAX_PARKED`] calls wait at once (past it, the server's
//! request is refused and the call goes on); a parked call waits at most
//! the seal's lifetime, then it is dropped (cancelled downstream, its
//! server's request refused). A seal unparks its call once: a replay finds
//! nothing. Only what the host declared in the request's capabilities is
//! asked; anything else is refused to the server by name.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use mcp_hub::{HubError, ToolRound};
use mcp_session::HandlerError;
use mcp_types::{
    ClientCapabilities, ElicitParams, InputRequest, InputRequests, InputResponse, RequestId,
    ServerRequestMessage,
};
use tokio::sync::{mpsc, oneshot};

use crate::HostLink;
use crate::host::CallGuard;
use crate::rounds::{MAX_INPUT_REQUESTS, STATE_TTL};

/// The most calls waiting for their hosts' answers at once.
pub(crate) const MAX_PARKED: usize = 64;

/// Server requests queued for one call before the next waits to be queued.
pub(crate) const BRIDGE_QUEUE: usize = MAX_INPUT_REQUESTS;

/// The key prefix of a server request put to the host in a round.
pub(crate) const ASK_KEY: &str = "mcp-gateway/ask-";

/// The answer slot of one server request.
pub(crate) type Reply = oneshot::Sender<Result<InputResponse, HandlerError>>;

/// Each asked key's answer slot.
pub(crate) type Waiting = BTreeMap<String, Reply>;

/// A call stopped for its host's answers, and the answer slots.
pub(crate) type Stopped = (Running, Waiting);

/// A server's request for the call's host, and where its answer goes.
pub(crate) struct Bridged {
    pub(crate) request: ServerRequestMessage,
    pub(crate) reply: Reply,
}

/// The hub's call of one round, owned (it outlives the host's request that
/// started it while parked).
pub(crate) type RoundCall = Pin<Box<dyn Future<Output = Result<ToolRound, HubError>> + Send>>;

/// A call in progress with the server requests that come to it.
pub(crate) struct Running {
    pub(crate) call: RoundCall,
    pub(crate) asks: mpsc::Receiver<Bridged>,
    /// The call's record in the link (attribution of its server's
    /// requests), when its server is known.
    pub(crate) calling: Option<Calling>,
}

/// A call's record in the link, and what it takes to make it again.
pub(crate) struct Calling {
    pub(crate) server: String,
    pub(crate) bridge: mpsc::Sender<Bridged>,
    pub(crate) _guard: CallGuard,
}

impl Running {
    /// The call is now the host's request `id` on host connection `host`
    /// (a retry is a request of its own, over HTTP on a connection of its
    /// own, and the one that started the call may be gone): its server's
    /// requests are attributed there from now on.
    pub(crate) fn follow(&mut self, link: &HostLink, host: u64, id: RequestId) {
        if let Some(calling) = self.calling.take() {
            let guard = link.calling_bridged(host, &calling.server, id, calling.bridge.clone());
            self.calling = Some(Calling {
                _guard: guard,
                ..calling
            });
        }
    }
}

/// A call waiting for its host's answers.
struct Parked {
    running: Running,
    /// Each asked key's answer slot.
    waiting: BTreeMap<String, Reply>,
    expires: Instant,
}

/// The parked calls, by number.
#[derive(Default)]
pub(crate) struct Parking {
    next: u64,
    parked: HashMap<u64, Parked>,
}

impl std::fmt::Debug for Parking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parking")
            .field("parked", &self.parked.len())
            .finish()
    }
}

impl Parking {
    /// Parks `running` until its host answers `waiting`: its number, or
    /// everything back when [`MAX_PARKED`] calls already wait. The calls
    /// past their time are dropped here (returned, to be dropped outside
    /// the lock).
    pub(crate) fn park(
        &mut self,
        running: Running,
        waiting: BTreeMap<String, Reply>,
    ) -> (Result<u64, Stopped>, Vec<Running>) {
        self.park_at(running, waiting, Instant::now())
    }

    fn park_at(
        &mut self,
        running: Running,
        waiting: BTreeMap<String, Reply>,
        now: Instant,
    ) -> (Result<u64, Stopped>, Vec<Running>) {
        let expired = self.sweep(now);
        if self.parked.len() >= MAX_PARKED {
            return (Err((running, waiting)), expired);
        }
        self.next += 1;
        let number = self.next;
        self.parked.insert(
            number,
            Parked {
                running,
                waiting,
                expires: now + STATE_TTL,
            },
        );
        (Ok(number), expired)
    }

    /// Takes parked call `number` (once), with its answer slots.
    pub(crate) fn unpark(&mut self, number: u64) -> (Option<Stopped>, Vec<Running>) {
        self.unpark_at(number, Instant::now())
    }

    fn unpark_at(&mut self, number: u64, now: Instant) -> (Option<Stopped>, Vec<Running>) {
        let expired = self.sweep(now);
        let taken = self.parked.remove(&number).map(|p| (p.running, p.waiting));
        (taken, expired)
    }

    fn sweep(&mut self, now: Instant) -> Vec<Running> {
        let gone: Vec<u64> = self
            .parked
            .iter()
            .filter(|(_, p)| p.expires <= now)
            .map(|(n, _)| *n)
            .collect();
        gone.into_iter()
            .filter_map(|n| self.parked.remove(&n))
            .map(|p| p.running)
            .collect()
    }
}

/// Turns the server requests that came to a call into the host's input
/// requests, refusing (to the server) those the host did not declare a
/// capability for. Gives the input requests and their answer slots.
pub(crate) fn ask_host(
    asks: Vec<Bridged>,
    host: &ClientCapabilities,
) -> (InputRequests, BTreeMap<String, Reply>) {
    let mut requests = InputRequests::new();
    let mut waiting = BTreeMap::new();
    for (n, Bridged { request, reply }) in asks.into_iter().enumerate() {
        if let Err(lacking) = declared(&request, host) {
            let _ = reply.send(Err(HandlerError::refused(format!(
                "the host behind the gateway did not declare `{lacking}` for this call"
            ))));
            continue;
        }
        let key = format!("{ASK_KEY}{}", n + 1);
        requests.insert(key.clone(), InputRequest::from(request));
        waiting.insert(key, reply);
    }
    (requests, waiting)
}

/// Whether `host` declared what `request` needs; `Err` names what it lacks.
fn declared(request: &ServerRequestMessage, host: &ClientCapabilities) -> Result<(), &'static str> {
    match request {
        ServerRequestMessage::CreateMessage(_) if host.sampling.is_some() => Ok(()),
        ServerRequestMessage::CreateMessage(_) => Err("sampling"),
        ServerRequestMessage::Elicit(ElicitParams::Url(_)) => host
            .elicitation
            .as_ref()
            .and_then(|e| e.url.as_ref())
            .map(drop)
            .ok_or("elicitation.url"),
        ServerRequestMessage::Elicit(_) if host.elicitation.is_some() => Ok(()),
        ServerRequestMessage::Elicit(_) => Err("elicitation"),
        _ => Err("a request the gateway does not pass on"),
    }
}

/// Hands the host's answers to the server's requests waiting for them; a
/// key the host left unanswered is refused to the server.
pub(crate) fn answer(waiting: BTreeMap<String, Reply>, mut answers: mcp_types::InputResponses) {
    for (key, reply) in waiting {
        let answer = answers
            .remove(&key)
            .ok_or_else(|| HandlerError::refused("the host gave no answer to this request"));
        let _ = reply.send(answer);
    }
}

/// Refuses the server's requests waiting in `waiting`, saying why.
pub(crate) fn refuse(waiting: BTreeMap<String, Reply>, why: &str) {
    for (_, reply) in waiting {
        let _ = reply.send(Err(HandlerError::refused(why.to_owned())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> Running {
        let (_, asks) = mpsc::channel(1);
        Running {
            call: Box::pin(async { Err(HubError::ShuttingDown) }),
            asks,
            calling: None,
        }
    }

    #[test]
    fn parked_calls_are_bounded_taken_once_and_dropped_at_their_time() {
        let mut parking = Parking::default();
        let now = Instant::now();
        let mut numbers = Vec::new();
        for _ in 0..MAX_PARKED {
            let (parked, expired) = parking.park_at(running(), BTreeMap::new(), now);
            assert!(expired.is_empty());
            numbers.push(parked.ok().expect("room"));
        }
        let (full, _) = parking.park_at(running(), BTreeMap::new(), now);
        assert!(full.is_err(), "past the bound the call is given back");
        let (taken, _) = parking.unpark_at(numbers[0], now);
        assert!(taken.is_some());
        let (again, _) = parking.unpark_at(numbers[0], now);
        assert!(again.is_none(), "a call is unparked once");
        // Past their time, the rest are dropped (and given back to be
        // dropped outside the lock).
        let later = now + STATE_TTL;
        let (gone, expired) = parking.unpark_at(numbers[1], later);
        assert!(gone.is_none());
        assert_eq!(expired.len(), MAX_PARKED - 1);
        assert!(parking.parked.is_empty());
    }

    #[tokio::test]
    async fn an_unanswered_or_undeclared_request_is_refused_to_the_server() {
        let sampling = ServerRequestMessage::CreateMessage(
            serde_json::from_value(serde_json::json!({
                "messages": [], "maxTokens": 1
            }))
            .unwrap(),
        );
        let (reply, answer) = oneshot::channel();
        let asks = vec![Bridged {
            request: sampling.clone(),
            reply,
        }];
        let (requests, waiting) = ask_host(asks, &ClientCapabilities::default());
        assert!(requests.is_empty() && waiting.is_empty());
        let refused = answer.await.unwrap().unwrap_err();
        assert!(refused.to_string().contains("sampling"), "{refused}");

        let host: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"sampling": {}})).unwrap();
        let (reply, answer) = oneshot::channel();
        let (requests, waiting) = ask_host(
            vec![Bridged {
                request: sampling,
                reply,
            }],
            &host,
        );
        assert_eq!(
            requests.keys().collect::<Vec<_>>(),
            [&format!("{ASK_KEY}1")]
        );
        answer_all(waiting);
        let unanswered = answer.await.unwrap().unwrap_err();
        assert!(unanswered.to_string().contains("no answer"), "{unanswered}");
    }

    fn answer_all(waiting: BTreeMap<String, Reply>) {
        answer(waiting, mcp_types::InputResponses::new());
    }
}

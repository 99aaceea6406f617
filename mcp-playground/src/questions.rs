//! Questions the servers ask the person at the page: elicitation (a form,
//! or a web page to open) and sampling (the person writes the reply in the
//! model's place). The host makes one [`Questions`] before it starts its
//! hub, gives each server [`Questions::handler`] as its elicitation and
//! sampling handler, and hands the same value to the playground
//! ([`Playground::answering`](crate::Playground::answering)).
//!
//! A question waits until the page answers it (`POST /api/answer`), the
//! server withdraws it (the handler's future is dropped: it leaves the
//! list), or the session's hard deadline passes; meanwhile the session
//! holds the deadline of the request that asked. At most
//! [`MAX_QUESTIONS`] wait at once: one more is refused at once, so a server
//! cannot queue questions without bound. What the page is handed is
//! bounded (each text, the messages of a conversation) and, like
//! everything a server sent, shown as text.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_session::{Elicitation, ElicitationHandler, HandlerError, SamplingHandler};
use mcp_types::{CreateMessageParams, CreateMessageResult, ElicitResult, SamplingContent};
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

use crate::json::clip;

/// Questions waiting at once; one more is refused at once.
pub const MAX_QUESTIONS: usize = 16;
/// Fields a form may have to be shown; a larger form is refused whole.
const MAX_FIELDS: usize = 64;
/// Bytes of a form's schema (as JSON) shown; a larger form is refused whole.
const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Bytes of one text handed to the page (a message, a prompt, a URL).
const TEXT_BYTES: usize = 8 * 1024;
/// Messages of a sampling conversation handed to the page (the latest).
const MESSAGES: usize = 20;
/// Content blocks of one message handed to the page (so a conversation is
/// at most 20 × 4 texts of [`TEXT_BYTES`]).
const BLOCKS: usize = 4;
/// The `model` of a reply the person wrote.
pub const PAGE_MODEL: &str = "a person at the playground (mcp)";

/// The questions waiting for the page. Cloning shares them.
#[derive(Clone, Debug, Default)]
pub struct Questions {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    waiting: Mutex<BTreeMap<u64, Waiting>>,
    next_id: AtomicU64,
    /// Bumped whenever the list changes (the page is told to read it).
    changed: watch::Sender<u64>,
    /// Told of each question put up ([`Questions::on_asked`]).
    notice: Mutex<Option<Notice>>,
}

type Notice = Arc<dyn Fn(&Asked) + Send + Sync>;

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("waiting", &self.waiting)
            .field("next_id", &self.next_id)
            .finish_non_exhaustive()
    }
}

/// A question just put up for the page, as [`Questions::on_asked`] is told
/// of it (so a host can say, where the person looks, that the page waits
/// for an answer).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Asked {
    /// The server that asks (its name in the hub).
    pub server: String,
    /// What it asks for.
    pub kind: QuestionKind,
    /// Questions waiting now, this one included.
    pub waiting: usize,
}

#[derive(Debug)]
struct Waiting {
    /// The question as the page gets it.
    shown: Value,
    kind: QuestionKind,
    answer: oneshot::Sender<Result<Value, HandlerError>>,
}

/// What a question asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuestionKind {
    /// A form to fill in (form-mode elicitation).
    Form,
    /// A web page to open (URL-mode elicitation).
    Url,
    /// A reply to write in the model's place (sampling).
    Sampling,
}

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotTaken {
    /// No such question waits (answered, withdrawn, never asked).
    Gone,
    /// The answer does not fit the question.
    Invalid(&'static str),
}

/// An answer from the page.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    pub(crate) id: u64,
    /// `accept`, `decline` or `cancel`.
    pub(crate) action: String,
    /// A form's values (with `accept`).
    #[serde(default)]
    pub(crate) content: Option<Value>,
    /// A sampling reply (with `accept`).
    #[serde(default)]
    pub(crate) reply: Option<String>,
}

impl Questions {
    /// No questions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The elicitation and sampling handler of server `server`: its
    /// questions wait here for the page.
    pub fn handler(&self, server: &str) -> QuestionHandler {
        QuestionHandler {
            questions: self.clone(),
            server: server.to_owned(),
        }
    }

    /// Calls `notice` with each question as it is put up, from the task of
    /// the server's request (keep it quick; it must not block). Replaces
    /// an earlier notice.
    #[must_use]
    pub fn on_asked(self, notice: impl Fn(&Asked) + Send + Sync + 'static) -> Self {
        *lock(&self.inner.notice) = Some(Arc::new(notice));
        self
    }

    /// How many questions wait for the page.
    pub fn waiting(&self) -> usize {
        lock(&self.inner.waiting).len()
    }

    /// The questions waiting, oldest first, as the page shows them.
    pub(crate) fn list(&self) -> Vec<Value> {
        lock(&self.inner.waiting)
            .values()
            .map(|w| w.shown.clone())
            .collect()
    }

    /// A receiver that changes whenever the list does.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Takes the page's answer to a waiting question.
    pub(crate) fn answer(&self, answer: Answer) -> Result<(), NotTaken> {
        let mut waiting = lock(&self.inner.waiting);
        let kind = waiting.get(&answer.id).ok_or(NotTaken::Gone)?.kind;
        let result = judge(kind, answer.action.as_str(), answer.content, answer.reply)
            .map_err(NotTaken::Invalid)?;
        let Some(question) = waiting.remove(&answer.id) else {
            return Err(NotTaken::Gone);
        };
        drop(waiting);
        self.bump();
        // The asker may have gone meanwhile: nothing to do then.
        let _ = question.answer.send(result);
        Ok(())
    }

    fn bump(&self) {
        self.inner.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Puts a question up and waits for its answer, read as the result
    /// `T`; the question leaves the list however the wait ends.
    async fn ask<T: serde::de::DeserializeOwned>(
        &self,
        server: &str,
        kind: QuestionKind,
        mut shown: Value,
    ) -> Result<T, HandlerError> {
        let (tx, rx) = oneshot::channel();
        let (id, waiting) = {
            let mut waiting = lock(&self.inner.waiting);
            if waiting.len() >= MAX_QUESTIONS {
                return Err(HandlerError::refused(format!(
                    "{MAX_QUESTIONS} questions already wait at the playground; ask again later"
                )));
            }
            let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed) + 1;
            shown["id"] = json!(id);
            waiting.insert(
                id,
                Waiting {
                    shown,
                    kind,
                    answer: tx,
                },
            );
            (id, waiting.len())
        };
        self.bump();
        let notice = lock(&self.inner.notice).clone();
        if let Some(notice) = notice {
            notice(&Asked {
                server: server.to_owned(),
                kind,
                waiting,
            });
        }
        let _leave = Leave {
            questions: self,
            id,
        };
        let answer = rx
            .await
            .unwrap_or_else(|_| Err(HandlerError::internal("the playground went away")))?;
        serde_json::from_value(answer)
            .map_err(|_| HandlerError::internal("the page's answer did not make a result"))
    }
}

/// Takes a question off the list when its asker stops waiting.
struct Leave<'a> {
    questions: &'a Questions,
    id: u64,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let removed = lock(&self.questions.inner.waiting).remove(&self.id);
        if removed.is_some() {
            self.questions.bump();
        }
    }
}

/// The result an answer makes, or why it does not fit.
fn judge(
    kind: QuestionKind,
    action: &str,
    content: Option<Value>,
    reply: Option<String>,
) -> Result<Result<Value, HandlerError>, &'static str> {
    let declined = || {
        Err(HandlerError::refused(
            "the user declined the sampling request",
        ))
    };
    match (kind, action) {
        (QuestionKind::Sampling, "accept") => {
            let reply = reply.ok_or("a sampling answer carries the `reply`")?;
            let result = CreateMessageResult::text(PAGE_MODEL, reply);
            Ok(Ok(serde_json::to_value(result).map_err(|_| "the reply")?))
        }
        (QuestionKind::Sampling, "decline" | "cancel") => Ok(declined()),
        (QuestionKind::Form, "accept") => {
            let content = content.ok_or("a form's answer carries its `content`")?;
            let result: ElicitResult = serde_json::from_value(json!({
                "action": "accept", "content": content
            }))
            .map_err(
                |_| "the content must be an object of strings, numbers, booleans and string lists",
            )?;
            Ok(Ok(serde_json::to_value(result).map_err(|_| "the content")?))
        }
        (QuestionKind::Form | QuestionKind::Url, "accept" | "decline" | "cancel") => {
            Ok(Ok(json!({ "action": action })))
        }
        _ => Err("the action is `accept`, `decline` or `cancel`"),
    }
}

/// A text for the page: whole up to [`TEXT_BYTES`], else cut and said so.
fn text(value: &str) -> Value {
    let (shown, cut) = clip(value, TEXT_BYTES);
    if cut {
        json!({"text": shown, "bytes": value.len()})
    } else {
        json!({"text": shown})
    }
}

/// One server's handler of elicitation and sampling: its questions wait
/// for the page ([`Questions`]).
#[derive(Debug, Clone)]
pub struct QuestionHandler {
    questions: Questions,
    server: String,
}

impl ElicitationHandler for QuestionHandler {
    fn elicit(
        &self,
        request: Elicitation,
    ) -> futures::future::BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            let (kind, shown) = match &request {
                Elicitation::Form(form) => {
                    let fields = form.requested_schema.properties.0.len();
                    let schema = serde_json::to_value(&form.requested_schema)
                        .map_err(|_| HandlerError::invalid_params("the form's schema"))?;
                    let bytes = schema.to_string().len();
                    if fields > MAX_FIELDS || bytes > MAX_SCHEMA_BYTES {
                        return Err(HandlerError::refused(format!(
                            "a form of {fields} fields and {bytes} bytes is more than the playground shows \
                             (at most {MAX_FIELDS} fields, {MAX_SCHEMA_BYTES} bytes)"
                        )));
                    }
                    (
                        QuestionKind::Form,
                        json!({
                            "server": self.server,
                            "kind": "form",
                            "message": text(&form.message),
                            "schema": schema,
                            // The fields in the order the server sent them
                            // (a JSON object here has its keys sorted).
                            "order": form
                                .requested_schema
                                .properties
                                .0
                                .iter()
                                .map(|(name, _)| name.as_str())
                                .collect::<Vec<_>>(),
                        }),
                    )
                }
                Elicitation::Url { params, host } => {
                    let url = crate::json::page_url(&params.url)?;
                    (
                        QuestionKind::Url,
                        json!({
                            "server": self.server,
                            "kind": "url",
                            "message": text(&params.message),
                            "url": text(&url),
                            "host": host,
                            // A browser may show a Punycode name in another
                            // script: the page warns.
                            "punycode": mcp_types::text::is_punycode_host(host),
                        }),
                    )
                }
                _ => {
                    return Err(HandlerError::refused(
                        "this elicitation is of a kind the playground cannot ask",
                    ));
                }
            };
            self.questions.ask(&self.server, kind, shown).await
        })
    }

    fn supports_url(&self) -> bool {
        true
    }
}

impl SamplingHandler for QuestionHandler {
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> futures::future::BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            let skipped = params.messages.len().saturating_sub(MESSAGES);
            let messages: Vec<Value> = params.messages[skipped..]
                .iter()
                .map(|m| {
                    let (blocks, more): (Vec<Value>, usize) = match &m.content {
                        SamplingContent::Single(block) => (vec![block_for_page(block)], 0),
                        SamplingContent::Multiple(blocks) => (
                            blocks.iter().take(BLOCKS).map(block_for_page).collect(),
                            blocks.len().saturating_sub(BLOCKS),
                        ),
                        _ => (Vec::new(), 0),
                    };
                    // Blocks left out are counted, never dropped unsaid.
                    json!({"role": m.role, "content": blocks, "moreBlocks": more})
                })
                .collect();
            let shown = json!({
                "server": self.server,
                "kind": "sampling",
                "systemPrompt": params.system_prompt.as_deref().map(text),
                "messages": messages,
                "earlier": skipped,
                "maxTokens": params.max_tokens,
            });
            self.questions
                .ask(&self.server, QuestionKind::Sampling, shown)
                .await
        })
    }
}

/// A content block of a conversation for the page: text (bounded), or a
/// word on what else it is.
fn block_for_page(block: &mcp_types::ContentBlock) -> Value {
    match block {
        mcp_types::ContentBlock::Text(t) => json!({"type": "text", "text": text(&t.text)}),
        mcp_types::ContentBlock::Image(i) => {
            json!({"type": "image", "mimeType": text(&i.mime_type), "base64Bytes": i.data.len()})
        }
        mcp_types::ContentBlock::Audio(a) => {
            json!({"type": "audio", "mimeType": text(&a.mime_type), "base64Bytes": a.data.len()})
        }
        _ => json!({"type": "other"}),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Elicitation {
        Elicitation::Form(
            serde_json::from_value(json!({"message": "Who?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}}))
            .unwrap(),
        )
    }

    #[tokio::test]
    async fn a_question_waits_for_its_answer_and_leaves_the_list_however_it_ends() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let questions = Questions::new().on_asked({
            let told = Arc::clone(&told);
            move |asked: &Asked| {
                lock(&told).push((asked.server.clone(), asked.kind, asked.waiting));
            }
        });
        let handler = questions.handler("notes");
        let mut changed = questions.watch();
        let asked = tokio::spawn({
            let handler = handler.clone();
            async move { handler.elicit(form()).await }
        });
        while questions.list().is_empty() {
            changed.changed().await.unwrap();
        }
        let list = questions.list();
        assert_eq!(list.len(), 1);
        assert_eq!(
            *lock(&told),
            [("notes".to_owned(), QuestionKind::Form, 1)],
            "the host is told of the question"
        );
        assert_eq!(list[0]["server"], "notes");
        assert_eq!(list[0]["message"]["text"], "Who?");
        assert_eq!(list[0]["order"], json!(["name"]));
        let id = list[0]["id"].as_u64().unwrap();
        // An answer that does not fit is refused, and the question waits on.
        let wrong = Answer {
            id,
            action: "accept".into(),
            content: Some(json!({"name": {"nested": true}})),
            reply: None,
        };
        assert!(matches!(questions.answer(wrong), Err(NotTaken::Invalid(_))));
        let right = Answer {
            id,
            action: "accept".into(),
            content: Some(json!({"name": "Ada"})),
            reply: None,
        };
        questions.answer(right).unwrap();
        let result = asked.await.unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(result).unwrap(),
            json!({"action": "accept", "content": {"name": "Ada"}})
        );
        assert!(questions.list().is_empty());
        let again = Answer {
            id,
            action: "cancel".into(),
            content: None,
            reply: None,
        };
        assert_eq!(questions.answer(again), Err(NotTaken::Gone));
        // A question withdrawn (its future dropped) leaves the list.
        let withdrawn = tokio::spawn(async move { handler.elicit(form()).await });
        while questions.list().is_empty() {
            changed.changed().await.unwrap();
        }
        withdrawn.abort();
        let _ = withdrawn.await;
        assert!(questions.list().is_empty());
        assert_eq!(lock(&told).len(), 2);
    }

    #[tokio::test]
    async fn forms_and_urls_too_large_to_show_whole_are_refused_and_urls_are_shown_in_ascii() {
        let questions = Questions::new();
        let handler = questions.handler("s");
        let many: serde_json::Map<String, Value> = (0..=MAX_FIELDS)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        let form = Elicitation::Form(
            serde_json::from_value(json!({"message": "m", "requestedSchema": {
                "type": "object", "properties": many}}))
            .unwrap(),
        );
        let refused = handler.elicit(form).await.unwrap_err();
        assert!(refused.message().contains("65 fields"), "{refused}");
        let url = |url: &str| {
            let params: mcp_types::ElicitUrlParams = serde_json::from_value(json!({
                "mode": "url", "message": "m", "url": url, "elicitationId": "e"}))
            .unwrap();
            let host = url::Url::parse(url).unwrap().host_str().unwrap().to_owned();
            Elicitation::Url { params, host }
        };
        let long = format!("https://example.com/{}", "a".repeat(TEXT_BYTES));
        let refused = handler.elicit(url(&long)).await.unwrap_err();
        assert!(refused.message().contains("longer"), "{refused}");
        assert!(questions.list().is_empty(), "nothing was put up");
        let mut changed = questions.watch();
        let asked = tokio::spawn({
            let handler = handler.clone();
            async move { handler.elicit(url("https://аuth.example.com/a b")).await }
        });
        while questions.list().is_empty() {
            changed.changed().await.unwrap();
        }
        assert_eq!(
            questions.list()[0]["url"]["text"],
            "https://xn--uth-5cd.example.com/a%20b"
        );
        assert_eq!(questions.list()[0]["punycode"], true);
        asked.abort();
    }

    #[tokio::test]
    async fn a_long_conversation_is_handed_over_bounded_and_the_rest_counted() {
        let questions = Questions::new();
        let blocks: Vec<Value> = (0..6)
            .map(|i| json!({"type": "text", "text": format!("b{i}")}))
            .collect();
        let messages: Vec<Value> = (0..MESSAGES + 2)
            .map(|_| json!({"role": "user", "content": blocks}))
            .collect();
        let params: CreateMessageParams =
            serde_json::from_value(json!({"messages": messages, "maxTokens": 5})).unwrap();
        let handler = questions.handler("s");
        let mut changed = questions.watch();
        let asked = tokio::spawn(async move { handler.create_message(params).await });
        while questions.list().is_empty() {
            changed.changed().await.unwrap();
        }
        let shown = questions.list().remove(0);
        assert_eq!(shown["earlier"], 2);
        assert_eq!(shown["messages"].as_array().unwrap().len(), MESSAGES);
        assert_eq!(
            shown["messages"][0]["content"].as_array().unwrap().len(),
            BLOCKS
        );
        assert_eq!(shown["messages"][0]["moreBlocks"], 2);
        asked.abort();
    }

    #[tokio::test]
    async fn at_most_so_many_questions_wait() {
        let questions = Questions::new();
        let mut tasks = Vec::new();
        let mut changed = questions.watch();
        for _ in 0..MAX_QUESTIONS {
            let handler = questions.handler("s");
            tasks.push(tokio::spawn(async move { handler.elicit(form()).await }));
        }
        while questions.list().len() < MAX_QUESTIONS {
            changed.changed().await.unwrap();
        }
        let refused = questions.handler("s").elicit(form()).await.unwrap_err();
        assert!(refused.message().contains("already wait"), "{refused}");
        for task in tasks {
            task.abort();
        }
    }

    #[tokio::test]
    async fn a_sampling_reply_is_the_persons_and_a_refusal_is_minus_one() {
        let questions = Questions::new();
        let params: CreateMessageParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 5, "systemPrompt": "brief"}))
        .unwrap();
        let mut changed = questions.watch();
        for (action, reply) in [("accept", Some("Four.")), ("decline", None)] {
            let handler = questions.handler("s");
            let asked = tokio::spawn({
                let params = params.clone();
                async move { handler.create_message(params).await }
            });
            while questions.list().is_empty() {
                changed.changed().await.unwrap();
            }
            let shown = questions.list().remove(0);
            assert_eq!(shown["messages"][0]["content"][0]["text"]["text"], "2+2?");
            assert_eq!(shown["systemPrompt"]["text"], "brief");
            assert_eq!(shown["messages"][0]["moreBlocks"], 0);
            let answer = Answer {
                id: shown["id"].as_u64().unwrap(),
                action: action.into(),
                content: None,
                reply: reply.map(str::to_owned),
            };
            questions.answer(answer).unwrap();
            match asked.await.unwrap() {
                Ok(result) => {
                    let result = serde_json::to_value(result).unwrap();
                    assert_eq!(result["content"]["text"], "Four.");
                    assert_eq!(result["model"], PAGE_MODEL);
                }
                Err(refused) => assert_eq!(refused.code(), -1),
            }
            assert!(questions.list().is_empty());
        }
    }
}

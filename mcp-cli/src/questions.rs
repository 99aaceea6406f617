//! A server's questions, answered by the person at the terminal. `mcp
//! call`, `mcp read` and `mcp prompt` run at a terminal offer elicitation
//! (form and URL modes) and sampling (the person writes the reply in the
//! model's place), so a tool that asks its user, or a model, can be tried
//! from the command line; elsewhere nothing is offered and a server asks
//! nobody.
//!
//! What the server sends is shown escaped and bounded; a form too large to
//! show, or a field of a kind we cannot ask for, is refused whole, never
//! cut. A URL is shown whole, normalised (its host in ASCII), with its host
//! on a line of its own, and never opened. Questions are asked one at a
//! time, with the spinner hidden meanwhile; the session holds the deadline
//! of the request that asked while the person answers.

use std::io::{BufRead, Read as _, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mcp_session::{Elicitation, ElicitationHandler, HandlerError, SamplingHandler};
use mcp_transport::BoxFuture;
use mcp_types::text::{Untrusted, escape_content};
use mcp_types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitFormParams, ElicitResult,
    ElicitUrlParams, ElicitValue, NumberType, PrimitiveSchema, StringFormat,
};

/// Fields a form may have to be asked here; a larger one is refused.
const MAX_FIELDS: usize = 64;
/// Choices one field may offer to be asked here.
const MAX_CHOICES: usize = 256;
/// Characters of the server's message shown (the rest named by its size).
const MESSAGE_CHARS: usize = 2000;
/// Characters shown of each message of a sampling request.
const SAMPLED_CHARS: usize = 4000;
/// Messages of a sampling request shown (the latest; the others counted).
const SAMPLED_MESSAGES: usize = 20;
/// The `model` of a reply written by the person.
const PERSON_MODEL: &str = "a person at the terminal (mcp)";
/// Characters shown of a field's name, title, description or choice.
const LABEL_CHARS: usize = 200;
/// The longest URL shown; a longer one is refused (it must be seen whole).
const MAX_URL_CHARS: usize = 2048;
/// The longest answer read; a longer one is refused and asked again.
const MAX_ANSWER_BYTES: usize = 16 * 1024;
/// Wrong answers to one field before the form is given up (dismissed).
const MAX_TRIES: usize = 5;

/// Only one question is on the terminal at a time, whichever server asks.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Answers a server's `elicitation/create` and `sampling/createMessage` at
/// the terminal (stderr for the question, stdin for the answers).
#[derive(Debug)]
pub(crate) struct AtTerminal {
    server: String,
}

impl AtTerminal {
    /// The handler for the configured server `server`.
    pub(crate) fn new(server: &str) -> Self {
        Self {
            server: server.to_owned(),
        }
    }

    /// Runs `dialogue` on the terminal, in its turn, off the runtime.
    async fn on_terminal<T: Send + 'static>(
        &self,
        dialogue: impl FnOnce(&str, &mut dyn BufRead, &mut dyn Write) -> Result<T, HandlerError>
        + Send
        + 'static,
    ) -> Result<T, HandlerError> {
        let server = self.server.clone();
        let turn = TURN.lock().await;
        // A question the server withdraws (or a call that ends) drops this
        // future, but a read of the terminal cannot be stopped: the person
        // is told their answer went nowhere, and the next question waits
        // for this one's end (the turn moves into the read).
        let withdrawn = Arc::new(AtomicBool::new(false));
        let _mark = MarkOnDrop(Arc::clone(&withdrawn));
        let asked = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let answer = crate::progress::while_hidden(|| {
                let mut input = std::io::stdin().lock();
                let mut output = std::io::stderr();
                dialogue(&server, &mut input, &mut output)
            });
            if withdrawn.load(Ordering::Acquire) {
                eprintln!(
                    "(`{}` no longer waits for this answer: it was not sent)",
                    Untrusted::bounded(&server, LABEL_CHARS)
                );
            }
            answer
        });
        asked
            .await
            .map_err(|_| HandlerError::internal("the question at the terminal failed"))?
    }
}

impl ElicitationHandler for AtTerminal {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(
            self.on_terminal(move |server, input, output| ask(server, &request, input, output)),
        )
    }

    fn supports_url(&self) -> bool {
        true
    }
}

impl SamplingHandler for AtTerminal {
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(
            self.on_terminal(move |server, input, output| sample(server, &params, input, output)),
        )
    }
}

/// Sets its flag when dropped: the question's future is gone (read only
/// while the question is still being asked, when that means withdrawn).
struct MarkOnDrop(Arc<AtomicBool>);

impl Drop for MarkOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Asks `request` of the person: the question on `output`, answers from
/// `input`. The end of input dismisses it (`cancel`).
pub(crate) fn ask(
    server: &str,
    request: &Elicitation,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<ElicitResult, HandlerError> {
    let io = |e: std::io::Error| HandlerError::internal(format!("the terminal failed: {e}"));
    match request {
        Elicitation::Form(params) => {
            let fields = fields(params)?;
            form(server, params, &fields, input, output).map_err(io)
        }
        Elicitation::Url { params, host } => {
            let url = shown_url(params)?;
            open_url(server, params, &url, host, input, output).map_err(io)
        }
        _ => Err(HandlerError::refused(
            "this elicitation is of a kind this terminal cannot ask",
        )),
    }
}

/// One field of a form, as asked.
#[derive(Debug)]
struct Field {
    name: String,
    title: Option<String>,
    description: Option<String>,
    required: bool,
    kind: Kind,
}

/// What a field takes.
#[derive(Debug)]
enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<StringFormat>,
        default: Option<String>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
        default: Option<serde_json::Number>,
    },
    Bool {
        default: Option<bool>,
    },
    /// One of the choices: `(value, title)`.
    One {
        choices: Vec<(String, Option<String>)>,
        default: Option<String>,
    },
    /// Any of the choices.
    Many {
        choices: Vec<(String, Option<String>)>,
        min: Option<u64>,
        max: Option<u64>,
        default: Option<Vec<String>>,
    },
}

/// The form's fields, or the refusal of a form we cannot ask whole.
fn fields(params: &ElicitFormParams) -> Result<Vec<Field>, HandlerError> {
    let schema = &params.requested_schema;
    let properties = &schema.properties.0;
    if properties.len() > MAX_FIELDS {
        return Err(HandlerError::refused(format!(
            "a form of {} fields is more than this terminal asks (at most {MAX_FIELDS})",
            properties.len()
        )));
    }
    let required = schema.required.as_deref().unwrap_or_default();
    let mut out = Vec::with_capacity(properties.len());
    for (name, field) in properties {
        let plain = |values: &[String]| values.iter().map(|v| (v.clone(), None)).collect();
        let titled = |options: &[mcp_types::TitledOption]| {
            options
                .iter()
                .map(|o| (o.value.clone(), Some(o.title.clone())))
                .collect()
        };
        let (title, description, kind) = match field {
            PrimitiveSchema::String(s) => (
                &s.title,
                &s.description,
                Kind::Text {
                    min: s.min_length,
                    max: s.max_length,
                    format: s.format.clone(),
                    default: s.default.clone(),
                },
            ),
            PrimitiveSchema::Number(n) => (
                &n.title,
                &n.description,
                Kind::Number {
                    integer: n.kind == NumberType::Integer,
                    min: n.minimum.as_ref().and_then(serde_json::Number::as_f64),
                    max: n.maximum.as_ref().and_then(serde_json::Number::as_f64),
                    default: n.default.clone(),
                },
            ),
            PrimitiveSchema::Boolean(b) => {
                (&b.title, &b.description, Kind::Bool { default: b.default })
            }
            PrimitiveSchema::UntitledSingleSelect(e) => (
                &e.title,
                &e.description,
                Kind::One {
                    choices: plain(&e.values),
                    default: e.default.clone(),
                },
            ),
            PrimitiveSchema::TitledSingleSelect(e) => (
                &e.title,
                &e.description,
                Kind::One {
                    choices: titled(&e.one_of),
                    default: e.default.clone(),
                },
            ),
            PrimitiveSchema::LegacyTitledEnum(e) => {
                let names = e.enum_names.as_deref().unwrap_or_default();
                let choices = e
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v.clone(), names.get(i).cloned()))
                    .collect();
                (
                    &e.title,
                    &e.description,
                    Kind::One {
                        choices,
                        default: e.default.clone(),
                    },
                )
            }
            PrimitiveSchema::UntitledMultiSelect(e) => (
                &e.title,
                &e.description,
                Kind::Many {
                    choices: plain(&e.items.values),
                    min: e.min_items,
                    max: e.max_items,
                    default: e.default.clone(),
                },
            ),
            PrimitiveSchema::TitledMultiSelect(e) => (
                &e.title,
                &e.description,
                Kind::Many {
                    choices: titled(&e.items.any_of),
                    min: e.min_items,
                    max: e.max_items,
                    default: e.default.clone(),
                },
            ),
            _ => {
                return Err(HandlerError::refused(format!(
                    "field `{}` is of a kind this terminal cannot ask",
                    Untrusted::bounded(name, LABEL_CHARS)
                )));
            }
        };
        if let Kind::One { choices, .. } | Kind::Many { choices, .. } = &kind
            && choices.len() > MAX_CHOICES
        {
            return Err(HandlerError::refused(format!(
                "field `{}` offers {} choices, more than this terminal asks (at most {MAX_CHOICES})",
                Untrusted::bounded(name, LABEL_CHARS),
                choices.len()
            )));
        }
        out.push(Field {
            name: name.clone(),
            title: title.clone(),
            description: description.clone(),
            required: required.contains(name),
            kind,
        });
    }
    Ok(out)
}

/// The server's words, quoted line by line, escaped and cut at
/// [`MESSAGE_CHARS`] (the rest named by its size).
fn quoted(text: &str) -> String {
    quoted_at(text, MESSAGE_CHARS)
}

/// `text` quoted line by line, escaped and cut at `max` characters.
fn quoted_at(text: &str, max: usize) -> String {
    let cut = text.char_indices().nth(max).map(|(at, _)| at);
    let shown = &text[..cut.unwrap_or(text.len())];
    let mut out = String::new();
    for line in escape_content(shown).lines() {
        out.push_str("  | ");
        out.push_str(line);
        out.push('\n');
    }
    if let Some(at) = cut {
        out.push_str(&format!("  | … ({} more bytes)\n", text.len() - at));
    }
    out
}

/// What one line of input said.
enum Line {
    /// An answer (without its line end).
    Text(String),
    /// Longer than [`MAX_ANSWER_BYTES`] (the rest of it was read away).
    TooLong,
    /// The input ended.
    End,
}

/// Reads one answer, bounded.
fn read_line(input: &mut dyn BufRead) -> std::io::Result<Line> {
    let mut bytes = Vec::new();
    let n = (&mut *input)
        .take(MAX_ANSWER_BYTES as u64 + 1)
        .read_until(b'\n', &mut bytes)?;
    if n == 0 {
        return Ok(Line::End);
    }
    if bytes.last() != Some(&b'\n') && bytes.len() > MAX_ANSWER_BYTES {
        // Read the rest of the line away, a buffer at a time.
        loop {
            let buf = input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            match memchr_newline(buf) {
                Some(at) => {
                    input.consume(at + 1);
                    break;
                }
                None => {
                    let len = buf.len();
                    input.consume(len);
                }
            }
        }
        return Ok(Line::TooLong);
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(Line::Text(
        text.trim_end_matches(['\n', '\r']).trim().to_owned(),
    ))
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// The form, field by field, then whether to send it.
fn form(
    server: &str,
    params: &ElicitFormParams,
    fields: &[Field],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<ElicitResult> {
    write!(
        out,
        "\nserver `{}` asks you to fill in a form (the server's words follow):\n{}",
        Untrusted::bounded(server, LABEL_CHARS),
        quoted(&params.message)
    )?;
    writeln!(
        out,
        "Never give passwords, keys or tokens here: a server may not ask for them in a form.\n\
         An empty answer takes the default, or leaves an optional field out; \
         `:decline` refuses the form, `:cancel` (or the end of input) dismisses it."
    )?;
    let mut content = std::collections::BTreeMap::new();
    for field in fields {
        let mut tries = 0;
        let value = loop {
            write!(out, "{}", prompt(field))?;
            out.flush()?;
            let answer = match read_line(input)? {
                Line::End => return Ok(ElicitResult::cancel()),
                Line::TooLong => Err(format!("an answer is at most {MAX_ANSWER_BYTES} bytes")),
                Line::Text(text) if text == ":cancel" => return Ok(ElicitResult::cancel()),
                Line::Text(text) if text == ":decline" => return Ok(ElicitResult::decline()),
                Line::Text(text) => take(field, &text),
            };
            match answer {
                Ok(value) => break value,
                Err(why) => {
                    tries += 1;
                    writeln!(out, "  {why}")?;
                    if tries >= MAX_TRIES {
                        writeln!(
                            out,
                            "Too many answers were not taken: the form is dismissed."
                        )?;
                        return Ok(ElicitResult::cancel());
                    }
                }
            }
        };
        if let Some(value) = value {
            content.insert(field.name.clone(), value);
        }
    }
    write!(
        out,
        "Send these answers to `{}`? [y/N] ",
        Untrusted::bounded(server, LABEL_CHARS)
    )?;
    out.flush()?;
    Ok(match read_line(input)? {
        Line::End => ElicitResult::cancel(),
        Line::Text(text) if matches!(text.to_ascii_lowercase().as_str(), "y" | "yes") => {
            ElicitResult::accept(content)
        }
        Line::Text(text) if text == ":cancel" => ElicitResult::cancel(),
        _ => ElicitResult::decline(),
    })
}

/// The question of one field: its label, what it takes, then `: `.
fn prompt(field: &Field) -> String {
    let label = Untrusted::bounded(field.title.as_deref().unwrap_or(&field.name), LABEL_CHARS);
    let mut notes: Vec<String> = Vec::new();
    if field.title.is_some() {
        notes.push(format!(
            "`{}`",
            Untrusted::bounded(&field.name, LABEL_CHARS)
        ));
    }
    let mut choices = String::new();
    let list = |choices: &mut String, options: &[(String, Option<String>)]| {
        for (i, (value, title)) in options.iter().enumerate() {
            let value = Untrusted::bounded(value, LABEL_CHARS);
            match title {
                Some(title) => choices.push_str(&format!(
                    "    {}) {} ({value})\n",
                    i + 1,
                    Untrusted::bounded(title, LABEL_CHARS)
                )),
                None => choices.push_str(&format!("    {}) {value}\n", i + 1)),
            }
        }
    };
    match &field.kind {
        Kind::Text {
            min,
            max,
            format,
            default,
        } => {
            notes.push(match format {
                Some(StringFormat::Email) => "an email address".to_owned(),
                Some(StringFormat::Uri) => "a URI".to_owned(),
                Some(StringFormat::Date) => "a date, YYYY-MM-DD".to_owned(),
                Some(StringFormat::DateTime) => "a date and time, RFC 3339".to_owned(),
                _ => "text".to_owned(),
            });
            if let Some(range) = range(*min, *max) {
                notes.push(format!("{range} characters"));
            }
            if let Some(default) = default {
                notes.push(format!(
                    "default \"{}\"",
                    Untrusted::bounded(default, LABEL_CHARS)
                ));
            }
        }
        Kind::Number {
            integer,
            min,
            max,
            default,
        } => {
            notes.push(if *integer { "an integer" } else { "a number" }.to_owned());
            notes.extend(range(*min, *max));
            if let Some(default) = default {
                notes.push(format!("default {default}"));
            }
        }
        Kind::Bool { default } => {
            notes.push("y or n".to_owned());
            if let Some(default) = default {
                notes.push(format!("default {}", if *default { "y" } else { "n" }));
            }
        }
        Kind::One {
            choices: c,
            default,
        } => {
            notes.push("one choice, by number or value".to_owned());
            if let Some(default) = default {
                notes.push(format!(
                    "default {}",
                    Untrusted::bounded(default, LABEL_CHARS)
                ));
            }
            list(&mut choices, c);
        }
        Kind::Many {
            choices: c,
            min,
            max,
            default,
        } => {
            notes.push("any choices, by number or value, separated by commas".to_owned());
            notes.extend(range(*min, *max).map(|range| match (min, max) {
                (Some(_), Some(_)) => format!("{range} of them"),
                _ => range,
            }));
            if let Some(default) = default {
                let shown = default.join(", ");
                notes.push(format!(
                    "default {}",
                    Untrusted::bounded(&shown, LABEL_CHARS)
                ));
            }
            list(&mut choices, c);
        }
    }
    notes.push(
        if field.required {
            "required"
        } else {
            "optional"
        }
        .to_owned(),
    );
    let mut text = format!("\n{label} ({})", notes.join(", "));
    if let Some(description) = &field.description {
        text.push_str(&format!(
            "\n  {}",
            Untrusted::bounded(description, LABEL_CHARS)
        ));
    }
    text.push('\n');
    text.push_str(&choices);
    text.push_str("> ");
    text
}

/// A field's bounds in words: `2 to 5`, `at least 2`, `at most 5`.
fn range<T: std::fmt::Display>(min: Option<T>, max: Option<T>) -> Option<String> {
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("{min} to {max}")),
        (Some(min), None) => Some(format!("at least {min}")),
        (None, Some(max)) => Some(format!("at most {max}")),
        (None, None) => None,
    }
}

/// The value `answer` gives `field`: `Ok(None)` leaves it out; `Err` says
/// why it is not taken.
fn take(field: &Field, answer: &str) -> Result<Option<ElicitValue>, String> {
    if answer.is_empty() {
        let default = match &field.kind {
            Kind::Text { default, .. } => default.clone().map(ElicitValue::String),
            Kind::Number { default, .. } => default.clone().map(ElicitValue::Number),
            Kind::Bool { default } => default.map(ElicitValue::Bool),
            Kind::One { default, .. } => default.clone().map(ElicitValue::String),
            Kind::Many { default, .. } => default.clone().map(ElicitValue::StringArray),
        };
        return match default {
            Some(value) => Ok(Some(value)),
            None if field.required => Err("this field is required".to_owned()),
            None => Ok(None),
        };
    }
    match &field.kind {
        Kind::Text {
            min, max, format, ..
        } => {
            let chars = answer.chars().count() as u64;
            if min.is_some_and(|min| chars < min) || max.is_some_and(|max| chars > max) {
                let asked = range(*min, *max).unwrap_or_default();
                return Err(format!("{asked} characters are asked for, not {chars}"));
            }
            check_format(format.as_ref(), answer)?;
            Ok(Some(ElicitValue::String(answer.to_owned())))
        }
        Kind::Number {
            integer, min, max, ..
        } => {
            let number: serde_json::Number = if *integer {
                answer
                    .parse::<i64>()
                    .map(Into::into)
                    .map_err(|_| "not an integer".to_owned())?
            } else {
                answer
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .and_then(|n| {
                        // Whole numbers go as integers (`3`, not `3.0`).
                        if n.fract() == 0.0 && n.abs() < 9.0e15 {
                            Some(serde_json::Number::from(n as i64))
                        } else {
                            serde_json::Number::from_f64(n)
                        }
                    })
                    .ok_or_else(|| "not a number".to_owned())?
            };
            let n = number.as_f64().unwrap_or_default();
            if let Some(min) = min
                && n < *min
            {
                return Err(format!("less than the minimum, {min}"));
            }
            if let Some(max) = max
                && n > *max
            {
                return Err(format!("more than the maximum, {max}"));
            }
            Ok(Some(ElicitValue::Number(number)))
        }
        Kind::Bool { .. } => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Some(ElicitValue::Bool(true))),
            "n" | "no" | "false" => Ok(Some(ElicitValue::Bool(false))),
            _ => Err("answer y or n".to_owned()),
        },
        Kind::One { choices, .. } => choose(choices, answer).map(|v| Some(ElicitValue::String(v))),
        Kind::Many {
            choices, min, max, ..
        } => {
            let mut chosen: Vec<String> = Vec::new();
            for part in answer.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let value = choose(choices, part)?;
                if !chosen.contains(&value) {
                    chosen.push(value);
                }
            }
            let n = chosen.len() as u64;
            if min.is_some_and(|min| n < min) {
                return Err(format!("choose at least {}", min.unwrap_or_default()));
            }
            if max.is_some_and(|max| n > max) {
                return Err(format!("choose at most {}", max.unwrap_or_default()));
            }
            Ok(Some(ElicitValue::StringArray(chosen)))
        }
    }
}

/// The value of the choice `answer` names: its number in the list, or the
/// value itself.
fn choose(choices: &[(String, Option<String>)], answer: &str) -> Result<String, String> {
    if let Ok(n) = answer.parse::<usize>()
        && let Some((value, _)) = n.checked_sub(1).and_then(|i| choices.get(i))
    {
        return Ok(value.clone());
    }
    choices
        .iter()
        .find(|(value, _)| value == answer)
        .map(|(value, _)| value.clone())
        .ok_or_else(|| {
            format!(
                "`{}` is none of the choices (1 to {})",
                Untrusted::bounded(answer, LABEL_CHARS),
                choices.len()
            )
        })
}

/// Whether `answer` looks like the `format` asks (the server checks it
/// again; this only spares the person a round trip).
fn check_format(format: Option<&StringFormat>, answer: &str) -> Result<(), String> {
    match format {
        Some(StringFormat::Email) => {
            let ok = answer.split_once('@').is_some_and(|(user, domain)| {
                !user.is_empty()
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !domain.contains('@')
            }) && !answer.chars().any(char::is_whitespace);
            ok.then_some(()).ok_or("not an email address".to_owned())
        }
        Some(StringFormat::Uri) => url::Url::parse(answer)
            .map(|_| ())
            .map_err(|_| "not a URI (it needs a scheme, as in https://…)".to_owned()),
        Some(StringFormat::Date) => is_date(answer)
            .then_some(())
            .ok_or("not a date (YYYY-MM-DD)".to_owned()),
        Some(StringFormat::DateTime) => is_date_time(answer)
            .then_some(())
            .ok_or("not a date and time (as in 2026-12-07T10:30:00Z)".to_owned()),
        _ => Ok(()),
    }
}

/// `YYYY-MM-DD`, a real day.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |s: &str| {
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) =
        (number(&text[..4]), number(&text[5..7]), number(&text[8..]))
    else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339: a date, `T`, `hh:mm:ss` with optional fraction, then `Z` or an
/// offset.
fn is_date_time(text: &str) -> bool {
    let Some((date, rest)) = text.split_at_checked(10) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(['T', 't']) else {
        return false;
    };
    let two = |s: &str, max: u32| {
        s.len() == 2
            && s.bytes().all(|c| c.is_ascii_digit())
            && s.parse::<u32>().is_ok_and(|n| n <= max)
    };
    let (time, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(at) => rest.split_at(at),
        None => return false,
    };
    let time = time.split_once('.').map_or(time, |(whole, fraction)| {
        if !fraction.is_empty() && fraction.bytes().all(|c| c.is_ascii_digit()) {
            whole
        } else {
            ""
        }
    });
    let hms: Vec<&str> = time.split(':').collect();
    let time_ok = hms.len() == 3 && two(hms[0], 23) && two(hms[1], 59) && two(hms[2], 60);
    let offset_ok = matches!(offset, "Z" | "z")
        || offset
            .strip_prefix(['+', '-'])
            .and_then(|o| o.split_once(':'))
            .is_some_and(|(h, m)| two(h, 23) && two(m, 59));
    is_date(date) && time_ok && offset_ok
}

/// The URL as shown and to be copied: normalised by the URL parser (its
/// host in ASCII, other characters percent-encoded), refused when too long
/// to be shown whole.
fn shown_url(params: &ElicitUrlParams) -> Result<String, HandlerError> {
    let url = url::Url::parse(&params.url)
        .map_err(|_| HandlerError::invalid_params("the URL does not parse"))?;
    let shown = url.as_str();
    if shown.chars().count() > MAX_URL_CHARS {
        return Err(HandlerError::refused(format!(
            "a URL of {} characters is longer than this terminal shows whole (at most {MAX_URL_CHARS})",
            shown.chars().count()
        )));
    }
    Ok(shown.to_owned())
}

/// The pages a `-32042` error asks the user to open, for the error's
/// report: each one's words (the server's), URL and host; a page not to be
/// shown says why.
pub(crate) fn pages_report(
    pages: &[Result<Elicitation, HandlerError>],
    paint: crate::output::Paint,
) -> String {
    let mut out = format!(
        "  {}\n",
        paint.dim("the server asks you to open these pages first, then to try again:")
    );
    for page in pages {
        let readable = match page {
            Ok(Elicitation::Url { params, host }) => {
                shown_url(params).map(|url| (params, url, host))
            }
            Ok(_) => Err(HandlerError::invalid_params("not a URL elicitation")),
            Err(why) => Err(why.clone()),
        };
        match readable {
            Ok((params, url, host)) => {
                out.push_str(&quoted(&params.message));
                out.push_str(&format!(
                    "    page: {}\n    host: {}\n",
                    Untrusted::bounded(&url, MAX_URL_CHARS),
                    Untrusted::bounded(host, LABEL_CHARS)
                ));
                if mcp_types::text::is_punycode_host(host) {
                    out.push_str("    warning: the host is written in Punycode (`xn--`)\n");
                }
            }
            Err(why) => out.push_str(&format!(
                "  a page it listed is not shown: {}\n",
                Untrusted::bounded(why.message(), LABEL_CHARS)
            )),
        }
    }
    if pages.is_empty() {
        out.push_str("  (it listed no page that can be read)\n");
    }
    out
}

/// The same pages for `--json`: `{message, url, host}` each, or
/// `{refused}` with why it is not shown.
pub(crate) fn pages_json(pages: &[Result<Elicitation, HandlerError>]) -> serde_json::Value {
    let shown = pages.iter().map(|page| match page {
        Ok(Elicitation::Url { params, host }) => match shown_url(params) {
            Ok(url) => serde_json::json!({
                "message": params.message, "url": url, "host": host,
                "elicitationId": params.elicitation_id,
            }),
            Err(why) => serde_json::json!({"refused": why.message()}),
        },
        Ok(_) => serde_json::json!({"refused": "not a URL elicitation"}),
        Err(why) => serde_json::json!({"refused": why.message()}),
    });
    serde_json::Value::Array(shown.collect())
}

/// After a `-32042` answer, at the terminal: the pages shown one by one,
/// and whether the person, having opened them, wants the request tried
/// again (`false`: give up, or nothing to open).
pub(crate) async fn opened_pages(
    server: &str,
    pages: Vec<Result<Elicitation, HandlerError>>,
) -> bool {
    let server = server.to_owned();
    let _turn = TURN.lock().await;
    tokio::task::spawn_blocking(move || {
        crate::progress::while_hidden(|| {
            let mut input = std::io::stdin().lock();
            let mut output = std::io::stderr();
            pages_dialogue(&server, &pages, &mut input, &mut output).unwrap_or(false)
        })
    })
    .await
    .unwrap_or(false)
}

/// The dialogue of [`opened_pages`].
fn pages_dialogue(
    server: &str,
    pages: &[Result<Elicitation, HandlerError>],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let shown = pages
        .iter()
        .filter(|p| matches!(p, Ok(Elicitation::Url { params, .. }) if shown_url(params).is_ok()))
        .count();
    write!(
        out,
        "\nserver `{}` needs you to open {} first (the server's words follow):\n{}",
        Untrusted::bounded(server, LABEL_CHARS),
        if shown == 1 {
            "a web page".to_owned()
        } else {
            format!("{shown} web pages")
        },
        pages_report(pages, crate::output::Paint(false))
    )?;
    if shown == 0 {
        return Ok(false);
    }
    write!(
        out,
        "mcp does not open them. Open them yourself, in your browser, only if you trust their hosts, \
         and finish there.\nThen press Enter to try again (`:cancel` gives up): "
    )?;
    out.flush()?;
    Ok(matches!(read_line(input)?, Line::Text(text) if text != ":cancel"))
}

/// A web page the server asks the person to open: shown, never opened.
fn open_url(
    server: &str,
    params: &ElicitUrlParams,
    url: &str,
    host: &str,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<ElicitResult> {
    write!(
        out,
        "\nserver `{}` asks you to open a web page (the server's words follow):\n{}",
        Untrusted::bounded(server, LABEL_CHARS),
        quoted(&params.message)
    )?;
    write!(
        out,
        "  page: {}\n  host: {}\n",
        Untrusted::bounded(url, MAX_URL_CHARS),
        Untrusted::bounded(host, LABEL_CHARS)
    )?;
    if mcp_types::text::is_punycode_host(host) {
        writeln!(
            out,
            "  warning: the host is written in Punycode (`xn--`): in a browser it may show \
             as letters of another script that imitate a name you know"
        )?;
    }
    write!(
        out,
        "mcp does not open it. Open it yourself, in your browser, only if you trust that host.\n\
         Will you open it? [y/N] "
    )?;
    out.flush()?;
    Ok(match read_line(input)? {
        Line::End => ElicitResult::cancel(),
        Line::Text(text) if matches!(text.to_ascii_lowercase().as_str(), "y" | "yes") => {
            ElicitResult::new(ElicitAction::Accept)
        }
        _ => ElicitResult::decline(),
    })
}

/// A sampling request: the conversation shown, the person's reply read in
/// the model's place and sent only after a yes. Declining is the spec's
/// refusal (an error with code -1); the end of input is one too.
fn sample(
    server: &str,
    params: &CreateMessageParams,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<CreateMessageResult, HandlerError> {
    let io = |e: std::io::Error| HandlerError::internal(format!("the terminal failed: {e}"));
    let declined = || HandlerError::refused("the user declined the sampling request");
    let server_shown = Untrusted::bounded(server, LABEL_CHARS);
    let mut text = format!(
        "\nserver `{server_shown}` asks for a model's reply (sampling); you write it in the \
         model's place (the server's words follow):\n"
    );
    if let Some(system) = &params.system_prompt {
        text.push_str("system prompt:\n");
        text.push_str(&quoted_at(system, SAMPLED_CHARS));
    }
    let skipped = params.messages.len().saturating_sub(SAMPLED_MESSAGES);
    if skipped > 0 {
        text.push_str(&format!("({skipped} earlier messages not shown)\n"));
    }
    for message in &params.messages[skipped..] {
        let blocks = match &message.content {
            mcp_types::SamplingContent::Single(block) => std::slice::from_ref(block),
            mcp_types::SamplingContent::Multiple(blocks) => blocks.as_slice(),
            _ => &[],
        };
        let rendered = crate::output::render_content(blocks, crate::output::Paint(false));
        let role = match message.role {
            mcp_types::Role::User => "user",
            mcp_types::Role::Assistant => "assistant",
            _ => "another role",
        };
        text.push_str(&format!("{role}:\n{}", quoted_at(&rendered, SAMPLED_CHARS)));
    }
    let hints: Vec<String> = params
        .model_preferences
        .iter()
        .flat_map(|p| p.hints.iter().flatten())
        .filter_map(|h| h.name.as_deref())
        .take(5)
        .map(|name| Untrusted::bounded(name, LABEL_CHARS).to_string())
        .collect();
    text.push_str(&format!("(at most {} tokens", params.max_tokens));
    if !hints.is_empty() {
        text.push_str(&format!("; models it prefers: {}", hints.join(", ")));
    }
    text.push_str(")\nYour reply, on one line (`:decline` refuses):\n> ");
    out.write_all(text.as_bytes()).map_err(io)?;
    out.flush().map_err(io)?;
    let reply = loop {
        match read_line(input).map_err(io)? {
            Line::End => return Err(declined()),
            Line::TooLong => {
                write!(out, "  a reply is at most {MAX_ANSWER_BYTES} bytes\n> ").map_err(io)?;
                out.flush().map_err(io)?;
            }
            Line::Text(text) if text == ":decline" => return Err(declined()),
            Line::Text(text) => break text,
        }
    };
    write!(out, "Send this reply to `{server_shown}`? [y/N] ").map_err(io)?;
    out.flush().map_err(io)?;
    match read_line(input).map_err(io)? {
        Line::Text(yes) if matches!(yes.to_ascii_lowercase().as_str(), "y" | "yes") => {
            Ok(CreateMessageResult::text(PERSON_MODEL, reply))
        }
        _ => Err(declined()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A form of `schema`, its fields in the order written (as on the wire).
    fn form_request(schema: &str) -> Elicitation {
        let params =
            format!(r#"{{"message": "Who are you?\u001b[2J", "requestedSchema": {schema}}}"#);
        Elicitation::Form(serde_json::from_str(&params).unwrap())
    }

    fn run(request: &Elicitation, answers: &str) -> (Result<ElicitResult, HandlerError>, String) {
        let mut input = std::io::Cursor::new(answers.as_bytes().to_vec());
        let mut output = Vec::new();
        let result = ask("every", request, &mut input, &mut output);
        (result, String::from_utf8(output).unwrap())
    }

    fn content(result: &ElicitResult) -> serde_json::Value {
        serde_json::to_value(result).unwrap()
    }

    #[test]
    fn every_kind_of_field_is_asked_checked_and_sent() {
        let request = form_request(
            r#"{
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 5},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "ratio": {"type": "number"},
                "subscribe": {"type": "boolean", "default": true},
                "size": {"type": "string", "enum": ["s", "m", "l"]},
                "color": {"type": "string", "oneOf": [
                    {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
                "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]},
                "tags": {"type": "array", "minItems": 1,
                         "items": {"type": "string", "enum": ["x", "y", "z"]}},
                "note": {"type": "string"},
                "day": {"type": "string", "format": "date"}
            },
            "required": ["name", "email", "age", "size", "tags"]
        }"#,
        );
        let answers = [
            "",     // name: required
            "A",    // too short
            "Ada",  // name
            "ada@", // not an email
            "ada@example.com",
            "-1",  // below the minimum
            "3.5", // not an integer
            "36",
            "2.50",       // ratio
            "",           // subscribe: the default
            "2",          // size by number
            "g",          // color by value
            "2",          // legacy by number
            "3, x, 3",    // tags, deduplicated
            "",           // note: optional, left out
            "2026-02-30", // no such day
            "2026-02-28",
            "y",
        ]
        .join("\n");
        let (result, shown) = run(&request, &answers);
        let result = result.unwrap();
        assert_eq!(
            content(&result),
            json!({"action": "accept", "content": {
                "name": "Ada", "email": "ada@example.com", "age": 36, "ratio": 2.5,
                "subscribe": true, "size": "m", "color": "g", "legacy": "b",
                "tags": ["z", "x"], "day": "2026-02-28"
            }})
        );
        for said in [
            "this field is required",
            "2 to 5 characters are asked for, not 1",
            "not an email address",
            "less than the minimum, 0",
            "not an integer",
            "not a date (YYYY-MM-DD)",
        ] {
            assert!(shown.contains(&format!(">   {said}\n")), "{said}: {shown}");
        }
        assert!(
            shown.contains("Your name (`name`, text, 2 to 5 characters, required)"),
            "{shown}"
        );
        assert!(shown.contains("    2) Green (g)"), "{shown}");
        assert!(shown.contains("    2) Beta (b)"), "{shown}");
        assert!(shown.contains("  | Who are you?\\u{1b}[2J"), "{shown}");
        assert!(
            !shown.contains('\u{1b}'),
            "nothing of the server's reaches the terminal raw"
        );
        assert!(shown.contains("Never give passwords"), "{shown}");
    }

    #[test]
    fn a_form_is_declined_cancelled_or_dismissed_at_the_end_of_input() {
        let request = form_request(
            &json!({"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]})
            .to_string(),
        );
        let action = |answers: &str| content(&run(&request, answers).0.unwrap())["action"].clone();
        assert_eq!(action(":decline\n"), "decline");
        assert_eq!(action(":cancel\n"), "cancel");
        assert_eq!(action(""), "cancel");
        assert_eq!(
            action("Ada\nn\n"),
            "decline",
            "anything but yes at the end declines"
        );
        assert_eq!(action("Ada\n"), "cancel");
        assert_eq!(
            action("\n\n\n\n\n"),
            "cancel",
            "five wrong answers dismiss it"
        );
    }

    #[test]
    fn an_overlong_answer_is_refused_and_the_next_line_read() {
        let request = form_request(
            &json!({"type": "object",
            "properties": {"name": {"type": "string"}}})
            .to_string(),
        );
        let answers = format!("{}\nAda\nyes\n", "x".repeat(MAX_ANSWER_BYTES + 10));
        let (result, shown) = run(&request, &answers);
        assert_eq!(content(&result.unwrap())["content"]["name"], "Ada");
        assert!(shown.contains("an answer is at most"), "{shown}");
    }

    #[test]
    fn forms_too_large_to_ask_whole_are_refused() {
        let many: serde_json::Map<String, serde_json::Value> = (0..=MAX_FIELDS)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        let (result, shown) = run(
            &form_request(&json!({"type": "object", "properties": many}).to_string()),
            "",
        );
        assert!(result.unwrap_err().message().contains("65 fields"));
        assert!(shown.is_empty(), "nothing is asked");
        let choices: Vec<String> = (0..=MAX_CHOICES).map(|i| i.to_string()).collect();
        let request = form_request(
            &json!({"type": "object",
            "properties": {"pick": {"type": "string", "enum": choices}}})
            .to_string(),
        );
        assert!(
            run(&request, "")
                .0
                .unwrap_err()
                .message()
                .contains("257 choices")
        );
        let request = form_request(
            &json!({"type": "object",
            "properties": {"blob": {"type": "object"}}})
            .to_string(),
        );
        assert!(
            run(&request, "")
                .0
                .unwrap_err()
                .message()
                .contains("`blob`")
        );
    }

    fn url_request(url: &str) -> Elicitation {
        let params: ElicitUrlParams = serde_json::from_value(json!({
            "mode": "url", "message": "Sign in\u{202e}", "url": url, "elicitationId": "e1"}))
        .unwrap();
        let host = url::Url::parse(url).unwrap().host_str().unwrap().to_owned();
        Elicitation::Url { params, host }
    }

    #[test]
    fn a_url_is_shown_whole_in_ascii_and_opened_only_by_the_person() {
        let request = url_request("https://аuth.example.com/login?next=/a b");
        let (result, shown) = run(&request, "y\n");
        assert_eq!(content(&result.unwrap())["action"], "accept");
        assert!(
            shown.contains("  page: https://xn--uth-5cd.example.com/login?next=/a%20b\n"),
            "{shown}"
        );
        assert!(
            shown.contains("  host: xn--uth-5cd.example.com\n"),
            "{shown}"
        );
        assert!(shown.contains("mcp does not open it"), "{shown}");
        assert!(
            shown.contains("warning: the host is written in Punycode"),
            "{shown}"
        );
        assert!(!shown.contains('\u{202e}'), "{shown}");
        let (_, plain) = run(&url_request("https://auth.example.com/"), "\n");
        assert!(!plain.contains("Punycode"), "{plain}");
        assert_eq!(
            content(&run(&request, "\n").0.unwrap())["action"],
            "decline"
        );
        assert_eq!(content(&run(&request, "").0.unwrap())["action"], "cancel");
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(
            run(&url_request(&long), "y\n")
                .0
                .unwrap_err()
                .message()
                .contains("longer")
        );
    }

    #[test]
    fn dates_and_times_are_checked_for_what_they_are() {
        assert!(is_date("2024-02-29") && !is_date("2023-02-29") && !is_date("2024-13-01"));
        assert!(!is_date("2024-1-01") && !is_date("２０２４-01-01"));
        assert!(is_date_time("2026-12-07T10:30:00Z"));
        assert!(is_date_time("2026-12-07t10:30:00.123+01:00"));
        assert!(!is_date_time("2026-12-07T10:30Z"));
        assert!(!is_date_time("2026-12-07T24:00:00Z"));
        assert!(!is_date_time("2026-12-07 10:30:00Z"));
    }

    fn sampling(messages: usize) -> CreateMessageParams {
        let messages: Vec<serde_json::Value> = (0..messages)
            .map(|i| {
                json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                            "content": {"type": "text", "text": format!("message {i}\u{1b}[2J")}})
            })
            .collect();
        serde_json::from_value(json!({
            "messages": messages, "systemPrompt": "Be brief\u{202e}", "maxTokens": 50,
            "modelPreferences": {"hints": [{"name": "small-model"}]}
        }))
        .unwrap()
    }

    fn sampled(
        params: &CreateMessageParams,
        answers: &str,
    ) -> (Result<CreateMessageResult, HandlerError>, String) {
        let mut input = std::io::Cursor::new(answers.as_bytes().to_vec());
        let mut output = Vec::new();
        let result = sample("every", params, &mut input, &mut output);
        (result, String::from_utf8(output).unwrap())
    }

    #[test]
    fn a_person_writes_the_models_reply_and_sends_it_only_after_a_yes() {
        let params = sampling(2);
        let (result, shown) = sampled(&params, "Four.\ny\n");
        let result = serde_json::to_value(result.unwrap()).unwrap();
        assert_eq!(result["content"], json!({"type": "text", "text": "Four."}));
        assert_eq!(result["model"], PERSON_MODEL);
        for said in [
            "server `every` asks for a model's reply (sampling)",
            "system prompt:\n  | Be brief\\u{202e}\n",
            "user:\n  | message 0\\u{1b}[2J\n",
            "assistant:\n  | message 1\\u{1b}[2J\n",
            "(at most 50 tokens; models it prefers: small-model)",
        ] {
            assert!(shown.contains(said), "{said}: {shown}");
        }
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{202e}'));
        for refusal in [":decline\n", "", "Four.\nn\n", "Four.\n"] {
            let error = sampled(&params, refusal).0.unwrap_err();
            assert_eq!(error.code(), -1, "{refusal:?}");
        }
        // A long conversation shows its latest messages.
        let (_, shown) = sampled(&sampling(SAMPLED_MESSAGES + 3), "");
        assert!(shown.contains("(3 earlier messages not shown)"), "{shown}");
        assert!(
            !shown.contains("message 2\\") && shown.contains("message 3\\"),
            "{shown}"
        );
    }
}

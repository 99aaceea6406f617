//! How the hub's values look to the page: plain JSON, exact (the page
//! escapes and bounds what it shows), with a server's prose always in a
//! field of its own so the page can label it as the server's words.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_hub::{HubError, ServerStatus, ServerStatusKind};
use mcp_types::Era;
use mcp_types::text::Chain;
use serde_json::{Value, json};

/// Longest server message (a JSON-RPC error's text) handed to the page
/// whole; a longer one is cut, and the cut is said (`serverMessageBytes`).
pub(crate) const MAX_SERVER_MESSAGE_BYTES: usize = 8 * 1024;

/// `legacy` or `modern`.
pub(crate) fn era_name(era: Era) -> &'static str {
    match era {
        Era::Legacy => "legacy",
        _ => "modern",
    }
}

/// A status word for the page.
pub(crate) fn status_name(kind: ServerStatusKind) -> &'static str {
    match kind {
        ServerStatusKind::Starting => "starting",
        ServerStatusKind::Ready => "ready",
        ServerStatusKind::Restarting => "restarting",
        ServerStatusKind::Failed => "failed",
        _ => "stopped",
    }
}

/// A hub error: our words (`message`, the whole chain on one line), its
/// kind and cause, and apart from them the server's own words (its
/// message, the stderr tail it left).
pub(crate) fn hub_error(error: &HubError) -> Value {
    let mut out = json!({
        "kind": error.kind(),
        "cause": error.cause().as_str(),
        "message": Chain(error).to_string(),
    });
    if let Some(message) = error.server_message() {
        let (text, cut) = clip(message, MAX_SERVER_MESSAGE_BYTES);
        out["serverMessage"] = json!(text);
        if cut {
            out["serverMessageBytes"] = json!(message.len());
        }
    }
    if let Some(tail) = error.stderr_tail() {
        // Already bounded by the transport (its last 64 KiB).
        out["stderrTail"] = json!(tail);
    }
    if let Some(line) = error.unparsed_line() {
        // Bounded by the session (`UNPARSED_LINE_BYTES`).
        out["unparsedLine"] = json!(line);
    }
    if let Some(pages) = error.url_elicitations() {
        out["urlElicitations"] = pages.iter().map(page_to_open).collect();
    }
    out
}

/// The longest URL of a page to open shown; a longer one is not shown.
const MAX_URL_BYTES: usize = 8 * 1024;

/// A page's URL as the page shows it: whole, as the URL parser writes it
/// (the host in ASCII, other characters percent-encoded), or not at all.
pub(crate) fn page_url(url: &str) -> Result<String, mcp_session::HandlerError> {
    let url = url::Url::parse(url)
        .map_err(|_| mcp_session::HandlerError::invalid_params("the URL does not parse"))?;
    if url.as_str().len() > MAX_URL_BYTES {
        return Err(mcp_session::HandlerError::refused(format!(
            "a URL of {} bytes is longer than the playground shows whole (at most {MAX_URL_BYTES})",
            url.as_str().len()
        )));
    }
    Ok(url.into())
}

/// A page a `-32042` answer asks the user to open first: its words, its
/// URL as the URL parser writes it (the host in ASCII) and its host, or
/// why it is not shown. Bounded like every text handed to the page.
fn page_to_open(page: &Result<mcp_session::Elicitation, mcp_session::HandlerError>) -> Value {
    let refused = |why: &str| json!({"refused": why});
    let (params, host) = match page {
        Ok(mcp_session::Elicitation::Url { params, host }) => (params, host),
        Ok(_) => return refused("not a URL elicitation"),
        Err(why) => return refused(why.message()),
    };
    let url = match page_url(&params.url) {
        Ok(url) => url,
        Err(why) => return refused(why.message()),
    };
    let (message, _) = clip(&params.message, MAX_SERVER_MESSAGE_BYTES);
    json!({
        "message": message,
        "url": url,
        "host": host,
        "punycode": mcp_types::text::is_punycode_host(host),
    })
}

/// One server as the servers view shows it. `next_attempt` is when a
/// restarting server will be started again, if known.
pub(crate) fn server(name: &str, status: &ServerStatus, next_attempt: Option<SystemTime>) -> Value {
    let mut out = json!({
        "name": name,
        "status": status_name(status.kind),
        "restarts": status.restarts,
        "consecutiveFailures": status.consecutive_failures,
        "tools": status.tools,
        "pendingGeneration": status.pending_generation,
    });
    if let Some(info) = &status.info {
        out["era"] = json!(era_name(info.era));
        out["protocolVersion"] = json!(info.version.as_str());
        out["serverInfo"] = serde_json::to_value(&info.implementation).unwrap_or(Value::Null);
        out["capabilities"] = serde_json::to_value(&info.capabilities).unwrap_or(Value::Null);
        if let Some(instructions) = &info.instructions {
            out["instructions"] = json!(instructions);
        }
    }
    if let Some(error) = &status.last_error {
        out["error"] = hub_error(error);
    }
    if status.kind == ServerStatusKind::Restarting
        && let Some(at) = next_attempt
    {
        out["nextAttemptAt"] = json!(epoch_millis(at));
    }
    out
}

/// Milliseconds since the Unix epoch (what JavaScript's `Date` takes).
pub(crate) fn epoch_millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Milliseconds of a duration.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `text` cut to at most `max` bytes at a character boundary; whether it
/// was cut.
pub(crate) fn clip(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_keeps_whole_characters_and_says_so() {
        assert_eq!(clip("abc", 3), ("abc", false));
        assert_eq!(clip("abcd", 3), ("abc", true));
        // "é" is two bytes: a cut inside it moves before it.
        assert_eq!(clip("aé", 2), ("a", true));
    }

    #[test]
    fn errors_keep_the_servers_words_apart_from_ours() {
        let error = HubError::UnknownServer {
            name: "nope".into(),
        };
        let value = hub_error(&error);
        assert_eq!(value["kind"], json!(error.kind()));
        assert!(value["message"].as_str().unwrap().contains("nope"));
        assert!(value.get("serverMessage").is_none());
        assert!(value.get("stderrTail").is_none());
    }
}

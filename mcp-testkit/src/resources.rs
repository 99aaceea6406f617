//! `resources/read` (scripted resources and template matches, optionally
//! asking the client first) and the legacy `resources/subscribe` /
//! `resources/unsubscribe`.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::input::{self, Step};
use crate::request::{Ctx, Era, cacheable};
use crate::server::Shared;
use crate::specs::{ListKind, visible};
use crate::wire;

/// `resources/read`: a listed resource's content, or the text of the first
/// template the URI matches. Unknown URI: `-32002` in the legacy era,
/// `-32602` in 2026-07-28 (as each era's spec says), `data: {uri}`.
pub(crate) async fn read(shared: &Arc<Shared>, id: &Value, era: Era, params: Value) {
    let Some(uri) = params.get("uri").and_then(Value::as_str).map(str::to_owned) else {
        let message = "Invalid params: resources/read needs a string uri";
        let reply = wire::error(id, wire::INVALID_PARAMS, message, None);
        return shared.send(&reply).await;
    };
    if let Some(contents) = crate::skills::read(shared, &uri) {
        let body = cacheable(shared, era, json!({"contents": [contents]}));
        return shared.send(&wire::result(id, body)).await;
    }
    let script = &shared.script;
    let changes = shared.state().changes(ListKind::Resources);
    let resource = script.resources.iter().find(|r| {
        r.uri() == Some(&uri) && visible(r.appear_at_change, r.vanish_at_change, changes)
    });
    if let (Some(resource), Some(token)) = (resource, params["_meta"].get("progressToken")) {
        let steps = resource.progress_steps;
        for step in 1..=steps {
            let progress = json!({"progressToken": token, "progress": step, "total": steps,
                                  "message": format!("step {step} of {steps}")});
            shared
                .send(&wire::notification("notifications/progress", progress))
                .await;
        }
    }
    if let Some(log) = resource.and_then(|r| r.log_on_read.as_ref()) {
        let ctx = Ctx::new(shared, id, era, params.clone());
        crate::tool_call::emit_log(&ctx, &log.level, log.message.clone(), None).await;
    }
    let (contents, input) = match resource {
        Some(resource) => (resource.contents(), resource.input.clone()),
        None => match read_template(shared, &uri, changes) {
            Some(contents) => (contents, None),
            None => {
                let code = match era {
                    Era::Legacy => wire::RESOURCE_NOT_FOUND,
                    Era::Modern => wire::INVALID_PARAMS,
                };
                let reply = wire::error(id, code, "Resource not found", Some(json!({"uri": uri})));
                return shared.send(&reply).await;
            }
        },
    };
    let Some(input) = input else {
        let body = cacheable(shared, era, json!({"contents": [contents]}));
        return shared.send(&wire::result(id, body)).await;
    };
    let ctx = Ctx::new(shared, id, era, params);
    let target = format!("resources/read:{uri}");
    let run = async move {
        if let Step::Done(answers) = input::gather(&ctx, &input, &target).await {
            let body = json!({
                "contents": [contents],
                "_meta": {wire::META_INPUT_RESPONSES: input::report(&answers)},
            });
            let body = cacheable(&ctx.shared, ctx.era, body);
            ctx.send_result(body).await;
        }
    };
    shared.spawn_or_refuse(id, run).await;
}

/// The contents of `uri` read through the first visible template with
/// `text` that it matches.
fn read_template(shared: &Shared, uri: &str, changes: u32) -> Option<Value> {
    shared
        .script
        .resource_templates
        .iter()
        .filter(|t| visible(t.appear_at_change, t.vanish_at_change, changes))
        .find_map(|template| {
            let text = template.text.as_ref()?;
            let bindings = match_template(template.uri_template()?, uri)?;
            let mut out = text.clone();
            for (name, value) in &bindings {
                out = out.replace(&format!("{{{name}}}"), value);
            }
            let mut contents = json!({"uri": uri, "text": out});
            if let Some(mime) = template.template.get("mimeType") {
                contents["mimeType"] = mime.clone();
            }
            Some(contents)
        })
}

/// One piece of a URI template.
#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Literal(&'a str),
    /// A variable; `reserved` (`{+name}`) values may contain `/`.
    Var {
        name: &'a str,
        reserved: bool,
    },
}

fn pieces(template: &str) -> Option<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let close = rest.find('}')?;
                let expr = &rest[1..close];
                let (name, reserved) = match expr.strip_prefix('+') {
                    Some(name) => (name, true),
                    None => (expr, false),
                };
                out.push(Piece::Var { name, reserved });
                rest = &rest[close + 1..];
            }
            Some(at) => {
                out.push(Piece::Literal(&rest[..at]));
                rest = &rest[at..];
            }
            None => {
                out.push(Piece::Literal(rest));
                rest = "";
            }
        }
    }
    Some(out)
}

/// Matches `uri` against a (simple-expansion) URI template; returns the
/// variable bindings. Variables match at least one character, never `/`
/// unless reserved (`{+var}`); shortest match first.
pub(crate) fn match_template(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    let pieces = pieces(template)?;
    let mut bindings = Vec::new();
    match_from(&pieces, uri, &mut bindings).then_some(bindings)
}

fn match_from(pieces: &[Piece<'_>], uri: &str, bindings: &mut Vec<(String, String)>) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return uri.is_empty();
    };
    match first {
        Piece::Literal(text) => uri
            .strip_prefix(text)
            .is_some_and(|after| match_from(rest, after, bindings)),
        Piece::Var { name, reserved } => {
            for (end, ch) in uri.char_indices().map(|(i, c)| (i + c.len_utf8(), c)) {
                if ch == '/' && !reserved {
                    break;
                }
                bindings.push(((*name).to_owned(), uri[..end].to_owned()));
                if match_from(rest, &uri[end..], bindings) {
                    return true;
                }
                bindings.pop();
            }
            false
        }
    }
}

/// `resources/subscribe` (legacy): remembers `uri` for
/// [`Behavior::TouchResource`](crate::Behavior::TouchResource).
pub(crate) async fn subscribe(shared: &Shared, id: &Value, params: &Value, on: bool) {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        let message = "Invalid params: needs a string uri";
        let reply = wire::error(id, wire::INVALID_PARAMS, message, None);
        return shared.send(&reply).await;
    };
    let full = {
        let mut state = shared.state();
        if !on {
            state.resource_subscriptions.remove(uri);
            false
        } else if state.resource_subscriptions.len() >= shared.script.max_subscriptions
            && !state.resource_subscriptions.contains(uri)
        {
            true
        } else {
            state.resource_subscriptions.insert(uri.to_owned());
            false
        }
    };
    let reply = if full {
        let message = format!(
            "Internal error: more than {} subscriptions",
            shared.script.max_subscriptions
        );
        wire::error(id, wire::INTERNAL_ERROR, &message, None)
    } else {
        wire::result(id, json!({}))
    };
    shared.send(&reply).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_bind_variables_without_crossing_slashes() {
        assert_eq!(
            match_template("file:///logs/{day}.txt", "file:///logs/monday.txt"),
            Some(vec![("day".into(), "monday".into())])
        );
        assert_eq!(
            match_template("file:///logs/{day}.txt", "file:///logs/a/b.txt"),
            None
        );
        assert_eq!(
            match_template("repo://{owner}/{name}", "repo://me/tool"),
            Some(vec![
                ("owner".into(), "me".into()),
                ("name".into(), "tool".into())
            ])
        );
        assert_eq!(
            match_template("file:///{+path}", "file:///a/b/c"),
            Some(vec![("path".into(), "a/b/c".into())])
        );
        assert_eq!(match_template("x://{a}", "x://"), None);
        assert_eq!(match_template("x://{a", "x://b"), None);
    }
}

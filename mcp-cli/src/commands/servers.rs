//! `mcp list`, `mcp get NAME`, `mcp remove NAME`: the configured servers as
//! they are written, and taking one out.
//!
//! `list` and `get` read the file in use (`--config`, else `./.mcp.json`,
//! else the user file) and show it as written: nothing is started and no
//! `${VAR}` is expanded, so no secret a variable holds is ever shown, and a
//! project file may be looked at before it is approved (its approval is
//! said). Everything from the file is shown escaped. `remove` rewrites the
//! file as `mcp add` does ([`rewrite`]): locked, replaced whole, an
//! approved project file kept approved.

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::args::{GetArgs, ListArgs, RemoveArgs};
use crate::commands::Context;
use crate::config::{
    self, Config, Document, EntryKind, OrderedObject, SERVERS_KEY, ServerEntry, Source, trust,
};
use crate::error::{CliError, shell_word};
use crate::output::{self, table};
use crate::safe_write::Locked;

/// Where a project file stands with the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Approval {
    Approved,
    NotApproved,
    Changed,
}

impl Approval {
    /// The `--json` word.
    fn word(self) -> &'static str {
        match self {
            Approval::Approved => "approved",
            Approval::NotApproved => "not_approved",
            Approval::Changed => "changed",
        }
    }
}

/// The configuration file in use, read and checked but not approved,
/// started or expanded.
struct Read {
    file: PathBuf,
    source: Source,
    config: Config,
    doc: Document,
    /// The file's text.
    text: String,
    /// A project file's standing (`None` for the user's own files).
    approval: Option<Approval>,
}

fn read(ctx: &Context) -> Result<Read, CliError> {
    let (file, source) = config::locate(ctx.config.as_deref())?;
    let text = config::read_text(&file)?;
    let config = config::parse(&file, &text)?;
    let doc = Document::parse(&file, &text)?;
    let approval = match source {
        Source::Project => {
            let store = trust::TrustStore::default_location()?;
            Some(
                match store.standing(&trust::canonical(&file)?, &trust::digest(&text))? {
                    trust::Standing::Approved(_) => Approval::Approved,
                    trust::Standing::Unknown => Approval::NotApproved,
                    trust::Standing::Changed => Approval::Changed,
                },
            )
        }
        Source::Explicit | Source::User => None,
    };
    Ok(Read {
        file,
        source,
        config,
        doc,
        text,
        approval,
    })
}

fn source_word(source: Source) -> &'static str {
    match source {
        Source::Explicit => "explicit",
        Source::Project => "project",
        Source::User => "user",
    }
}

/// `.mcp.json (project file, approved)`.
fn file_words(read: &Read) -> String {
    let whose = match (read.source, read.approval) {
        (Source::Explicit, _) => "named with --config".to_owned(),
        (Source::User, _) => "your user file".to_owned(),
        (Source::Project, Some(Approval::Approved)) => "project file, approved".to_owned(),
        (Source::Project, Some(Approval::Changed)) => {
            "project file, changed since you approved it: `mcp trust` shows it".to_owned()
        }
        (Source::Project, _) => {
            "project file, not approved: `mcp trust` shows and approves it".to_owned()
        }
    };
    format!("{} ({whose})", read.file.display())
}

/// `stdio`, `http` or `sse`.
fn kind_word(entry: &ServerEntry) -> &'static str {
    match &entry.kind {
        EntryKind::Stdio(_) => "stdio",
        EntryKind::Remote(remote) => match remote.transport {
            crate::args::RemoteTransport::Http => "http",
            crate::args::RemoteTransport::Sse => "sse",
        },
        EntryKind::OpenApi(_) => "openapi",
    }
}

/// The command line or URL, as written (`${VAR}` not expanded).
fn target_words(entry: &ServerEntry) -> String {
    match &entry.kind {
        EntryKind::Stdio(stdio) => std::iter::once(&stdio.command)
            .chain(&stdio.args)
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" "),
        EntryKind::Remote(remote) => remote.url.clone(),
        EntryKind::OpenApi(openapi) => openapi
            .documents
            .iter()
            .map(|d| format!("{} -> {}", d.spec, d.base_url))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `mcp list [--json]`.
pub(crate) fn list(ctx: &Context, args: &ListArgs) -> Result<(), CliError> {
    let read = read(ctx)?;
    let file = read.file.display().to_string();
    if args.json {
        let servers: Vec<Value> = read
            .config
            .servers
            .iter()
            .map(|entry| {
                let mut server = json!({
                    "name": entry.name,
                    "type": kind_word(entry),
                    "disabled": entry.disabled,
                    "file": file,
                });
                match &entry.kind {
                    EntryKind::Stdio(stdio) => {
                        server["command"] = json!(stdio.command);
                        server["args"] = json!(stdio.args);
                    }
                    EntryKind::Remote(remote) => server["url"] = json!(remote.url),
                    EntryKind::OpenApi(openapi) => {
                        server["documents"] = json!(
                            openapi
                                .documents
                                .iter()
                                .map(|d| json!({"openapi": d.spec, "base_url": d.base_url}))
                                .collect::<Vec<_>>()
                        );
                    }
                }
                server
            })
            .collect();
        let mut doc = json!({
            "file": file,
            "source": source_word(read.source),
            "servers": servers,
        });
        if let Some(approval) = read.approval {
            doc["approval"] = json!(approval.word());
        }
        return output::print_json(&doc);
    }
    let mut out = String::new();
    if read.config.servers.is_empty() {
        out.push_str(&format!(
            "no servers in {}; add one with `mcp add`\n",
            file_words(&read)
        ));
        return output::print(&out);
    }
    let rows = read
        .config
        .servers
        .iter()
        .map(|entry| {
            let kind = if entry.disabled {
                format!("{} (disabled)", kind_word(entry))
            } else {
                kind_word(entry).to_owned()
            };
            // The table escapes every cell.
            vec![entry.name.clone(), kind, target_words(entry), file.clone()]
        })
        .collect();
    out.push_str(&table(&["name", "type", "command or url", "file"], rows));
    out.push_str(&format!("\nfrom {}\n", file_words(&read)));
    output::print(&out)
}

/// One value of an entry as a person reads it: a string as it is, strings
/// as shell words, an object of strings as `KEY=VALUE` lines, anything
/// else as JSON.
fn value_lines(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) if items.iter().all(Value::is_string) => vec![
            items
                .iter()
                .filter_map(Value::as_str)
                .map(shell_word)
                .collect::<Vec<_>>()
                .join(" "),
        ],
        Value::Object(map) if !map.is_empty() && map.values().all(Value::is_string) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect(),
        other => vec![other.to_string()],
    }
}

/// The members of server `name`'s entry in `text`, in the file's order.
fn written_in_order(text: &str, name: &str) -> Option<Vec<(String, Value)>> {
    let raw_member = |text: &str, key: &str| -> Option<Box<RawValue>> {
        serde_json::from_str::<OrderedObject<Box<RawValue>>>(text)
            .ok()?
            .0
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    let servers = raw_member(text, SERVERS_KEY)?;
    let entry = raw_member(servers.get(), name)?;
    serde_json::from_str::<OrderedObject<Value>>(entry.get())
        .ok()
        .map(|o| o.0)
}

/// `mcp get NAME [--json]`: the entry as written.
pub(crate) fn get(ctx: &Context, args: &GetArgs) -> Result<(), CliError> {
    let read = read(ctx)?;
    let entry = read.config.server(&args.name)?;
    let written = read
        .doc
        .servers
        .iter()
        .find(|(name, _)| *name == args.name)
        .map(|(_, value)| value.clone())
        .unwrap_or(Value::Null);
    if args.json {
        let mut doc = json!({
            "name": entry.name,
            "file": read.file.display().to_string(),
            "source": source_word(read.source),
            "type": kind_word(entry),
            "entry": written,
        });
        if let Some(approval) = read.approval {
            doc["approval"] = json!(approval.word());
        }
        return output::print_json(&doc);
    }
    let mut rows = vec![
        vec!["name".to_owned(), entry.name.clone()],
        vec!["file".to_owned(), file_words(&read)],
    ];
    if let Value::Object(members) = &written {
        if !members.contains_key("type") {
            rows.push(vec!["type".to_owned(), kind_word(entry).to_owned()]);
        }
        // In the order the file has them.
        let ordered = written_in_order(&read.text, &args.name)
            .unwrap_or_else(|| members.clone().into_iter().collect());
        for (key, value) in &ordered {
            for (i, line) in value_lines(value).into_iter().enumerate() {
                let label = if i == 0 { key.clone() } else { String::new() };
                rows.push(vec![label, line]);
            }
        }
    }
    output::print(&table(&["key", "value"], rows))
}

/// `mcp remove NAME`: the entry taken out of the file in use.
pub(crate) fn remove(ctx: &Context, args: &RemoveArgs) -> Result<(), CliError> {
    let (file, source) = config::locate(ctx.config.as_deref())?;
    rewrite(&file, source, |doc| {
        let before = doc.servers.len();
        doc.servers.retain(|(name, _)| *name != args.name);
        if doc.servers.len() == before {
            return Err(CliError::UnknownServer {
                name: args.name.clone(),
                file: file.clone(),
                known: doc.servers.iter().map(|(n, _)| n.clone()).collect(),
            });
        }
        Ok(())
    })?;
    output::print(&format!(
        "removed server `{}` from {}\n",
        args.name,
        file.display()
    ))
}

/// Changes the configuration `file` with `change` and writes it back
/// safely: the directory locked from reading to replacing (a concurrent
/// writer waits, so no change is lost), the file replaced whole (see
/// `safe_write`), its order kept. The file must be valid before and after.
/// A project file the user had approved stays approved with the change
/// (it is their own); an unapproved one stays unapproved.
pub(crate) fn rewrite<T>(
    file: &Path,
    source: Source,
    change: impl FnOnce(&mut Document) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let write_error = |source| CliError::ConfigWrite {
        file: file.to_path_buf(),
        source,
    };
    let lock = Locked::acquire(file, 0o700).map_err(write_error)?;
    let (mut doc, old_text) = if file.exists() {
        let text = config::read_text(file)?;
        // The file must be valid before we touch it.
        config::parse(file, &text)?;
        (Document::parse(file, &text)?, Some(text))
    } else {
        (Document::default(), None)
    };
    let changed = change(&mut doc)?;
    let text = doc.to_pretty();
    // What we write must read back.
    let new_config = config::parse(file, &text)?;
    let store = match (source, &old_text) {
        (Source::Project, Some(old)) => {
            let store = trust::TrustStore::default_location()?;
            let approved = matches!(
                store.standing(&trust::canonical(file)?, &trust::digest(old))?,
                trust::Standing::Approved(_)
            );
            approved.then_some(store)
        }
        _ => None,
    };
    lock.replace(&text, 0o600).map_err(write_error)?;
    drop(lock);
    if let Some(store) = store {
        store.approve(trust::record_for(&new_config, &text)?)?;
    }
    Ok(changed)
}

//! The configuration: where it is, what it says, and what is wrong with it.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "notes":  { "command": "notes-server", "args": ["--db", "${HOME}/notes.db"],
//!                 "env": {"LOG": "info"}, "env_inherit": ["NOTES_TOKEN"], "cwd": "/tmp" },
//!     "github": { "type": "http", "url": "https://api.example.com/mcp",
//!                 "token_env": "GITHUB_TOKEN", "negotiation": "auto",
//!                 "allow": {"tools": ["search"]}, "max_content_bytes": 65536 }
//!   }
//! }
//! ```
//!
//! The file is `--config FILE`, else `./.mcp.json`, else
//! `$XDG_CONFIG_HOME/mcp/config.json` (`~/.config/mcp/config.json`).

mod document;
mod entry;
mod expand;
pub(crate) mod secrets;
pub(crate) mod trust;
mod url_check;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

pub(crate) use document::{Document, OrderedObject, SERVERS_KEY};
pub(crate) use entry::{
    AuthEntry, EntryKind, MAX_TIMEOUT_MS, OpenApiEntry, RemoteEntry, SchemeSecret, ServerEntry,
    SourceEntry, StdioEntry, TokenEntry, child, is_permission_name,
};
pub(crate) use expand::{expand_only, is_variable_name};
pub(crate) use url_check::{UrlProblem, check_url};

use crate::error::{CliError, ConfigProblem};

/// Largest configuration file read.
pub(crate) const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The project file looked at when `--config` is not given.
pub(crate) const PROJECT_FILE: &str = ".mcp.json";

/// Whose choice a configuration file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Named with `--config`.
    Explicit,
    /// `./.mcp.json`: it came with the directory, so it needs approval.
    Project,
    /// The user's own file under the XDG config directory.
    User,
}

/// A loaded, checked configuration.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) file: PathBuf,
    pub(crate) servers: Vec<ServerEntry>,
    /// The variables `${VAR}` may read: all (`None`) in the user's own
    /// files, those its approval listed in a project file.
    pub(crate) variables: Option<BTreeSet<String>>,
}

impl Config {
    /// The server called `name`.
    pub(crate) fn server(&self, name: &str) -> Result<&ServerEntry, CliError> {
        self.servers
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| CliError::UnknownServer {
                name: name.to_owned(),
                file: self.file.clone(),
                known: self.servers.iter().map(|s| s.name.clone()).collect(),
            })
    }
}

/// The user-level file: `$XDG_CONFIG_HOME/mcp/config.json`, else
/// `$HOME/.config/mcp/config.json`.
pub(crate) fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("mcp").join("config.json"))
}

/// The file to read: `explicit`, else the project file, else the user file.
pub(crate) fn locate(explicit: Option<&Path>) -> Result<(PathBuf, Source), CliError> {
    if let Some(path) = explicit {
        return Ok((path.to_path_buf(), Source::Explicit));
    }
    let project = PathBuf::from(PROJECT_FILE);
    if project.is_file() {
        return Ok((project, Source::Project));
    }
    let mut looked = vec![project];
    if let Some(user) = user_file() {
        if user.is_file() {
            return Ok((user, Source::User));
        }
        looked.push(user);
    }
    Err(CliError::NoConfig { looked })
}

/// The file `mcp add` writes: `explicit`, else an existing project file,
/// else the user file (created).
pub(crate) fn write_target(explicit: Option<&Path>) -> Result<(PathBuf, Source), CliError> {
    match locate(explicit) {
        Ok(found) => Ok(found),
        Err(CliError::NoConfig { looked }) => user_file()
            .map(|user| (user, Source::User))
            .ok_or(CliError::NoConfig { looked }),
        Err(e) => Err(e),
    }
}

/// Reads a file of at most `limit` bytes; `None` when it is larger (more is
/// refused, never cut).
pub(crate) fn read_text_limited(file: &Path, limit: u64) -> std::io::Result<Option<String>> {
    let handle = std::fs::File::open(file)?;
    let mut text = String::new();
    handle.take(limit + 1).read_to_string(&mut text)?;
    Ok((text.len() as u64 <= limit).then_some(text))
}

/// Reads a configuration file of at most [`MAX_CONFIG_BYTES`].
pub(crate) fn read_text(file: &Path) -> Result<String, CliError> {
    read_text_limited(file, MAX_CONFIG_BYTES)
        .map_err(|source| CliError::ConfigRead {
            file: file.to_path_buf(),
            source,
        })?
        .ok_or_else(|| CliError::ConfigTooLarge {
            file: file.to_path_buf(),
            limit: MAX_CONFIG_BYTES,
        })
}

/// How an unapproved project file is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prompt {
    /// Show what it would do and ask on the terminal.
    Ask,
    /// Refuse it, saying how to approve it.
    Refuse,
}

/// Loads and checks the configuration `explicit` or the default one. A
/// project file is used only once approved (asked for on a terminal with
/// `Prompt::Ask`), and then reads only the variables its approval lists.
pub(crate) fn load(explicit: Option<&Path>, prompt: Prompt) -> Result<Config, CliError> {
    let (file, source) = locate(explicit)?;
    let text = read_text(&file)?;
    let mut config = parse(&file, &text)?;
    if source != Source::Project {
        return Ok(config);
    }
    if let Some(user) = user_file().filter(|u| u.is_file()) {
        eprintln!(
            "mcp: using the project file {} (the user file {} is not read)",
            file.display(),
            user.display()
        );
    }
    let store = trust::TrustStore::default_location()?;
    let canonical = trust::canonical(&file)?;
    let standing = store.standing(&canonical, &trust::digest(&text))?;
    match standing {
        trust::Standing::Approved(variables) => {
            config.variables = Some(variables);
            Ok(config)
        }
        standing => {
            let changed = standing == trust::Standing::Changed;
            if prompt == Prompt::Refuse {
                return Err(CliError::NotApproved { file, changed });
            }
            let heading = if changed {
                format!(
                    "{} has changed since you approved it. It would now let mcp:",
                    file.display()
                )
            } else {
                format!(
                    "{} is a project file: it came with this directory, not from you. It would let mcp:",
                    file.display()
                )
            };
            eprint!("{heading}\n{}", trust::summary(&config));
            let approved = trust::ask(
                "Trust this file and go on? [y/N] ",
                &mut std::io::stdin().lock(),
                &mut std::io::stderr(),
            )
            .unwrap_or(false);
            if !approved {
                return Err(CliError::NotApproved { file, changed });
            }
            let record = trust::record_for(&config, &text)?;
            config.variables = Some(record.variables.clone());
            store.approve(record)?;
            Ok(config)
        }
    }
}

/// Checks a whole document.
pub(crate) fn parse(file: &Path, text: &str) -> Result<Config, CliError> {
    let doc = Document::parse(file, text)?;
    if let Some((key, _)) = doc.top.iter().find(|(k, _)| k != "$schema") {
        return Err(CliError::config(
            file,
            &child("", key),
            ConfigProblem::UnknownKey {
                allowed: &["mcpServers", "$schema"],
            },
        ));
    }
    if doc.servers_at.is_none() {
        return Err(CliError::config(
            file,
            "(root)",
            ConfigProblem::MissingKey { key: SERVERS_KEY },
        ));
    }
    let mut servers: Vec<ServerEntry> = Vec::with_capacity(doc.servers.len());
    for (name, value) in &doc.servers {
        if servers.iter().any(|s| &s.name == name) {
            return Err(CliError::config(
                file,
                &child(SERVERS_KEY, name),
                ConfigProblem::DuplicateKey,
            ));
        }
        servers.push(entry::parse_entry(file, name, value)?);
    }
    Ok(Config {
        file: file.to_path_buf(),
        servers,
        variables: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> (String, ConfigProblem) {
        match parse(Path::new("c.json"), text).unwrap_err() {
            CliError::Config { location, problem } => (location.path, problem),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_full_config_parses() {
        let config = parse(
            Path::new("c.json"),
            r#"{"mcpServers": {
                "b": {"command": "x", "args": ["1"], "env": {"A": "b"}, "env_inherit": ["T"], "cwd": "/"},
                "a": {"type": "sse", "url": "https://e.com/sse", "token_env": "TOK", "token_header": "X-Key",
                      "token_prefix": "", "headers": {"X-A": "1"}, "negotiation": "legacy",
                      "request_timeout_ms": 5000, "allow": {"tools": ["t"]}, "max_content_bytes": 2048}
            }}"#,
        )
        .unwrap();
        assert_eq!(config.servers[0].name, "b");
        assert_eq!(config.servers[1].name, "a");
        match &config.servers[1].kind {
            EntryKind::Remote(r) => {
                assert_eq!(r.transport, crate::args::RemoteTransport::Sse);
                assert_eq!(r.token.as_ref().unwrap().header.as_deref(), Some("X-Key"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn problems_name_their_path() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"mcpServers": {"a": {"command": 1}}}"#,
                "mcpServers.a.command",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": ["ok", 2]}}}"#,
                "mcpServers.a.args[1]",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "colour": 2}}}"#,
                "mcpServers.a.colour",
            ),
            (
                r#"{"mcpServers": {"a b": {"command": "x"}}}"#,
                "mcpServers[\"a b\"]",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "https://u:p@e.com/"}}}"#,
                "mcpServers.a.url",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "https://e.com/", "args": []}}}"#,
                "mcpServers.a.args",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "env": {"1A": "v"}}}}"#,
                "mcpServers.a.env.1A",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "https://e.com/", "headers": {"a b": "v"}}}}"#,
                "mcpServers.a.headers[\"a b\"]",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "max_content_bytes": 10}}}"#,
                "mcpServers.a.max_content_bytes",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "negotiation": "new"}}}"#,
                "mcpServers.a.negotiation",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "allow": {"tool": []}}}}"#,
                "mcpServers.a.allow.tool",
            ),
            (r#"{"mcpServers": {"a": {}}}"#, "mcpServers.a"),
            (r#"{"servers": {}}"#, "servers"),
            (r#"{"mcpServers": []}"#, "mcpServers"),
        ];
        for (text, path) in cases {
            assert_eq!(problem(text).0, *path, "{text}");
        }
    }

    #[test]
    fn permissions_and_helpers_parse_and_bad_ones_name_their_place() {
        let config = parse(
            Path::new("c.json"),
            r#"{"mcpServers": {
                "a": {"command": "x", "permission": "team:notes.read-1", "helpers": true,
                      "tool_permissions": {"create": "notes.write", "x y": "w"}},
                "b": {"url": "https://e.com/", "allow": {"tools": ["t"]}, "permission": "p"}
            }}"#,
        )
        .unwrap();
        let a = &config.servers[0];
        assert_eq!(a.permission.as_deref(), Some("team:notes.read-1"));
        assert!(a.helpers);
        assert_eq!(
            a.tool_permissions,
            [
                ("create".to_owned(), "notes.write".to_owned()),
                ("x y".to_owned(), "w".to_owned())
            ]
        );
        assert!(!config.servers[1].helpers);
        assert!(config.servers[1].tool_permissions.is_empty());
        let long = "p".repeat(65);
        let cases = [
            (
                r#"{"mcpServers": {"a": {"command": "x", "permission": "a b"}}}"#.to_owned(),
                "mcpServers.a.permission",
                ConfigProblem::InvalidPermission,
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "permission": ""}}}"#.to_owned(),
                "mcpServers.a.permission",
                ConfigProblem::InvalidPermission,
            ),
            (
                format!(r#"{{"mcpServers": {{"a": {{"command": "x", "permission": "{long}"}}}}}}"#),
                "mcpServers.a.permission",
                ConfigProblem::InvalidPermission,
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tool_permissions": {"t": "w/x"}}}}"#
                    .to_owned(),
                "mcpServers.a.tool_permissions.t",
                ConfigProblem::InvalidPermission,
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tool_permissions": {"": "w"}}}}"#
                    .to_owned(),
                "mcpServers.a.tool_permissions[\"\"]",
                ConfigProblem::Empty,
            ),
        ];
        for (text, path, expected) in cases {
            assert_eq!(problem(&text), (path.to_owned(), expected), "{text}");
        }
        for (text, path) in [
            (
                r#"{"mcpServers": {"a": {"command": "x", "permission": 1}}}"#,
                "mcpServers.a.permission",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tool_permissions": ["t"]}}}"#,
                "mcpServers.a.tool_permissions",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tool_permissions": {"t": true}}}}"#,
                "mcpServers.a.tool_permissions.t",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "helpers": "yes"}}}"#,
                "mcpServers.a.helpers",
            ),
        ] {
            let (at, problem) = problem(text);
            assert_eq!(at, path, "{text}");
            assert!(matches!(problem, ConfigProblem::WrongType { .. }), "{text}");
        }
    }
}

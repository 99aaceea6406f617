//! `mcp add`: writes a server entry into the configuration file.
//!
//! Refuses token values (only environment variable names are written),
//! credentials embedded in URLs, invalid header names, and names already
//! taken (unless `--force`). The file is rewritten whole, atomically, with
//! its top-level members and servers in their order.

use std::path::Path;

use mcp_hub::ServerName;
use serde_json::{Map, Value, json};

use crate::args::{AddArgs, RemoteTransport};
use crate::commands::Context;
use crate::config::{self, Document, UrlProblem, check_url, is_variable_name};
use crate::error::{AddRefusal, CliError};
use crate::output;

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "sk-",
    "sk_live_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "bearer ",
    "basic ",
    "eyj",
    "ya29.",
    "akia",
];

/// Whether `value` given as a variable name is more likely a secret.
pub(crate) fn looks_like_token(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if TOKEN_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    let has = |f: fn(&char) -> bool| value.chars().any(|c| f(&c));
    let mixed =
        has(char::is_ascii_lowercase) && has(char::is_ascii_uppercase) && has(char::is_ascii_digit);
    (mixed && value.len() >= 16) || (!is_variable_name(value) && value.len() >= 20)
}

fn variable(flag: &'static str, value: &str) -> Result<(), CliError> {
    if looks_like_token(value) {
        return Err(CliError::AddRefusedHidden {
            flag,
            refusal: AddRefusal::TokenValue,
        });
    }
    if !is_variable_name(value) {
        return Err(CliError::AddRefused {
            flag,
            value: value.to_owned(),
            refusal: AddRefusal::NotAVariableName,
        });
    }
    Ok(())
}

/// The entry `args` describe, checked.
fn entry(args: &AddArgs) -> Result<Value, CliError> {
    if ServerName::new(&args.name).is_err() {
        return Err(CliError::AddRefused {
            flag: "NAME",
            value: args.name.clone(),
            refusal: AddRefusal::InvalidName,
        });
    }
    for name in &args.env_inherit {
        variable("--env-inherit", name)?;
    }
    let mut entry = Map::new();
    match (&args.url, args.command.split_first()) {
        (Some(url), _) => {
            match check_url(url) {
                Ok(()) => {}
                Err(UrlProblem::Credentials) => {
                    return Err(CliError::AddRefusedHidden {
                        flag: "--url",
                        refusal: AddRefusal::CredentialsInUrl,
                    });
                }
                Err(UrlProblem::Invalid) => {
                    return Err(CliError::AddRefused {
                        flag: "--url",
                        value: url.clone(),
                        refusal: AddRefusal::InvalidUrl,
                    });
                }
            }
            if !args.env_inherit.is_empty() {
                // clap cannot say "only without --url" for a repeatable flag.
                return Err(CliError::AddRefusedHidden {
                    flag: "--env-inherit",
                    refusal: AddRefusal::EnvForRemote,
                });
            }
            let kind = match args.transport.unwrap_or(RemoteTransport::Http) {
                RemoteTransport::Http => "http",
                RemoteTransport::Sse => "sse",
            };
            entry.insert("type".into(), json!(kind));
            entry.insert("url".into(), json!(url));
            if let Some(var) = &args.token_env {
                variable("--token-env", var)?;
                entry.insert("token_env".into(), json!(var));
            }
            if let Some(header) = &args.token_header {
                if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                    return Err(CliError::AddRefused {
                        flag: "--token-header",
                        value: header.clone(),
                        refusal: AddRefusal::InvalidHeaderName,
                    });
                }
                entry.insert("token_header".into(), json!(header));
            }
            if let Some(prefix) = &args.token_prefix {
                if looks_like_token(prefix.trim()) {
                    return Err(CliError::AddRefusedHidden {
                        flag: "--token-prefix",
                        refusal: AddRefusal::TokenValue,
                    });
                }
                entry.insert("token_prefix".into(), json!(prefix));
            }
        }
        (None, Some((command, rest))) => {
            entry.insert("command".into(), json!(command));
            if !rest.is_empty() {
                entry.insert("args".into(), json!(rest));
            }
            if !args.env_inherit.is_empty() {
                entry.insert("env_inherit".into(), json!(args.env_inherit));
            }
        }
        (None, None) => {
            return Err(CliError::AddRefusedHidden {
                flag: "the entry",
                refusal: AddRefusal::NoTarget,
            });
        }
    }
    Ok(Value::Object(entry))
}

pub(crate) fn run(ctx: &Context, args: &AddArgs) -> Result<(), CliError> {
    let entry = entry(args)?;
    let file = config::write_target(ctx.config.as_deref())?;
    let mut doc = if file.exists() {
        let text = config::read_text(&file)?;
        // The file must be valid before we touch it.
        config::parse(&file, &text)?;
        Document::parse(&file, &text)?
    } else {
        Document::default()
    };
    let replaced = match doc.servers.iter_mut().find(|(n, _)| *n == args.name) {
        Some(_) if !args.force => {
            return Err(CliError::NameTaken {
                name: args.name.clone(),
                file,
            });
        }
        Some((_, existing)) => {
            *existing = entry;
            true
        }
        None => {
            doc.servers.push((args.name.clone(), entry));
            false
        }
    };
    let text = doc.to_pretty();
    // What we write must read back.
    config::parse(&file, &text)?;
    write_atomically(&file, &text)?;
    output::print(&format!(
        "{} server `{}` in {}\n",
        if replaced { "replaced" } else { "added" },
        args.name,
        file.display()
    ))
}

fn write_atomically(file: &Path, text: &str) -> Result<(), CliError> {
    let error = |source| CliError::ConfigWrite {
        file: file.to_path_buf(),
        source,
    };
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(error)?;
    }
    let mut temp = file.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = std::path::PathBuf::from(temp);
    std::fs::write(&temp, text).map_err(error)?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, file).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        error(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_told_from_variable_names() {
        for token in [
            "ghp_abcDEF1234567890",
            "github_pat_11AAA",
            "sk-proj-abc",
            "Bearer abc",
            "eyJhbGciOiJIUzI1NiJ9",
            "aB3dE5gH7jK9mN1pQ3",
            "abc/def+ghi=jkl0123456",
        ] {
            assert!(looks_like_token(token), "{token}");
        }
        for name in [
            "GITHUB_TOKEN",
            "API_KEY",
            "my_token",
            "AZURE_OPENAI_API_KEY_2",
        ] {
            assert!(!looks_like_token(name), "{name}");
        }
    }
}

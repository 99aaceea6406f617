//! `mcp add`: writes a server entry into the configuration file.
//!
//! Refuses token values (only environment variable names are written),
//! credentials embedded in URLs, invalid header names, and names already
//! taken (unless `--force`). The file is rewritten whole, atomically, with
//! its top-level members and servers in their order (`servers::rewrite`,
//! shared with `mcp remove`).

use mcp_hub::ServerName;
use serde_json::{Map, Value, json};

use crate::args::{AddArgs, RemoteTransport};
use crate::commands::Context;
use crate::commands::servers::rewrite;
use crate::config::secrets::{check_variable_name, holds_secret, is_secret_name, secret_argument};
use crate::config::{self, UrlProblem, check_url};
use crate::error::{AddRefusal, CliError};
use crate::output;

/// A value given where a variable name belongs; never echoed when refused.
fn variable(flag: &'static str, value: &str) -> Result<(), CliError> {
    check_variable_name(value).map_err(|problem| CliError::AddRefusedHidden {
        flag,
        refusal: problem.into(),
    })
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
    if let Some(spec) = &args.openapi {
        return openapi_entry(args, spec);
    }
    if args.token_env.is_some() && args.url.is_none() {
        return Err(CliError::AddRefusedHidden {
            flag: "--token-env",
            refusal: AddRefusal::NoTarget,
        });
    }
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
            if !args.headers.is_empty() {
                let mut headers = Map::new();
                for pair in &args.headers {
                    let (name, value) = pair_of("--header", pair)?;
                    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                        return Err(CliError::AddRefused {
                            flag: "--header",
                            value: name.to_owned(),
                            refusal: AddRefusal::InvalidHeaderName,
                        });
                    }
                    if holds_secret(value, is_secret_name(name)) {
                        return Err(CliError::AddRefusedHidden {
                            flag: "--header",
                            refusal: AddRefusal::SecretValue,
                        });
                    }
                    headers.insert(name.to_owned(), json!(value));
                }
                entry.insert("headers".into(), Value::Object(headers));
            }
            if let Some(prefix) = &args.token_prefix {
                if holds_secret(prefix, false) {
                    return Err(CliError::AddRefusedHidden {
                        flag: "--token-prefix",
                        refusal: AddRefusal::TokenValue,
                    });
                }
                entry.insert("token_prefix".into(), json!(prefix));
            }
        }
        (None, Some((command, rest))) => {
            if holds_secret(command, false) || secret_argument(rest).is_some() {
                return Err(CliError::AddRefusedHidden {
                    flag: "the command",
                    refusal: AddRefusal::SecretInArguments,
                });
            }
            entry.insert("command".into(), json!(command));
            if !rest.is_empty() {
                entry.insert("args".into(), json!(rest));
            }
            if !args.env.is_empty() {
                let mut env = Map::new();
                for pair in &args.env {
                    let (name, value) = pair_of("--env", pair)?;
                    variable("--env", name)?;
                    if holds_secret(value, is_secret_name(name)) {
                        return Err(CliError::AddRefusedHidden {
                            flag: "--env",
                            refusal: AddRefusal::SecretValue,
                        });
                    }
                    env.insert(name.to_owned(), json!(value));
                }
                entry.insert("env".into(), Value::Object(env));
            }
            if !args.env_inherit.is_empty() {
                entry.insert("env_inherit".into(), json!(args.env_inherit));
            }
            if let Some(cwd) = &args.cwd {
                entry.insert("cwd".into(), json!(cwd));
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

/// The entry of `mcp add NAME --openapi SPEC --base-url URL …`. A local
/// document is written as an absolute path (the file may be read from
/// another directory than this one).
fn openapi_entry(args: &AddArgs, spec: &str) -> Result<Value, CliError> {
    let mut entry = Map::new();
    let spec = if spec.contains("://") {
        url_flag("--openapi", spec)?;
        spec.to_owned()
    } else {
        match std::fs::canonicalize(spec) {
            Ok(path) if path.is_file() => path.display().to_string(),
            _ => {
                return Err(CliError::AddRefused {
                    flag: "--openapi",
                    value: spec.to_owned(),
                    refusal: AddRefusal::NotAFile,
                });
            }
        }
    };
    entry.insert("openapi".into(), json!(spec));
    let Some(base_url) = &args.base_url else {
        return Err(CliError::AddRefusedHidden {
            flag: "--base-url",
            refusal: AddRefusal::NoBaseUrl,
        });
    };
    url_flag("--base-url", base_url)?;
    entry.insert("base_url".into(), json!(base_url));
    let operations: Vec<&str> = args
        .operations
        .iter()
        .map(|o| o.trim())
        .filter(|o| !o.is_empty())
        .collect();
    if !operations.is_empty() {
        entry.insert("operations".into(), json!(operations));
    }
    if !args.credentials.is_empty() {
        let mut credentials = Map::new();
        for pair in &args.credentials {
            let Some((scheme, var)) = pair.split_once('=') else {
                return Err(CliError::AddRefusedHidden {
                    flag: "--credential",
                    refusal: AddRefusal::NotNameValue,
                });
            };
            variable("--credential", var)?;
            credentials.insert(scheme.to_owned(), json!(var));
        }
        entry.insert("credentials".into(), Value::Object(credentials));
    }
    if let Some(var) = &args.token_env {
        variable("--token-env", var)?;
        entry.insert("token_env".into(), json!(var));
    }
    Ok(Value::Object(entry))
}

/// `NAME=VALUE` of `flag`, split at the first `=` (never echoed when
/// refused: the value may be a secret).
fn pair_of<'a>(flag: &'static str, pair: &'a str) -> Result<(&'a str, &'a str), CliError> {
    pair.split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or(CliError::AddRefusedHidden {
            flag,
            refusal: AddRefusal::NotNameValue,
        })
}

/// Checks a URL given to `flag`.
fn url_flag(flag: &'static str, url: &str) -> Result<(), CliError> {
    match check_url(url) {
        Ok(()) => Ok(()),
        Err(UrlProblem::Credentials) => Err(CliError::AddRefusedHidden {
            flag,
            refusal: AddRefusal::CredentialsInUrl,
        }),
        Err(UrlProblem::Invalid) => Err(CliError::AddRefused {
            flag,
            value: url.to_owned(),
            refusal: AddRefusal::InvalidUrl,
        }),
    }
}

/// `mcp add`: the entry `args` describe, written into the configuration.
pub(crate) fn run(ctx: &Context, args: &AddArgs) -> Result<(), CliError> {
    let entry = entry(args)?;
    let (file, source) = config::write_target(ctx.config.as_deref())?;
    let replaced = rewrite(&file, source, |doc| {
        match doc.servers.iter_mut().find(|(n, _)| *n == args.name) {
            Some(_) if !args.force => Err(CliError::NameTaken {
                name: args.name.clone(),
                file: file.clone(),
            }),
            Some((_, existing)) => {
                *existing = entry;
                Ok(true)
            }
            None => {
                doc.servers.push((args.name.clone(), entry));
                Ok(false)
            }
        }
    })?;
    output::print(&format!(
        "{} server `{}` in {}\n",
        if replaced { "replaced" } else { "added" },
        args.name,
        file.display()
    ))
}

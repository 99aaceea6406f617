//! `mcp login` / `mcp logout`: OAuth sign-in for HTTP servers.
//!
//! Not available yet: OAuth lives in `mcp-auth`, which has no public API so
//! far. Both commands check their argument (a configured HTTP server) and
//! then fail with exit code 3 (authentication), saying so. Static tokens
//! work today through `token_env` in the configuration.

use crate::args::AuthArgs;
use crate::commands::Context;
use crate::config::{self, EntryKind};
use crate::error::CliError;

pub(crate) fn run(ctx: &Context, args: &AuthArgs, command: &'static str) -> Result<(), CliError> {
    let config = config::load(ctx.config.as_deref())?;
    let entry = config.server(&args.server)?;
    match entry.kind {
        EntryKind::Remote(_) | EntryKind::Stdio(_) => Err(CliError::AuthUnavailable { command }),
    }
}

//! `mcp trust`: approving a project file, listing and forgetting approvals.
//!
//! `mcp trust [FILE]` prints what the file would let `mcp` do (every
//! command with its arguments, every URL, root and environment variable)
//! and, on a terminal, asks; `--yes` approves without the question (a
//! script's explicit choice). The approval is bound to the file's path and
//! contents (see `config::trust`).

use std::path::PathBuf;

use crate::args::TrustArgs;
use crate::commands::Context;
use crate::config::{self, PROJECT_FILE, trust};
use crate::error::CliError;
use crate::output::{self, table};

pub(crate) fn run(ctx: &Context, args: &TrustArgs) -> Result<(), CliError> {
    let store = trust::TrustStore::default_location()?;
    if args.list {
        return list(&store);
    }
    let file = args
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from(PROJECT_FILE));
    if args.forget {
        // A file that is gone is forgotten by the path it had.
        let canonical =
            trust::canonical(&file).or_else(|e| std::path::absolute(&file).map_err(|_| e))?;
        let forgotten = store.forget(&canonical)?;
        return output::print(&format!(
            "{} {}\n",
            if forgotten {
                "forgot the approval of"
            } else {
                "there was no approval of"
            },
            file.display()
        ));
    }
    let text = config::read_text(&file)?;
    // Only a valid file is approved.
    let config = config::parse(&file, &text)?;
    let canonical = trust::canonical(&file)?;
    let standing = store.standing(&canonical, &trust::digest(&text))?;
    if let trust::Standing::Approved(_) = standing {
        return output::print(&format!(
            "{} is already approved as it is\n",
            file.display()
        ));
    }
    output::print(&format!(
        "{} would let mcp:\n{}",
        file.display(),
        trust::summary(&config)
    ))?;
    let approved = args.yes
        || (ctx.ui.interactive
            && trust::ask(
                "Trust this file? [y/N] ",
                &mut std::io::stdin().lock(),
                &mut std::io::stderr(),
            )
            .unwrap_or(false));
    if !approved {
        return Err(CliError::TrustDeclined { file });
    }
    let record = trust::record_for(&config, &text)?;
    let short = record.sha256[..12].to_owned();
    store.approve(record)?;
    output::print(&format!(
        "approved {} (sha256 {short}…); a change to it needs approval again\n",
        file.display()
    ))
}

fn list(store: &trust::TrustStore) -> Result<(), CliError> {
    let records = store.list()?;
    if records.is_empty() {
        return output::print(&format!(
            "no approved files (in {})\n",
            store.path().display()
        ));
    }
    let rows = records
        .iter()
        .map(|r| {
            vec![
                // The table escapes every cell.
                r.path.clone(),
                r.sha256.get(..12).unwrap_or(&r.sha256).to_owned(),
                r.variables.iter().cloned().collect::<Vec<_>>().join(", "),
            ]
        })
        .collect();
    output::print(&table(&["file", "sha256", "variables"], rows))
}

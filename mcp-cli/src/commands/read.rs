//! `mcp read`: one resource.

use mcp_hub::Discovery;
use mcp_types::text::escape_line;
use serde_json::json;

use crate::args::ReadArgs;
use crate::commands::{Context, resolve, split_server, with_server};
use crate::error::CliError;
use crate::output::{self, render_resource_contents, to_json};

pub(crate) async fn run(ctx: &Context, args: ReadArgs) -> Result<(), CliError> {
    let (server, rest) = split_server(&args.words, &args.target);
    let target = resolve(ctx, "read", server, &args.target)?;
    let uri = rest
        .first()
        .cloned()
        .ok_or(CliError::MissingWord { what: "URI" })?;
    let name = target.name().to_owned();
    let asked = uri.clone();
    let result = with_server(ctx, &target, Discovery::Lazy, |hub| async move {
        Ok(hub.facade().read_resource(&name, &asked).await?)
    })
    .await?;
    if args.json {
        return output::print_json(&json!({
            "server": target.name(),
            "uri": uri,
            "result": to_json(&result),
        }));
    }
    let paint = ctx.ui.out();
    let several = result.contents.len() > 1;
    let mut out = String::new();
    for contents in &result.contents {
        if several {
            out.push_str(&paint.dim(&format!(
                "── {} {}\n",
                escape_line(contents.uri()),
                escape_line(contents.mime_type().unwrap_or(""))
            )));
        }
        out.push_str(&render_resource_contents(contents, paint));
    }
    output::print(&out)
}

//! The `mcp` command.
#![forbid(unsafe_code)]

fn main() -> anyhow::Result<()> {
    anyhow::bail!("the mcp CLI is not implemented yet")
}

//! Project automation.
#![forbid(unsafe_code)]

fn main() -> anyhow::Result<()> {
    anyhow::bail!("no task")
}

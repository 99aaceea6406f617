//! One stdio server: list its tools, call one with progress, get a prompt.
//!
//! `cargo run -p mcp-client --example stdio -- mcp-testkit-server --demo weather`
use mcp_client::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut command = std::env::args().skip(1);
    let program = command.next().ok_or("usage: stdio COMMAND [ARGS…]")?;
    let session = mcp_client::connect_stdio(program, command).await?;
    for tool in session.list_tools().await?.tools() {
        println!("tool: {}", tool.name);
    }
    let progress = CallOptions::new().on_progress(|p| println!("progress: {}", p.progress));
    let forecast = json!({"city": "Paris"});
    let result = session
        .call_tool_with("forecast", forecast, &progress)
        .await?;
    println!("forecast: {}", result.text());
    let prompt = session.get_prompt("plan_trip", [("city", "Paris")]).await?;
    println!("prompt: {} message(s)", prompt.messages.len());
    session.close().await;
    Ok(())
}

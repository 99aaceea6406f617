//! An HTTP server whose tool asks our model (sampling), answered by a closure.
//!
//! `cargo run -p mcp-client --example http_sampling -- http://127.0.0.1:PORT/mcp`
use mcp_client::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: http_sampling URL")?;
    let handlers = ClientHandlers::new().on_sampling(|request| async move {
        // A real host would ask its model (after the user agreed).
        let asked = request.messages.len();
        Ok(CreateMessageResult::text(
            "demo-model",
            format!("read {asked} message(s)"),
        ))
    });
    let config = SessionConfig {
        handlers,
        ..SessionConfig::default()
    };
    let session = mcp_client::connect_http_with(&url, config).await?;
    println!("era: {:?}", session.era());
    let result = session.call_tool("summarize", ()).await?;
    println!("summary: {}", result.text());
    session.close().await;
    Ok(())
}

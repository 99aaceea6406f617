//! Spawn a stdio MCP server, negotiate, list its tools and call one.
//!
//! Runs against the workspace's fake server (built on first use), or any
//! server given as arguments: `cargo run -p mcp-session --example quickstart -- npx -y @modelcontextprotocol/server-everything`.
use std::sync::Arc;

use mcp_session::{Negotiation, Session, SessionConfig};
use mcp_transport::{StdioConfig, StdioConnector};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        argv.push(mcp_testkit::build_server_binary()?.display().to_string());
    }
    let config = StdioConfig::new(argv.remove(0)).args(argv);
    let connector = Arc::new(StdioConnector::new(config));
    let session = Session::connect(connector, SessionConfig::default()).await?;
    let session = session.negotiate(Negotiation::Auto).await?;
    println!(
        "{} {} — {:?} era, protocol {}",
        session.server_info().name,
        session.server_info().version,
        session.era(),
        session.protocol_version().as_str()
    );
    let tools = session.list_tools().await?;
    for tool in tools.tools() {
        println!(
            "  tool {:<12} {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }
    if tools.get("echo").is_some() {
        let args = serde_json::json!({"text": "hello from Rust"});
        let result = session
            .call_tool("echo", args.as_object().cloned().unwrap_or_default())
            .await?;
        println!("echo → {}", serde_json::to_string(&result.content)?);
    }
    let dead = session.close().await;
    println!("closed: {}", dead.info());
    Ok(())
}

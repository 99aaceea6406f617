//! Two servers behind one namespace, under an allow-list: the merged names,
//! a call by merged name, and a call the authority refuses.
//!
//! `cargo run -p mcp-client --example hub -- mcp-testkit-server`
use mcp_client::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = std::env::args().nth(1).ok_or("usage: hub TESTKIT_SERVER")?;
    let demo = |name: &str| StdioConnector::new(StdioConfig::new(&server).args(["--demo", name]));
    let authority = Authority::named()
        .with_server("notes", ServerAuthority::default())
        .with_server("files", ServerAuthority::default().tools(["read"]));
    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("notes", demo("notes")))
        .server(ServerSpec::new("files", demo("files")))
        .authority(authority)
        .start()
        .await?;
    for tool in hub.namespace().tools() {
        println!("tool: {}", tool.name());
    }
    let found = hub.call("search", json!({"query": "release"})).await?;
    println!("search: {}", found.text());
    if let Err(refused) = hub.call("files/search", json!({"query": "x"})).await {
        println!("not allowed: files/search ({refused})");
    }
    hub.shutdown().await;
    Ok(())
}

//! A small in-memory MCP server (legacy era) with resources, templates,
//! prompts and a tool list the test can change at run time, announcing the
//! change with `notifications/tools/list_changed`.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_transport::{Connector, MemoryConnector};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};

#[derive(Debug)]
struct State {
    tools: Vec<String>,
    resources: bool,
    prompts: bool,
    /// (uri, text)
    documents: Vec<(String, String)>,
    templates: Vec<String>,
    writers: Vec<mpsc::Sender<String>>,
    /// Every request method received, in order.
    seen: Vec<String>,
}

/// The server; clones share state.
#[derive(Clone, Debug)]
pub struct ContextServer {
    state: Arc<Mutex<State>>,
    /// How many requests were received; changes with every one.
    received: Arc<watch::Sender<usize>>,
}

impl ContextServer {
    /// Tools `tools`; resources and prompts advertised as given.
    pub fn new(tools: &[&str], resources: bool, prompts: bool) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                tools: tools.iter().map(|s| (*s).to_owned()).collect(),
                resources,
                prompts,
                documents: vec![
                    ("file:///README.md".into(), "# readme".into()),
                    ("file:///secret.txt".into(), "top secret".into()),
                    ("file:///notes.txt".into(), "some notes".into()),
                ],
                templates: vec!["file:///{path}".into()],
                writers: Vec::new(),
                seen: Vec::new(),
            })),
            received: Arc::new(watch::channel(0).0),
        }
    }

    pub fn connector(&self) -> Arc<dyn Connector> {
        let me = self.clone();
        Arc::new(MemoryConnector::new(move |end| {
            let me = me.clone();
            tokio::spawn(async move { me.serve(end.input, end.output).await });
        }))
    }

    /// Replaces the tool list (without telling anyone); `name:description`
    /// gives a tool another description than `tool name`.
    pub fn set_tools(&self, tools: &[&str]) {
        self.state.lock().unwrap().tools = tools.iter().map(|s| (*s).to_owned()).collect();
    }

    /// Sends `notifications/tools/list_changed` on every live connection.
    pub async fn announce_tools_changed(&self) {
        let writers = self.state.lock().unwrap().writers.clone();
        for w in writers {
            let _ = w
                .send(
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                        .to_string(),
                )
                .await;
        }
    }

    /// Request methods received so far.
    pub fn seen(&self) -> Vec<String> {
        self.state.lock().unwrap().seen.clone()
    }

    /// Waits until `n` requests with `method` have been received (including
    /// before the call); returns whether they were before `timeout`.
    pub async fn wait_seen(&self, method: &str, n: usize, timeout: Duration) -> bool {
        let enough = || self.seen().iter().filter(|m| *m == method).count() >= n;
        let mut received = self.received.subscribe();
        let wait = async {
            loop {
                // Seen before checking, so a request after the check wakes
                // the wait below.
                received.borrow_and_update();
                if enough() {
                    return;
                }
                if received.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(timeout, wait).await;
        enough()
    }

    async fn serve<R, W>(&self, input: R, mut output: W)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::channel::<String>(64);
        self.state.lock().unwrap().writers.push(tx.clone());
        let writer = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if output.write_all(line.as_bytes()).await.is_err()
                    || output.write_all(b"\n").await.is_err()
                    || output.flush().await.is_err()
                {
                    break;
                }
            }
        });
        let mut lines = BufReader::new(input).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let (Some(id), Some(method)) = (msg.get("id").cloned(), msg["method"].as_str()) else {
                continue;
            };
            self.state.lock().unwrap().seen.push(method.to_owned());
            self.received.send_modify(|n| *n += 1);
            let me = self.clone();
            let tx = tx.clone();
            let method = method.to_owned();
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            // Each request on its own task, so a slow tool does not block.
            tokio::spawn(async move {
                let reply = match me.answer(&method, &params).await {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, message)) => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": message}}),
                };
                let _ = tx.send(reply.to_string()).await;
            });
        }
        drop(tx);
        writer.abort();
    }

    async fn answer(&self, method: &str, params: &Value) -> Result<Value, (i64, &'static str)> {
        let (tools, resources, prompts, documents, templates) = {
            let s = self.state.lock().unwrap();
            (
                s.tools.clone(),
                s.resources,
                s.prompts,
                s.documents.clone(),
                s.templates.clone(),
            )
        };
        match method {
            "initialize" => {
                let mut caps = json!({"tools": {"listChanged": true}});
                if resources {
                    caps["resources"] = json!({});
                }
                if prompts {
                    caps["prompts"] = json!({});
                }
                Ok(
                    json!({"protocolVersion": "2025-06-18", "capabilities": caps,
                          "serverInfo": {"name": "context", "version": "1.0.0"}}),
                )
            }
            "ping" => Ok(json!({})),
            // `name:description` sets a description other than `tool name`.
            "tools/list" => Ok(json!({"tools": tools.iter().map(|t| {
                let (name, description) = match t.split_once(':') {
                    Some((name, description)) => (name.to_owned(), description.to_owned()),
                    None => (t.clone(), format!("tool {t}")),
                };
                json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
            }).collect::<Vec<_>>()})),
            "tools/call" => {
                let name = params["name"].as_str().unwrap_or_default();
                if name == "slow" {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                Ok(json!({"content": [{"type": "text", "text": format!("called {name}")}]}))
            }
            "resources/list" if resources => {
                // Pages of two, the cursor being the next index.
                let start: usize = params["cursor"]
                    .as_str()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let page: Vec<Value> = documents
                    .iter()
                    .skip(start)
                    .take(2)
                    .map(|(uri, _)| json!({"uri": uri, "name": uri}))
                    .collect();
                let mut result = json!({"resources": page});
                if start + 2 < documents.len() {
                    result["nextCursor"] = json!((start + 2).to_string());
                }
                Ok(result)
            }
            "resources/templates/list" if resources => Ok(json!({"resourceTemplates": templates
                .iter()
                .map(|t| json!({"uriTemplate": t, "name": "file"}))
                .collect::<Vec<_>>()})),
            "resources/read" if resources => {
                let uri = params["uri"].as_str().unwrap_or_default();
                match documents.iter().find(|(u, _)| u == uri) {
                    Some((u, text)) => Ok(
                        json!({"contents": [{"uri": u, "mimeType": "text/plain", "text": text}]}),
                    ),
                    None => Err((-32002, "resource not found")),
                }
            }
            "prompts/list" if prompts => Ok(json!({"prompts": [
                {"name": "daily", "arguments": [{"name": "topic", "required": true}]},
                {"name": "hidden"}
            ]})),
            "prompts/get" if prompts => {
                let topic = params["arguments"]["topic"].as_str().unwrap_or("nothing");
                Ok(json!({"description": "daily prompt", "messages": [
                    {"role": "user", "content": {"type": "text", "text": format!("Talk about {topic}")}}
                ]}))
            }
            _ => Err((-32601, "method not found")),
        }
    }
}

//! `mcp-testkit-server`: a scripted fake MCP server on stdin/stdout, or over
//! Streamable HTTP on loopback.
//!
//! ```text
//! mcp-testkit-server [--script FILE | --script-json JSON | --demo NAME]
//!                    [--record PATH] [--http [--sse]]
//! ```
//!
//! With `--http` it serves the script on `127.0.0.1` (a free port), prints the
//! endpoint (`http://127.0.0.1:PORT/mcp`) as the first line on stdout, and
//! stops when its standard input ends. Replies are JSON bodies, or with
//! `--sse` event streams (a request's notifications, then its response).
//!
//! Without a script option the script comes from the environment variable
//! `MCP_TESTKIT_SCRIPT` (JSON), else it is `Script::basic()` (dual-era with
//! `echo`, `add`, `sleep`). The process exits with the code `serve` returns.
#![forbid(unsafe_code)]

use std::path::PathBuf;

use mcp_testkit::http::ReplyMode;
use mcp_testkit::{
    FakeServer, HttpFakeServer, HttpServerOptions, Recorder, Script, TestkitError, demo,
};

const USAGE: &str = "usage: mcp-testkit-server [--script FILE | --script-json JSON | --demo notes|files|github|weather] [--record PATH] [--http [--sse]]
  script source order: --script, --script-json, --demo, $MCP_TESTKIT_SCRIPT, built-in default (echo/add/sleep)";

/// Exit code for bad arguments or an unusable script.
const USAGE_EXIT_CODE: i32 = 2;

enum ScriptSource {
    File(PathBuf),
    Json(String),
    Demo(String),
}

struct Options {
    script: Option<ScriptSource>,
    record: Option<PathBuf>,
    http: bool,
    sse: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, TestkitError> {
    let mut options = Options {
        script: None,
        record: None,
        http: false,
        sse: false,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(None),
            "--script" => {
                let value = args.next().ok_or(TestkitError::MissingValue("--script"))?;
                options.script = Some(ScriptSource::File(value.into()));
            }
            "--script-json" => {
                let value = args
                    .next()
                    .ok_or(TestkitError::MissingValue("--script-json"))?;
                options.script = Some(ScriptSource::Json(value));
            }
            "--demo" => {
                let value = args.next().ok_or(TestkitError::MissingValue("--demo"))?;
                options.script = Some(ScriptSource::Demo(value));
            }
            "--http" => options.http = true,
            "--sse" => options.sse = true,
            "--record" => {
                let value = args.next().ok_or(TestkitError::MissingValue("--record"))?;
                options.record = Some(value.into());
            }
            _ => return Err(TestkitError::UnknownArgument(arg)),
        }
    }
    Ok(Some(options))
}

fn load_script(source: Option<ScriptSource>) -> Result<Script, TestkitError> {
    match source {
        Some(ScriptSource::File(path)) => Script::from_file(&path),
        Some(ScriptSource::Json(text)) => Script::from_json(&text),
        Some(ScriptSource::Demo(name)) => {
            demo::by_name(&name).ok_or(TestkitError::UnknownDemo(name))
        }
        None => match std::env::var("MCP_TESTKIT_SCRIPT") {
            Ok(text) => Script::from_json(&text),
            Err(_) => Ok(Script::basic()),
        },
    }
}

/// What to serve, and how.
enum Serve {
    Stdio(FakeServer),
    Http(Script, HttpServerOptions),
}

fn prepare() -> Result<Option<Serve>, TestkitError> {
    let Some(options) = parse_args(std::env::args().skip(1))? else {
        return Ok(None);
    };
    let script = load_script(options.script)?;
    if options.http {
        let mut http = HttpServerOptions::default();
        if options.sse {
            http = http.reply(ReplyMode::Sse);
        }
        return Ok(Some(Serve::Http(script, http)));
    }
    let recorder = match &options.record {
        Some(path) => Recorder::with_file(path)?,
        None => Recorder::new(),
    };
    Ok(Some(Serve::Stdio(
        FakeServer::new(script)
            .with_recorder(recorder)
            .with_stderr(tokio::io::stderr()),
    )))
}

/// Serves over HTTP until standard input ends; prints the endpoint first.
async fn serve_http(script: Script, options: HttpServerOptions) -> i32 {
    use tokio::io::AsyncReadExt;
    let server = match HttpFakeServer::start(script, options).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mcp-testkit-server: cannot listen: {error}");
            return 1;
        }
    };
    println!("{}", server.url());
    let mut stdin = tokio::io::stdin();
    let mut sink = [0u8; 256];
    while matches!(stdin.read(&mut sink).await, Ok(n) if n > 0) {}
    server.shutdown().await;
    0
}

fn report(error: &TestkitError) {
    let mut message = format!("mcp-testkit-server: {error}");
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    eprintln!("{message}");
}

fn main() {
    let server = match prepare() {
        Ok(Some(server)) => server,
        Ok(None) => {
            println!("{USAGE}");
            return;
        }
        Err(error) => {
            report(&error);
            eprintln!("{USAGE}");
            std::process::exit(USAGE_EXIT_CODE);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-testkit-server: cannot start the tokio runtime: {error}");
            std::process::exit(1);
        }
    };
    let code = match server {
        // Pipes and sockets (as clients start servers) are read and written
        // on the runtime itself; tokio's `stdin()` and `stdout()` would hand
        // every read and write to a blocking thread (two thread switches
        // per message, and a CPU-hungry fixture that skews every
        // measurement it is part of).
        Serve::Stdio(server) => {
            let (read, write) = {
                let _runtime = runtime.enter();
                mcp_server::stdio()
            };
            runtime.block_on(server.serve(read, write))
        }
        Serve::Http(script, options) => runtime.block_on(serve_http(script, options)),
    };
    // Exit without dropping the runtime: its drop would wait for blocking
    // stdin/stderr operations (a pending read, a stalled stderr flood).
    std::process::exit(code);
}

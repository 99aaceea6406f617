//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit codes and configuration, shown at the end of `mcp --help`.
const AFTER_HELP: &str = "\
Servers come from --config FILE, else ./.mcp.json (used only once approved with
`mcp trust`), else $XDG_CONFIG_HOME/mcp/config.json (the `mcpServers` shape). Try
`mcp demo` first.

Exit codes: 0 ok, 1 usage or configuration error, 2 server could not be started or
reached, 3 authentication required or failed, 4 protocol error or time-out, 5 the tool
reported an error, 130 interrupted.";

/// Inspect, call and debug MCP servers.
#[derive(Debug, Parser)]
#[command(name = "mcp", version, max_term_width = 100, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// Configuration file (default: ./.mcp.json, else $XDG_CONFIG_HOME/mcp/config.json).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// More logs on stderr (-v info, -vv debug, -vvv trace) and the servers'
    /// stderr as it comes; RUST_LOG overrides the level.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// Grants a permission (repeatable): servers and tools the
    /// configuration tags with `permission` / `tool_permissions` are hidden
    /// and refused without it.
    #[arg(long, global = true, value_name = "PERMISSION", value_parser = permission_name)]
    pub(crate) grant: Vec<String>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// `--grant`'s value: a permission name, as in the configuration.
fn permission_name(value: &str) -> Result<String, String> {
    if crate::config::is_permission_name(value) {
        Ok(value.to_owned())
    } else {
        Err(
            "a permission name is 1 to 64 characters of ASCII letters, digits, `_`, `.`, `:` and `-`"
                .to_owned(),
        )
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Negotiated era and version, server info, capabilities, instructions and
    /// one page of each catalogue.
    Inspect(InspectArgs),
    /// Calls a tool: `mcp call NAME key=value …` (a name `mcp tools` shows) or
    /// `mcp call SERVER TOOL key=value …`.
    Call(CallArgs),
    /// Reads a resource by URI.
    Read(ReadArgs),
    /// Gets a prompt with its arguments.
    Prompt(PromptArgs),
    /// Lists a server's skills (nothing of them is read).
    Skills(SkillsArgs),
    /// Loads one skill, verified against its listing: prints its SKILL.md
    /// (or one of its files with `--file`).
    Skill(SkillArgs),
    /// The merged tool namespace of every configured server.
    Tools(ToolsArgs),
    /// Holds the configured servers and prints what happens as it happens:
    /// status, restarts, changed tool lists awaiting review, subscribed
    /// resources, log messages. Ctrl-C ends it.
    Watch(WatchArgs),
    /// Lists the configured servers and the file they come from.
    List(ListArgs),
    /// Shows one configured server as written (`${VAR}` not expanded).
    Get(GetArgs),
    /// Adds a server to the configuration file.
    Add(AddArgs),
    /// Removes a server from the configuration file.
    Remove(RemoveArgs),
    /// Approves a project file (./.mcp.json): shows every command, URL and
    /// variable it uses, and records the approval for these contents.
    Trust(TrustArgs),
    /// Signs in to an HTTP server with OAuth (a configured one, or `--url URL`).
    Login(AuthArgs),
    /// Forgets the stored OAuth credentials of a server.
    Logout(AuthArgs),
    /// A web page on 127.0.0.1 over the configured servers: status,
    /// catalogues, the merged namespace, calls, reads and prompts on a
    /// click, live events and reviews. Ctrl-C ends it.
    #[cfg(feature = "playground")]
    Playground(PlaygroundArgs),
    /// Serves every configured server as one MCP server, governed as `mcp
    /// tools` shows: on stdin/stdout (`mcp serve --stdio`, one entry in a
    /// host's mcpServers) or over Streamable HTTP to many hosts (`mcp serve
    /// --http 127.0.0.1:8931`); or, with `--control SOCKET` and a command,
    /// reviews a running gateway's changed tool lists.
    Serve(ServeArgs),
    /// A built-in walk-through with three local servers (no configuration,
    /// no network).
    #[cfg(feature = "demo")]
    Demo(DemoArgs),
    /// Drives the official conformance suite's scenarios (used by `cargo xtask
    /// conformance`; reads MCP_CONFORMANCE_* variables).
    #[cfg(feature = "conformance-client")]
    #[command(hide = true)]
    ConformanceClient {
        /// The scenario server's URL (the suite appends it).
        url: String,
    },
    /// Serves one of the built-in demo servers on stdin/stdout (`mcp demo`
    /// starts its servers this way, so it needs no other binary).
    #[cfg(feature = "demo")]
    #[command(hide = true, name = "__serve-demo")]
    ServeDemo {
        /// `notes`, `files` or `github`.
        name: String,
    },
}

/// A server given on the command line instead of by name.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct OneOff {
    /// A remote server by URL instead of a configured name.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Transport of `--url` (`streamable-http` is another name of `http`).
    #[arg(long, value_enum, requires = "url")]
    pub(crate) transport: Option<RemoteTransport>,
    /// Environment variable holding the token for `--url`.
    #[arg(long, value_name = "VAR", requires = "url")]
    pub(crate) token_env: Option<String>,
    /// A header sent to the `--url` server (repeatable). Never printed back;
    /// `${VAR}` in the value is expanded, so a secret can stay in a variable.
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
    pub(crate) headers: Vec<String>,
    /// A variable set for the `-- COMMAND` server (repeatable). Never
    /// printed back; `${VAR}` in the value is expanded.
    #[arg(
        short = 'e',
        long = "env",
        value_name = "NAME=VALUE",
        conflicts_with = "url"
    )]
    pub(crate) env: Vec<String>,
    /// A variable of ours the `-- COMMAND` server may inherit (repeatable).
    #[arg(long = "env-inherit", value_name = "NAME", conflicts_with = "url")]
    pub(crate) env_inherit: Vec<String>,
    /// The directory the `-- COMMAND` server runs in.
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub(crate) cwd: Option<String>,
    /// A local directory offered to the server as a root (repeatable;
    /// default: the working directory to a local server, none to a URL).
    #[arg(long = "root", value_name = "DIR")]
    pub(crate) roots: Vec<String>,
    /// A local server: the command and its arguments after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

impl OneOff {
    /// Whether a server is given on the command line.
    pub(crate) fn is_given(&self) -> bool {
        self.url.is_some() || !self.command.is_empty()
    }

    /// The first flag given that only describes a server of the command
    /// line (meaningless with a configured server's name).
    pub(crate) fn detail_flag(&self) -> Option<&'static str> {
        [
            (self.transport.is_some(), "--transport"),
            (self.token_env.is_some(), "--token-env"),
            (!self.headers.is_empty(), "--header"),
            (!self.env.is_empty(), "--env"),
            (!self.env_inherit.is_empty(), "--env-inherit"),
            (self.cwd.is_some(), "--cwd"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// A configured server (omit with `--url` or `-- COMMAND`).
    pub(crate) server: Option<String>,
    /// Only this catalogue.
    #[arg(long, value_enum)]
    pub(crate) catalog: Option<Catalog>,
    /// Cursor of the page to show (with `--catalog`).
    #[arg(long, requires = "catalog")]
    pub(crate) cursor: Option<String>,
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) target: OneOff,
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// `NAME [key=value …]`: a name `mcp tools` shows (a bare unique name,
    /// `server/tool` or an alias), every configured server started; or
    /// `SERVER TOOL [key=value …]` (when the second word is not a key=value
    /// pair): that server only; or `TOOL [key=value …]` with `--url` or
    /// `-- COMMAND`. A value is read as the tool's inputSchema says (number,
    /// boolean, array, object); `key:=JSON` takes JSON as it is.
    #[arg(value_name = "NAME | SERVER TOOL [KEY=VALUE]", required = true)]
    pub(crate) words: Vec<String>,
    /// Arguments as one JSON object, merged with key=value pairs: inline,
    /// `@FILE` (read from the file) or `-` (read from standard input); at
    /// most 4 MiB.
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub(crate) args: Option<String>,
    /// How a NAME is routed when servers share a tool name (as in `mcp
    /// tools`); no effect on `SERVER TOOL` or a one-off server.
    #[arg(long, value_enum, default_value_t = Policy::Prefix)]
    pub(crate) policy: Policy,
    /// Request deadline in seconds, 1 to 600 (reset by progress).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    pub(crate) timeout: Option<u64>,
    /// The whole result as one JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Says yes to this call when the configuration marks the tool with
    /// `confirm` (without it the question is asked at a terminal, and the
    /// call refused elsewhere).
    #[arg(long)]
    pub(crate) yes: bool,
    #[command(flatten)]
    pub(crate) target: OneOff,
}

#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    /// `SERVER URI`, or `URI` with `--url` or `-- COMMAND`.
    #[arg(value_name = "SERVER URI", required = true, num_args = 1..=2)]
    pub(crate) words: Vec<String>,
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) target: OneOff,
}

#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    /// `SERVER NAME [KEY=VALUE …]`, or `NAME [KEY=VALUE …]` with `--url`
    /// or `-- COMMAND`: the prompt and its arguments, as `mcp call` takes
    /// a tool's.
    #[arg(value_name = "SERVER NAME [KEY=VALUE]", required = true)]
    pub(crate) words: Vec<String>,
    /// A prompt argument (repeatable; the same as a KEY=VALUE word).
    #[arg(long = "arg", value_name = "KEY=VALUE")]
    pub(crate) args: Vec<String>,
    /// Prompt arguments as one JSON object of strings, merged with `--arg`:
    /// inline, `@FILE` (read from the file) or `-` (read from standard
    /// input); at most 4 MiB.
    #[arg(long = "args", value_name = "JSON|@FILE|-")]
    pub(crate) args_json: Option<String>,
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) target: OneOff,
}

#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// How tools of different servers sharing a name are exposed.
    #[arg(long, value_enum, default_value_t = Policy::Prefix)]
    pub(crate) policy: Policy,
    /// Output format; `anthropic` and `openai` use provider-safe names.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
}

#[derive(Debug, Args)]
pub(crate) struct SkillsArgs {
    /// A configured server (omit with `--url` or `-- COMMAND`).
    pub(crate) server: Option<String>,
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) target: OneOff,
}

#[derive(Debug, Args)]
pub(crate) struct SkillArgs {
    /// `SERVER SKILL`, or `SKILL` with `--url` or `-- COMMAND`: a skill's
    /// name (as `mcp skills` lists it) or the URI of its SKILL.md.
    #[arg(value_name = "SERVER SKILL", required = true, num_args = 1..=2)]
    pub(crate) words: Vec<String>,
    /// One of the skill's files instead of its SKILL.md, by its path in the
    /// skill (`references/FORMS.md`); verified like SKILL.md.
    #[arg(long, value_name = "PATH")]
    pub(crate) file: Option<String>,
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) target: OneOff,
}

#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// Configured servers to watch (default: every enabled one).
    #[arg(value_name = "SERVER")]
    pub(crate) servers: Vec<String>,
    /// A resource to subscribe to (repeatable): `URI` when one server is
    /// watched, else `SERVER=URI`. Read when subscribed, on each change and
    /// after a reconnect; unchanged contents are not shown again.
    #[arg(long = "resource", value_name = "[SERVER=]URI")]
    pub(crate) resources: Vec<String>,
    /// One JSON object per line on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// The least severe log messages asked of the servers: debug, info,
    /// notice, warning, error, critical, alert or emergency.
    #[arg(long, default_value = "info", value_parser = log_level)]
    pub(crate) log_level: mcp_types::LoggingLevel,
    /// Adopt a changed tool list at once instead of holding it for review.
    #[arg(long)]
    pub(crate) adopt: bool,
    /// How tools of different servers sharing a name are exposed.
    #[arg(long, value_enum, default_value_t = Policy::Prefix)]
    pub(crate) policy: Policy,
}

/// A log level by its wire name (the protocol's own spelling).
fn log_level(word: &str) -> Result<mcp_types::LoggingLevel, String> {
    serde_json::from_value(serde_json::Value::String(word.to_owned())).map_err(|_| {
        "one of debug, info, notice, warning, error, critical, alert, emergency".to_owned()
    })
}

#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// The new server's name (`[A-Za-z0-9_-]`, at most 64 characters).
    pub(crate) name: String,
    /// A remote server's URL.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub(crate) url: Option<String>,
    /// Transport of `--url`.
    #[arg(long, value_enum, requires = "url")]
    pub(crate) transport: Option<RemoteTransport>,
    /// Name of the environment variable holding the token (never the
    /// token): the bearer token of `--url`, or of every request of
    /// `--openapi`.
    #[arg(long, value_name = "VAR")]
    pub(crate) token_env: Option<String>,
    /// An OpenAPI document (a file or an https URL) served as a server whose
    /// tools are its operations.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["command", "url"])]
    pub(crate) openapi: Option<String>,
    /// Where the OpenAPI operations' requests go.
    #[arg(long, value_name = "URL", requires = "openapi")]
    pub(crate) base_url: Option<String>,
    /// Operations to keep, comma-separated: operationIds, `tag:NAME`,
    /// `path:/pets/*` (default: all).
    #[arg(long, value_name = "LIST", requires = "openapi", value_delimiter = ',')]
    pub(crate) operations: Vec<String>,
    /// A security scheme's secret: `SCHEME=VAR` (the variable's name, never
    /// the value; repeatable).
    #[arg(long = "credential", value_name = "SCHEME=VAR", requires = "openapi")]
    pub(crate) credentials: Vec<String>,
    /// Header the token goes in (default Authorization).
    #[arg(long, value_name = "HEADER", requires_all = ["token_env", "url"])]
    pub(crate) token_header: Option<String>,
    /// Text before the token (default `Bearer ` for Authorization).
    #[arg(long, value_name = "PREFIX", requires_all = ["token_env", "url"])]
    pub(crate) token_prefix: Option<String>,
    /// Environment variable a local server may inherit (repeatable).
    #[arg(long = "env-inherit", value_name = "VAR")]
    pub(crate) env_inherit: Vec<String>,
    /// A variable set for the local server (repeatable). A value that looks
    /// like a credential is refused: write `${VAR}` and keep the secret in
    /// the variable.
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE", conflicts_with_all = ["url", "openapi"])]
    pub(crate) env: Vec<String>,
    /// The directory the local server runs in.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "openapi"])]
    pub(crate) cwd: Option<String>,
    /// A header sent to the `--url` server (repeatable; a credential-looking
    /// value is refused: write `${VAR}`).
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
    pub(crate) headers: Vec<String>,
    /// Replace a server of the same name.
    #[arg(long)]
    pub(crate) force: bool,
    /// A local server: the command and its arguments after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// The configured server.
    pub(crate) name: String,
    /// One JSON document on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RemoveArgs {
    /// The configured server to remove.
    pub(crate) name: String,
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The file (default ./.mcp.json).
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// Approve without asking (what is approved is still printed).
    #[arg(long, conflicts_with_all = ["list", "forget"])]
    pub(crate) yes: bool,
    /// List the approved files.
    #[arg(long, conflicts_with_all = ["forget", "file"])]
    pub(crate) list: bool,
    /// Forget the approval of the file.
    #[arg(long)]
    pub(crate) forget: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["server", "url"])))]
pub(crate) struct AuthArgs {
    /// A configured HTTP server.
    pub(crate) server: Option<String>,
    /// A server that is not in a file, by its URL (as given to `--url`
    /// elsewhere).
    #[arg(long, value_name = "URL", conflicts_with = "server")]
    pub(crate) url: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("serving").args(["stdio", "http"])))]
pub(crate) struct ServeArgs {
    /// Serve on standard input and output (what a host starts). Nothing
    /// else is written to standard output; logs go to standard error.
    #[arg(long, conflicts_with_all = ["command", "http"])]
    pub(crate) stdio: bool,
    /// Serve over Streamable HTTP on ADDR (e.g. 127.0.0.1:8931; port 0: one
    /// the system picks), both protocol eras, to any number of hosts at
    /// once; the URL is logged on stderr. Loopback by default; any other
    /// address needs --tls-cert, --tls-key and --token-env.
    #[arg(long, value_name = "ADDR", conflicts_with = "command")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// With --http: the TLS certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_key"])]
    pub(crate) tls_cert: Option<PathBuf>,
    /// With --http: the TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_cert"])]
    pub(crate) tls_key: Option<PathBuf>,
    /// With --http: the environment variable holding the bearer token every
    /// host must send (`Authorization: Bearer …`). The token is never
    /// printed or logged.
    #[arg(long, value_name = "VAR", requires = "http")]
    pub(crate) token_env: Option<String>,
    /// With --http: an origin allowed to send requests (repeatable;
    /// `https://app.example:8443`). Without one, on loopback any loopback
    /// origin is allowed, elsewhere none (requests without Origin are not
    /// from browsers and pass).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub(crate) allow_origin: Vec<String>,
    /// With --http: connections one host address (an IPv6 /64) may hold at
    /// once, of the 256 served (default 64; not applied on a loopback
    /// address). Behind a reverse proxy every host has the proxy's
    /// address: raise it to 256 there.
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) peer_connections: Option<u16>,
    /// With --http: hand the roots of HTTP hosts to the stdio servers
    /// (off by default; a remote host's directories mean nothing here).
    #[arg(long, requires = "http")]
    pub(crate) http_roots: bool,
    /// With --http: close a 2025-11-25 host's event stream for a call
    /// still running after MS milliseconds, the call going on (SEP-1699
    /// polling); the host comes back with Last-Event-ID for the rest.
    /// Off by default (a stream is held until its answer).
    #[arg(long, value_name = "MS", requires = "http", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub(crate) sse_poll: Option<u64>,
    /// Keep polling for US microseconds after each message to or from the
    /// host (with --http: after each request) instead of sleeping, so a
    /// server's reply is relayed without waiting for a wake-up (most of the
    /// latency the gateway adds on virtual machines). Costs up to US of CPU
    /// per message; 0 turns it off.
    #[arg(long, value_name = "US", default_value_t = 500, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub(crate) busy_poll: u64,
    /// The operator's control socket (a Unix socket, 0600; keep it in a
    /// private directory): where `mcp serve --control SOCKET adopt …`
    /// reaches a running gateway.
    #[arg(long, value_name = "SOCKET")]
    pub(crate) control: Option<PathBuf>,
    /// Adopt a changed tool list at once instead of holding it for review.
    #[arg(long, requires = "serving")]
    pub(crate) adopt: bool,
    /// How tools of different servers sharing a name are exposed.
    #[arg(long, value_enum, default_value_t = Policy::Prefix)]
    pub(crate) policy: Policy,
    /// Expose provider-safe tool names (`notes_search`, as `mcp tools
    /// --format anthropic` shows) instead of `notes/search`.
    #[arg(long, requires = "serving")]
    pub(crate) provider_safe_names: bool,
    /// The least severe log messages asked of the servers (passed to the
    /// host labelled with their server): debug, info, notice, warning,
    /// error, critical, alert or emergency.
    #[arg(long, default_value = "info", value_parser = log_level, requires = "serving")]
    pub(crate) log_level: mcp_types::LoggingLevel,
    /// With `--control` (and without `--stdio` or `--http`): `pending`,
    /// `adopt SERVER GENERATION` or `discard SERVER GENERATION`.
    #[arg(value_name = "COMMAND", requires = "control")]
    pub(crate) command: Vec<String>,
}

#[cfg(feature = "playground")]
#[derive(Debug, Args)]
pub(crate) struct PlaygroundArgs {
    /// The port on 127.0.0.1 (default: one the system picks).
    #[arg(long, value_name = "PORT")]
    pub(crate) port: Option<u16>,
    /// Print the URL without opening a browser.
    #[arg(long)]
    pub(crate) no_open: bool,
    /// How tools of different servers sharing a name are exposed.
    #[arg(long, value_enum, default_value_t = Policy::Prefix)]
    pub(crate) policy: Policy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Catalog {
    Tools,
    Resources,
    ResourceTemplates,
    Prompts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RemoteTransport {
    /// Streamable HTTP (also spelled `streamable-http`).
    #[value(alias = "streamable-http")]
    Http,
    /// The legacy HTTP+SSE transport.
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Policy {
    Prefix,
    Reject,
    First,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Table,
    Json,
    Anthropic,
    Openai,
}

//! `cargo xtask bench --http [OPTIONS]`: the HTTP peer benchmark of
//! `bench/http/`. One Streamable HTTP server (the official Rust SDK's, in
//! JSON-response and SSE-response mode) on loopback; against it, side by side
//! in an order that changes every round, a no-SDK limit client, the rmcp, TypeScript (1.x and
//! 2.x) and Python SDK clients, and ours (`mcp-hub`'s `bench_client`), in the
//! legacy era (2025-11-25) and in 2026-07-28.
//!
//! The peers are built or installed from the registries into
//! `target/bench-http/` (cargo, `npm ci`, a venv); the programs are
//! `bench/http/`'s. Each run of a client is a fresh process; every record goes
//! to `runs.jsonl` and the tables (medians, min–max, ratios to the limit
//! client as the median of per-round ratios) to `summary.md`. Benchmarks are
//! measurements: nothing here asserts a time.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

const USAGE: &str = "usage: cargo xtask bench --http [--reps N] [--cold-runs N] [--quick] \
[--clients limit,limit-block,rmcp,ts,ts-v2,python,ours,ours-nopoll,ours-mt,ours-notrim] [--workloads cold,seq,conc,big,list] \
[--servers json,sse[,session]] [--eras legacy,2026] [--timeout SECS] [--out DIR] \
[--no-build] [--summarize runs.jsonl]";

const CLIENTS: [&str; 8] = [
    "limit",
    "limit-block",
    "rmcp",
    "ts",
    "ts-v2",
    "python",
    "ours",
    "ours-nopoll",
];
const WORKLOADS: [&str; 5] = ["cold", "seq", "conc", "big", "list"];
/// The clients every ratio is taken against: in each round, the better of
/// the two (the limit client spinning on its reads, and blocking), so the
/// reference is the fastest the limit client was in that round whichever
/// way of waiting suited the workload.
const REFS: [&str; 2] = ["limit", "limit-block"];

/// Calls per run: (full, `--quick`).
fn calls(workload: &str, quick: bool) -> usize {
    match (workload, quick) {
        ("seq", false) => 1000,
        ("seq", true) => 100,
        ("conc", false) => 5000,
        ("conc", true) => 500,
        ("big", false) => 20,
        ("big", true) => 3,
        ("list", false) => 200,
        ("list", true) => 20,
        _ => 1,
    }
}

fn describe(workload: &str, n: usize) -> String {
    match workload {
        "cold" => "start the client process, connect (initialize or server/discover), tools/list (50 tools), close, exit; whole-process wall time".into(),
        "seq" => format!("{n} sequential echo calls (after 200 warm-up calls)"),
        "conc" => format!("{n} echo calls, 64 in flight (after 200 warm-up calls)"),
        "big" => format!("{n} sequential calls of blob kb=1024 (1 MiB of text each; after 2 warm-up calls)"),
        _ => format!("{n} sequential tools/list calls, 50 tools / ~59 KB each (after 20 warm-up calls)"),
    }
}

#[derive(Debug)]
struct Options {
    reps: usize,
    cold_runs: usize,
    quick: bool,
    clients: Vec<String>,
    workloads: Vec<String>,
    servers: Vec<String>,
    eras: Vec<String>,
    timeout: Duration,
    out: Option<PathBuf>,
    build: bool,
    summarize: Option<PathBuf>,
}

fn list(v: &str) -> Vec<String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        reps: 5,
        cold_runs: 4,
        quick: false,
        clients: CLIENTS.iter().map(|s| (*s).to_owned()).collect(),
        workloads: WORKLOADS.iter().map(|s| (*s).to_owned()).collect(),
        servers: vec!["json".into(), "sse".into()],
        eras: vec!["legacy".into(), "2026".into()],
        timeout: Duration::from_secs(300),
        out: None,
        build: true,
        summarize: None,
    };
    let (mut reps, mut cold) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .with_context(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--http" => {}
            "--reps" => reps = Some(value()?.parse()?),
            "--cold-runs" => cold = Some(value()?.parse()?),
            "--quick" => o.quick = true,
            "--clients" => o.clients = list(&value()?),
            "--workloads" => o.workloads = list(&value()?),
            "--servers" => o.servers = list(&value()?),
            "--eras" => o.eras = list(&value()?),
            "--timeout" => o.timeout = Duration::from_secs(value()?.parse()?),
            "--out" => o.out = Some(value()?.into()),
            "--no-build" => o.build = false,
            "--summarize" => o.summarize = Some(value()?.into()),
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    o.reps = reps.unwrap_or(if o.quick { 1 } else { 5 });
    o.cold_runs = cold.unwrap_or(if o.quick { 1 } else { 4 });
    for c in &o.clients {
        if !CLIENTS.contains(&c.as_str())
            && !["rmcp-ct", "ours-base", "ours-mt", "ours-notrim"].contains(&c.as_str())
        {
            bail!("unknown client {c}\n{USAGE}");
        }
    }
    for w in &o.workloads {
        if !WORKLOADS.contains(&w.as_str()) {
            bail!("unknown workload {w}\n{USAGE}");
        }
    }
    for s in &o.servers {
        if !["json", "sse", "session"].contains(&s.as_str()) {
            bail!("unknown server mode {s}\n{USAGE}");
        }
    }
    for e in &o.eras {
        if !["legacy", "2026"].contains(&e.as_str()) {
            bail!("unknown era {e}\n{USAGE}");
        }
    }
    Ok(o)
}

/// Where everything lives.
struct Paths {
    src: PathBuf,
    work: PathBuf,
    bin: PathBuf,
    ours: PathBuf,
}

impl Paths {
    fn new(root: &Path) -> Self {
        let work = root.join("target/bench-http");
        Paths {
            src: root.join("bench/http"),
            bin: work.join("cargo/release"),
            ours: root.join("target/release/examples/bench_client"),
            work,
        }
    }

    /// The client's command line (before `<workload> <N> <URL> <era>`) and environment.
    fn client(&self, name: &str) -> (Vec<String>, Vec<(&'static str, &'static str)>) {
        let s = |p: PathBuf| p.to_string_lossy().into_owned();
        match name {
            "limit" => (vec![s(self.bin.join("client-limit"))], vec![]),
            // The limit client reading with blocking sockets only, as it did
            // before it spun (the reference of earlier tables).
            "limit-block" => (
                vec![s(self.bin.join("client-limit"))],
                vec![("LIMIT_SPIN_US", "0")],
            ),
            "rmcp" => (vec![s(self.bin.join("client-rmcp"))], vec![]),
            // An A/B baseline: a `bench_client` built before a change and
            // copied here by hand (never built by this command).
            "ours-base" => (vec![s(self.work.join("bench_client.base"))], vec![]),
            // Ours with `SessionConfig::busy_poll` off.
            "ours-nopoll" => (
                vec![s(self.ours.clone())],
                vec![("MCP_BENCH_BUSY_POLL_US", "0")],
            ),
            // Ours on a multi-thread runtime (where busy polling does not apply).
            "ours-mt" => (vec![s(self.ours.clone())], vec![("MCP_BENCH_MT", "1")]),
            // Ours with glibc's malloc told not to give freed memory back to
            // the system (nor to map large blocks on their own), as a host can
            // do through the environment: measures what the page faults of a
            // large result's fresh memory cost (`big`).
            "ours-notrim" => (
                vec![s(self.ours.clone())],
                vec![
                    ("MALLOC_TRIM_THRESHOLD_", "67108864"),
                    ("MALLOC_MMAP_THRESHOLD_", "33554432"),
                ],
            ),
            "rmcp-ct" => (
                vec![s(self.bin.join("client-rmcp"))],
                vec![("RMCP_RT", "current")],
            ),
            "ts" => (
                vec!["node".into(), s(self.work.join("ts/dist/client.js"))],
                vec![],
            ),
            "ts-v2" => (
                vec!["node".into(), s(self.work.join("ts/dist/client_v2.js"))],
                vec![],
            ),
            "python" => (
                vec![
                    s(self.work.join("venv/bin/python")),
                    s(self.src.join("py/client.py")),
                ],
                vec![],
            ),
            _ => (vec![s(self.ours.clone())], vec![]),
        }
    }
}

/// Whether a client speaks an era (the TypeScript SDK 1.x has no 2026-07-28).
fn speaks(client: &str, era: &str) -> bool {
    !(client == "ts" && era == "2026")
}

/// Whether a server mode serves an era (rmcp serves 2026-07-28 statelessly
/// only, so the session mode is a legacy-era mode).
fn serves(server: &str, era: &str) -> bool {
    !(server == "session" && era == "2026")
}

pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let o = parse(args)?;
    let paths = Paths::new(root);
    if let Some(file) = &o.summarize {
        let records: Vec<Value> = fs::read_to_string(file)?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        println!("{}", summarize(&records, &o));
        return Ok(());
    }
    if o.build {
        build(root, &paths, &o)?;
    }
    let versions = versions(root, &paths);
    let out_dir = o
        .out
        .clone()
        .unwrap_or_else(|| paths.work.join("results").join(utc_stamp()));
    fs::create_dir_all(&out_dir)?;
    let runs_path = out_dir.join("runs.jsonl");
    let mut log = fs::File::create(&runs_path)?;
    let mut records = Vec::new();
    let load_before = loadavg();
    let started = Instant::now();
    for server in &o.servers {
        for era in o.eras.iter().filter(|e| serves(server, e)) {
            let clients: Vec<&String> = o.clients.iter().filter(|c| speaks(c, era)).collect();
            let mut srv = Server::start(&paths, server, &out_dir)?;
            // One unrecorded round of cold starts: page cache, module caches.
            for c in &clients {
                run_one(&paths, c, "cold", 1, &srv.url, era, &out_dir, o.timeout);
            }
            for rep in 0..o.reps {
                for w in &o.workloads {
                    let rounds = if w == "cold" { o.cold_runs } else { 1 };
                    for idx in 0..rounds {
                        for c in round_order(&clients, rep * rounds + idx) {
                            let mut rec = run_one(
                                &paths,
                                c,
                                w,
                                calls(w, o.quick),
                                &srv.url,
                                era,
                                &out_dir,
                                o.timeout,
                            );
                            let m = rec.as_object_mut().expect("record");
                            m.insert("server".into(), server.as_str().into());
                            m.insert("rep".into(), rep.into());
                            m.insert("idx".into(), idx.into());
                            if !m.contains_key("result") {
                                eprintln!(
                                    "  FAILED {server} {era} {c} {w}: {}",
                                    m.get("stderr_tail")
                                        .and_then(Value::as_str)
                                        .unwrap_or("")
                                        .trim_end()
                                );
                            }
                            writeln!(log, "{rec}")?;
                            records.push(rec);
                        }
                    }
                }
                eprintln!(
                    "[{:5.0}s] server={server} era={era} rep {}/{} done",
                    started.elapsed().as_secs_f64(),
                    rep + 1,
                    o.reps
                );
            }
            srv.stop();
        }
    }
    let summary = format!(
        "# MCP client HTTP benchmark — {}\n\n{} CPUs; load average {} before the run, {} after; \
         {} repetition(s), clients in an order that changes every round (start and stride); cold: {} run(s) per client per repetition{}. \
         Raw records: {}\n\n{}\n{}",
        utc_stamp(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_before,
        loadavg(),
        o.reps,
        o.cold_runs,
        if o.quick {
            "; --quick (fewer calls per run: a smoke run, not a measurement)"
        } else {
            ""
        },
        runs_path.display(),
        versions,
        summarize(&records, &o)
    );
    fs::write(out_dir.join("summary.md"), &summary)?;
    println!("{summary}");
    Ok(())
}

/// The order of the clients in round `round`: it starts at a client that
/// moves by one each round and walks the list with a stride (coprime to its
/// length) that changes each round too, so a client's predecessor changes
/// from round to round. A plain rotation kept every client behind the same
/// one, and the client after a heavy one (Python's exit and what it leaves
/// behind) paid for it in every cold round.
fn round_order<T: Clone>(v: &[T], round: usize) -> Vec<T> {
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let strides: Vec<usize> = (1..n.max(2)).filter(|&s| gcd(s, n) == 1).collect();
    let stride = strides[round % strides.len()];
    let start = round % n;
    (0..n)
        .map(|i| v[(start + i * stride) % n].clone())
        .collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

// ------------------------------------------------------------------ build

fn status(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    let st = cmd.status().with_context(|| format!("running {what}"))?;
    if !st.success() {
        bail!("{what} failed");
    }
    Ok(())
}

fn build(root: &Path, paths: &Paths, o: &Options) -> anyhow::Result<()> {
    fs::create_dir_all(&paths.work)?;
    if o.clients
        .iter()
        .any(|c| c.starts_with("ours") && c != "ours-base")
    {
        eprintln!("== build: ours (mcp-hub's bench_client, release)");
        status(
            Command::new(crate::cargo()).current_dir(root).args([
                "build",
                "--release",
                "-p",
                "mcp-hub",
                "--example",
                "bench_client",
            ]),
            "building the bench client",
        )?;
    }
    eprintln!(
        "== build: bench/http (rmcp server, rmcp client, limit client) into target/bench-http/cargo"
    );
    status(
        Command::new(crate::cargo())
            .current_dir(&paths.src)
            .env("CARGO_TARGET_DIR", paths.work.join("cargo"))
            .args(["build", "--release", "--locked", "--bins"]),
        "building bench/http",
    )?;
    if o.clients.iter().any(|c| c.starts_with("ts")) {
        let ts = paths.work.join("ts");
        fs::create_dir_all(ts.join("src"))?;
        for f in ["package.json", "package-lock.json", "tsconfig.json"] {
            fs::copy(paths.src.join("ts").join(f), ts.join(f))
                .with_context(|| format!("copying ts/{f}"))?;
        }
        for entry in fs::read_dir(paths.src.join("ts/src"))? {
            let entry = entry?;
            fs::copy(entry.path(), ts.join("src").join(entry.file_name()))?;
        }
        let lock = fs::read_to_string(ts.join("package-lock.json"))?;
        let stamp = ts.join("node_modules/.lock-copy");
        if fs::read_to_string(&stamp).ok().as_deref() != Some(lock.as_str()) {
            eprintln!("== npm ci (target/bench-http/ts)");
            status(
                Command::new("npm").current_dir(&ts).args([
                    "ci",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                ]),
                "npm ci",
            )?;
            fs::write(&stamp, &lock)?;
        }
        status(
            Command::new("npx")
                .current_dir(&ts)
                .args(["tsc", "-p", "."]),
            "tsc",
        )?;
    }
    if o.clients.iter().any(|c| c == "python") {
        let venv = paths.work.join("venv");
        let want = fs::read_to_string(paths.src.join("py/requirements.txt"))?
            + &fs::read_to_string(paths.src.join("py/constraints.txt"))?;
        let stamp = venv.join(".requirements");
        if fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
            eprintln!("== python venv (target/bench-http/venv)");
            status(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv",
            )?;
            status(
                Command::new(venv.join("bin/pip"))
                    .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
                    .arg(paths.src.join("py/requirements.txt"))
                    .arg("-c")
                    .arg(paths.src.join("py/constraints.txt")),
                "pip install",
            )?;
            fs::write(&stamp, want)?;
        }
    }
    let _ = root;
    Ok(())
}

fn versions(root: &Path, paths: &Paths) -> String {
    let lock = fs::read_to_string(paths.src.join("Cargo.lock")).unwrap_or_default();
    let rmcp = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"rmcp\""))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .unwrap_or("?")
        .trim_matches('"')
        .to_owned();
    let npm = |pkg: &str| {
        fs::read_to_string(
            paths
                .work
                .join("ts/node_modules")
                .join(pkg)
                .join("package.json"),
        )
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
    };
    let output = |cmd: &mut Command| {
        cmd.output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_else(|| "?".into())
    };
    let mcp = output(Command::new(paths.work.join("venv/bin/python")).args([
        "-c",
        "import importlib.metadata as m; print(m.version('mcp'))",
    ]));
    let _ = root;
    format!(
        "Versions: rmcp {rmcp} (server and client); @modelcontextprotocol/sdk {}; @modelcontextprotocol/client {}; \
         mcp (PyPI) {mcp}; node {}; {}; {}.\n",
        npm("@modelcontextprotocol/sdk"),
        npm("@modelcontextprotocol/client"),
        output(Command::new("node").arg("--version")),
        output(Command::new(paths.work.join("venv/bin/python")).arg("--version")),
        output(Command::new("rustc").arg("--version")),
    )
}

// ---------------------------------------------------------------- running

/// The rmcp server, for one block of runs.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(paths: &Paths, mode: &str, out_dir: &Path) -> anyhow::Result<Self> {
        let args: &[&str] = match mode {
            "json" => &["--response", "json"],
            "sse" => &["--response", "sse"],
            _ => &["--sessions"],
        };
        let log = fs::File::create(out_dir.join(format!("server-{mode}.log")))?;
        let mut child = Command::new(paths.bin.join("http-bench-server"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("starting http-bench-server")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("server stdout")?).read_line(&mut line)?;
        let url = line.trim().to_owned();
        if !url.starts_with("http://") {
            let _ = child.kill();
            let _ = child.wait();
            bail!("http-bench-server did not print its URL");
        }
        Ok(Server { child, url })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Kills a process group (the client and anything it started).
fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    paths: &Paths,
    client: &str,
    workload: &str,
    n: usize,
    url: &str,
    era: &str,
    out_dir: &Path,
    timeout: Duration,
) -> Value {
    use std::os::unix::process::CommandExt;
    let (argv, env) = paths.client(client);
    let mut rec = json!({
        "client": client, "workload": workload, "n": n, "era": era,
    });
    let m = rec.as_object_mut().expect("object");
    let (out_path, err_path) = (out_dir.join("client.out"), out_dir.join("client.err"));
    let files = fs::File::create(&out_path).and_then(|o| Ok((o, fs::File::create(&err_path)?)));
    let Ok((stdout, stderr)) = files else {
        m.insert("stderr_tail".into(), "could not create output files".into());
        return rec;
    };
    let t0 = Instant::now();
    let spawned = Command::new(&argv[0])
        .args(&argv[1..])
        .args([workload, &n.to_string(), url, era])
        .envs(env)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            m.insert(
                "stderr_tail".into(),
                format!("spawning {}: {e}", argv[0]).into(),
            );
            return rec;
        }
    };
    let pid = child.id();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(timeout).is_err() {
            kill_group(pid);
            return true;
        }
        false
    });
    let status = child.wait();
    let wall = t0.elapsed().as_secs_f64();
    let _ = done_tx.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    // Anything the client left in its group goes too.
    kill_group(pid);
    let code = status.ok().and_then(|s| s.code()).unwrap_or(-1);
    m.insert("rc".into(), code.into());
    m.insert("timed_out".into(), timed_out.into());
    m.insert("wall_s".into(), wall.into());
    let out = fs::read_to_string(&out_path).unwrap_or_default();
    let err = fs::read_to_string(&err_path).unwrap_or_default();
    let line = out.lines().rev().find(|l| l.starts_with('{'));
    match line.map(serde_json::from_str::<Value>) {
        Some(Ok(v)) if code == 0 => {
            m.insert("result".into(), v);
        }
        _ => {
            m.insert("stderr_tail".into(), tail(&err, 1500).into());
            m.insert("stdout_tail".into(), tail(&out, 300).into());
        }
    }
    rec
}

fn tail(s: &str, n: usize) -> String {
    let mut from = s.len().saturating_sub(n);
    while !s.is_char_boundary(from) {
        from += 1;
    }
    s[from..].to_owned()
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn utc_stamp() -> String {
    let out = Command::new("date")
        .args(["-u", "+%Y%m%dT%H%M%SZ"])
        .output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "now".into())
}

// ---------------------------------------------------------------- summary

/// Higher is better (`Rate`) or lower is better (`Time`); `Mem` gets no range.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Rate,
    Time,
    Mem,
}

type Metric = (&'static str, fn(&Value) -> Option<f64>, Kind);

fn result(r: &Value, key: &str) -> Option<f64> {
    r["result"][key].as_f64()
}

fn per_call(r: &Value, scale: f64) -> Option<f64> {
    Some(result(r, "cpu_s")? / r["n"].as_f64()? * scale)
}

fn metrics(workload: &str) -> Vec<Metric> {
    let rss: Metric = (
        "peak RSS MB",
        |r| Some(result(r, "peak_rss_kb")? / 1024.0),
        Kind::Mem,
    );
    match workload {
        "cold" => vec![
            ("wall ms", |r| Some(r["wall_s"].as_f64()? * 1e3), Kind::Time),
            ("in-process ms", |r| result(r, "total_ms"), Kind::Time),
            rss,
        ],
        "seq" => vec![
            ("calls/s", |r| result(r, "ops_per_s"), Kind::Rate),
            ("p50 µs", |r| result(r, "p50_us"), Kind::Time),
            ("p99 µs", |r| result(r, "p99_us"), Kind::Time),
            ("client CPU µs/call", |r| per_call(r, 1e6), Kind::Time),
            rss,
        ],
        "conc" => vec![
            ("calls/s", |r| result(r, "ops_per_s"), Kind::Rate),
            ("client CPU µs/call", |r| per_call(r, 1e6), Kind::Time),
            rss,
        ],
        "big" => vec![
            ("MB/s", |r| result(r, "mb_per_s"), Kind::Rate),
            (
                "p50 ms/call",
                |r| Some(result(r, "p50_us")? / 1e3),
                Kind::Time,
            ),
            ("client CPU ms/call", |r| per_call(r, 1e3), Kind::Time),
            rss,
        ],
        _ => vec![
            ("lists/s", |r| result(r, "ops_per_s"), Kind::Rate),
            ("p50 µs", |r| result(r, "p50_us"), Kind::Time),
            ("client CPU µs/list", |r| per_call(r, 1e6), Kind::Time),
            rss,
        ],
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

fn fmt(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        let s = format!("{v:.0}");
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        format!("{sign}{out}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// "x slower than the limit" for one client, the median over the rounds in
/// which it and a limit client ran (the better of [`REFS`] in each): time
/// ratios as they are, rates inverted.
fn paired_ratio(recs: &[&Value], client: &str, metric: &Metric) -> Option<f64> {
    let mut rounds: BTreeMap<(u64, u64), (Option<f64>, Option<f64>)> = BTreeMap::new();
    for r in recs {
        let key = (
            r["rep"].as_u64().unwrap_or(0),
            r["idx"].as_u64().unwrap_or(0),
        );
        let e = rounds.entry(key).or_default();
        let c = r["client"].as_str().unwrap_or("");
        if c == client {
            e.0 = (metric.1)(r);
        }
        if REFS.contains(&c)
            && let Some(v) = (metric.1)(r)
        {
            let better = |a: f64, b: f64| match metric.2 {
                Kind::Rate => a.max(b),
                _ => a.min(b),
            };
            e.1 = Some(e.1.map_or(v, |best| better(best, v)));
        }
    }
    median(
        rounds
            .values()
            .filter_map(|(a, b)| match (a, b) {
                (Some(a), Some(b)) if *a > 0.0 && *b > 0.0 => {
                    Some(if metric.2 == Kind::Rate { b / a } else { a / b })
                }
                _ => None,
            })
            .collect(),
    )
}

fn summarize(records: &[Value], o: &Options) -> String {
    let mut s = String::new();
    let ok = |r: &&Value| r.get("result").is_some();
    for server in &o.servers {
        for era in o.eras.iter().filter(|e| serves(server, e)) {
            let block: Vec<&Value> = records
                .iter()
                .filter(|r| r["server"] == server.as_str() && r["era"] == era.as_str())
                .collect();
            if block.is_empty() {
                continue;
            }
            let era_name = if era == "2026" {
                "2026-07-28 (server/discover, stateless)"
            } else {
                "legacy (initialize, 2025-11-25)"
            };
            let mode = match server.as_str() {
                "json" => "JSON responses, stateless",
                "sse" => "SSE responses, stateless",
                _ => "SSE responses, Mcp-Session-Id (rmcp's default)",
            };
            s += &format!("\n## Server: rmcp, {mode}; era: {era_name}\n");
            let mut overview: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
            for w in &o.workloads {
                let recs: Vec<&Value> = block
                    .iter()
                    .copied()
                    .filter(|r| r["workload"] == w.as_str())
                    .collect();
                if recs.is_empty() {
                    continue;
                }
                let n = recs[0]["n"].as_u64().unwrap_or(1) as usize;
                let ms = metrics(w);
                s += &format!("\n### {w}: {}\n\n", describe(w, n));
                s += "| client | runs |";
                for m in &ms {
                    s += &if m.2 == Kind::Mem {
                        format!(" {} median |", m.0)
                    } else {
                        format!(" {} median (min–max) |", m.0)
                    };
                }
                s += " × limit (the better of limit and limit-block in each round; median of rounds) |\n|---|---|";
                s += &"---|".repeat(ms.len() + 1);
                s += "\n";
                let good: Vec<&Value> = recs.iter().copied().filter(ok).collect();
                for c in &o.clients {
                    let mine: Vec<&Value> = good
                        .iter()
                        .copied()
                        .filter(|r| r["client"] == c.as_str())
                        .collect();
                    let failed = recs
                        .iter()
                        .filter(|r| r["client"] == c.as_str() && !ok(r))
                        .count();
                    if mine.is_empty() && failed == 0 {
                        continue;
                    }
                    s += &format!(
                        "| {c} | {}{} |",
                        mine.len(),
                        if failed > 0 {
                            format!(" ({failed} failed)")
                        } else {
                            String::new()
                        }
                    );
                    for m in &ms {
                        let vals: Vec<f64> = mine.iter().filter_map(|r| (m.1)(r)).collect();
                        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        s += &match median(vals) {
                            None => " – |".into(),
                            Some(v) if m.2 == Kind::Mem => format!(" {} |", fmt(v)),
                            Some(v) => format!(" {} ({}–{}) |", fmt(v), fmt(lo), fmt(hi)),
                        };
                    }
                    let ratio = paired_ratio(&good, c, &ms[0]);
                    if let Some(r) = ratio {
                        overview.entry(c.clone()).or_default().insert(w.clone(), r);
                    }
                    s += &format!(
                        " {} |\n",
                        ratio.map_or("–".into(), |r| format!("{}×", fmt(r)))
                    );
                }
            }
            if !overview.is_empty() {
                s += &format!(
                    "\n### Overview ({mode}; {era_name}): slowdown against the limit client, the better of limit and limit-block in each round (1.00 = as fast as the limit; higher is slower)\n\n| client |"
                );
                for w in &o.workloads {
                    s += &format!(" {w} |");
                }
                s += "\n|---|";
                s += &"---|".repeat(o.workloads.len());
                s += "\n";
                for c in &o.clients {
                    let Some(row) = overview.get(c) else { continue };
                    s += &format!("| {c} |");
                    for w in &o.workloads {
                        s += &row
                            .get(w)
                            .map_or(" – |".into(), |r| format!(" {}× |", fmt(*r)));
                    }
                    s += "\n";
                }
            }
        }
    }
    let failed: Vec<&Value> = records
        .iter()
        .filter(|r| r.get("result").is_none())
        .collect();
    if !failed.is_empty() {
        s += &format!("\n**{} failed run(s)** (first 10):\n\n", failed.len());
        for r in failed.iter().take(10) {
            let last = r["stderr_tail"]
                .as_str()
                .unwrap_or("")
                .trim()
                .lines()
                .last()
                .unwrap_or("")
                .to_owned();
            s += &format!(
                "- {} {} {} {} rc={} timed_out={}: {last}\n",
                r["server"].as_str().unwrap_or("?"),
                r["era"].as_str().unwrap_or("?"),
                r["client"].as_str().unwrap_or("?"),
                r["workload"].as_str().unwrap_or("?"),
                r["rc"],
                r["timed_out"]
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(client: &str, rep: u64, ops: f64) -> Value {
        json!({"client": client, "workload": "seq", "n": 100, "rep": rep, "idx": 0, "server": "json", "era": "legacy",
               "result": {"ops_per_s": ops, "cpu_s": 0.01, "p50_us": 1.0, "p99_us": 2.0, "peak_rss_kb": 2048}})
    }

    #[test]
    fn ratios_are_paired_by_round_and_rates_inverted() {
        // Round 0: the machine is slow for both; round 1 fast for both.
        let records = [
            rec("limit", 0, 100.0),
            rec("ours", 0, 50.0),
            rec("limit", 1, 400.0),
            rec("ours", 1, 200.0),
        ];
        let refs: Vec<&Value> = records.iter().collect();
        let calls = &metrics("seq")[0];
        assert_eq!(paired_ratio(&refs, "ours", calls), Some(2.0));
        let cpu = &metrics("seq")[3];
        assert_eq!(paired_ratio(&refs, "ours", cpu), Some(1.0));
        // The reference of a round is the better of the limit's two modes:
        // blocking reads were faster in round 0, spinning in round 1.
        let records = [
            rec("limit", 0, 100.0),
            rec("limit-block", 0, 150.0),
            rec("ours", 0, 50.0),
            rec("limit", 1, 400.0),
            rec("limit-block", 1, 300.0),
            rec("ours", 1, 100.0),
        ];
        let refs: Vec<&Value> = records.iter().collect();
        assert_eq!(paired_ratio(&refs, "ours", calls), Some(3.5));
        assert_eq!(paired_ratio(&refs, "limit", calls), Some(1.25));
    }

    #[test]
    fn rotation_and_median() {
        assert_eq!(round_order(&[1, 2, 3], 4), vec![2, 3, 1]);
        assert_eq!(round_order(&[1, 2, 3], 1), vec![2, 1, 3]);
        assert_eq!(round_order::<u8>(&[], 3), Vec::<u8>::new());
        assert_eq!(round_order(&[7], 5), vec![7]);
        // With seven clients, six rounds give every client at least five
        // different predecessors (the first of a round has none), and every
        // round is a permutation.
        let clients: Vec<usize> = (0..7).collect();
        let mut before: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); 7];
        for r in 0..6 {
            let order = round_order(&clients, r);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, clients);
            for w in order.windows(2) {
                before[w[1]].insert(w[0]);
            }
        }
        assert!(before.iter().all(|s| s.len() >= 5), "{before:?}");
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(fmt(12345.6), "12,346");
        assert_eq!(fmt(0.5), "0.500");
    }

    #[test]
    fn options_and_summary() {
        let args: Vec<String> = [
            "--http",
            "--quick",
            "--clients",
            "limit,ours",
            "--eras",
            "legacy",
        ]
        .map(String::from)
        .to_vec();
        let o = parse(&args).unwrap();
        assert_eq!((o.reps, o.cold_runs, calls("seq", o.quick)), (1, 1, 100));
        assert!(parse(&["--clients".to_owned(), "nope".to_owned()]).is_err());
        let records = [rec("limit", 0, 100.0), rec("ours", 0, 50.0)];
        let o = Options {
            workloads: vec!["seq".into()],
            ..o
        };
        let table = summarize(&records, &o);
        assert!(table.contains("| ours | 1 | 50.0 (50.0–50.0) |"), "{table}");
        assert!(table.contains("| ours | 2.00× |"), "{table}");
        assert!(!speaks("ts", "2026") && !serves("session", "2026"));
    }
}

//! The limit client of the HTTP benchmark: the least work that still speaks
//! MCP over Streamable HTTP, so that every SDK client is measured against the
//! fastest thing possible, not against another library.
//!
//! * plain HTTP/1.1 over loopback TCP (`TCP_NODELAY`), keep-alive: one
//!   connection for the sequential workloads, one per in-flight slot for
//!   `conc`;
//! * every request's bytes (request line, headers, JSON body) are made once;
//!   the id has a fixed 10-byte slot (digits, then blanks, which JSON allows)
//!   so `Content-Length` never changes and only the id is written per call;
//! * a response is parsed for its framing (`Content-Length` or chunked), the
//!   SSE `data:` lines when it is an event stream, and in the JSON message
//!   only the `id` and whether it is a `result`; its length is checked
//!   against the first answer to the same request (the id's digits aside);
//! * sequential workloads use no event loop: a read spins on the
//!   non-blocking socket for up to 100 µs (`LIMIT_SPIN_US`; 0: blocking
//!   reads only), then blocks, so an answer within the window is read
//!   without the thread sleeping (as ours does by default, see
//!   `SessionConfig::busy_poll`); `conc` one thread with mio (epoll) over
//!   its 64 sockets. No TLS, no async runtime.
//!
//! Usage: `client-limit <cold|seq|conc|big|list> <N> <URL> [legacy|2026]`;
//! prints one JSON line. The legacy era sends `initialize` (2025-11-25) and
//! `notifications/initialized` and then carries `MCP-Protocol-Version` and
//! any `Mcp-Session-Id`; 2026-07-28 sends `server/discover` and then the
//! per-request `_meta` and `Mcp-Method` / `Mcp-Name` headers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use mcp_http_bench::{ECHO_TEXT, cpu_time_s, env_or, peak_rss_kb, record_latencies};
use serde_json::{Map, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Width of the id slot in every request body.
const ID_WIDTH: usize = 10;
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

// ---------------------------------------------------------------- responses

/// One complete HTTP response found at the start of a buffer.
#[derive(Debug, PartialEq)]
pub struct Reply {
    /// Bytes of the buffer it took (head and body).
    pub consumed: usize,
    pub status: u16,
    /// The JSON-RPC message's id, when the body carried a response.
    pub id: Option<u64>,
    /// Whether that message is a `result` (not an `error`).
    pub is_result: bool,
    /// Length of the JSON-RPC message in bytes (the `data:` of an event stream).
    pub len: usize,
    /// Where the message sits in the body (decoded body for chunked replies).
    pub msg: std::ops::Range<usize>,
    /// `Mcp-Session-Id`, when the response set one.
    pub session: Option<String>,
    /// Whether `msg` indexes the decoded body (chunked) rather than the buffer.
    pub decoded: bool,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn header_value<'a>(line: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    if line.len() > name.len()
        && line[..name.len()].eq_ignore_ascii_case(name)
        && line[name.len()] == b':'
    {
        Some(line[name.len() + 1..].trim_ascii())
    } else {
        None
    }
}

fn parse_hex(s: &[u8]) -> Option<usize> {
    let s = s.split(|&b| b == b';').next()?.trim_ascii();
    if s.is_empty() {
        return None;
    }
    let mut v = 0usize;
    for &b in s {
        v = v.checked_mul(16)? + (b as char).to_digit(16)? as usize;
    }
    Some(v)
}

/// The id and result-ness of a JSON-RPC message, read from its start (serde
/// and most SDKs write `{"jsonrpc":"2.0","id":N,…`) or else its end (the
/// TypeScript SDK writes `…,"jsonrpc":"2.0","id":N}`). No other byte of the
/// message is looked at.
pub fn message_id(msg: &[u8]) -> (Option<u64>, bool) {
    let head = &msg[..msg.len().min(64)];
    let is_result = find(head, b"\"result\":").is_some();
    let tail_from = msg.len().saturating_sub(48);
    let at = find(head, b"\"id\":")
        .or_else(|| find(&msg[tail_from..], b"\"id\":").map(|p| p + tail_from));
    let id = at.and_then(|p| {
        let digits = msg[p + 5..].trim_ascii_start();
        let end = digits
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(digits.len());
        std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
    });
    (id, is_result)
}

/// The JSON-RPC response in an SSE body: the `data:` of the first event
/// whose data is a message with an id (priming events and notifications are
/// passed over). Multi-line `data:` is not needed for this server (one line
/// per event) and not supported.
fn sse_message(body: &[u8]) -> Option<std::ops::Range<usize>> {
    let mut pos = 0;
    while pos < body.len() {
        let end = body[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(body.len(), |e| pos + e);
        let line = &body[pos..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(data) = line.strip_prefix(b"data:") {
            let skip = usize::from(data.first() == Some(&b' '));
            let start = pos + 5 + skip;
            let range = start..start + data.len() - skip;
            if body[range.clone()].first() == Some(&b'{')
                && message_id(&body[range.clone()]).0.is_some()
            {
                return Some(range);
            }
        }
        pos = end + 1;
    }
    None
}

/// Parses one HTTP/1.1 response at the start of `buf`; `None` while it is
/// incomplete. A chunked body is decoded into `body` (reused); a
/// `Content-Length` body is read where it lies.
pub fn parse_reply(buf: &[u8], body: &mut Vec<u8>) -> Res<Option<Reply>> {
    let Some(head_end) = find(buf, b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = &buf[..head_end];
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .get(9..12)
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.parse().ok())
        .ok_or("bad status line")?;
    let (mut length, mut chunked, mut sse, mut session) = (None, false, false, None);
    for line in lines {
        if let Some(v) = header_value(line, b"content-length") {
            length = Some(std::str::from_utf8(v)?.parse::<usize>()?);
        } else if let Some(v) = header_value(line, b"transfer-encoding") {
            chunked = v.eq_ignore_ascii_case(b"chunked");
        } else if let Some(v) = header_value(line, b"content-type") {
            sse = v.starts_with(b"text/event-stream");
        } else if let Some(v) = header_value(line, b"mcp-session-id") {
            session = Some(String::from_utf8(v.to_vec())?);
        }
    }
    let start = head_end + 4;
    let (consumed, in_place) = if chunked {
        // Walk the chunk headers first; copy only once the body is complete.
        let mut pos = start;
        let mut pieces = Vec::new();
        loop {
            let Some(eol) = find(&buf[pos..], b"\r\n") else {
                return Ok(None);
            };
            let size = parse_hex(&buf[pos..pos + eol]).ok_or("bad chunk size")?;
            let data = pos + eol + 2;
            if size == 0 {
                // No trailers from this server: the body ends with an empty line.
                if buf.len() < data + 2 {
                    return Ok(None);
                }
                pos = data + 2;
                break;
            }
            if buf.len() < data + size + 2 {
                return Ok(None);
            }
            pieces.push(data..data + size);
            pos = data + size + 2;
        }
        body.clear();
        for piece in pieces {
            body.extend_from_slice(&buf[piece]);
        }
        (pos, false)
    } else {
        let len = length.unwrap_or(0);
        if buf.len() < start + len {
            return Ok(None);
        }
        (start + len, true)
    };
    let content = if in_place {
        &buf[start..consumed]
    } else {
        &body[..]
    };
    let msg = if content.is_empty() {
        0..0
    } else if sse {
        sse_message(content).ok_or("event stream without a response")?
    } else {
        0..content.len()
    };
    let (id, is_result) = if msg.is_empty() {
        (None, false)
    } else {
        message_id(&content[msg.clone()])
    };
    let msg = if in_place {
        msg.start + start..msg.end + start
    } else {
        msg
    };
    Ok(Some(Reply {
        consumed,
        status,
        id,
        is_result,
        len: msg.len(),
        msg,
        session,
        decoded: !in_place,
    }))
}

// ----------------------------------------------------------------- requests

/// A request made once: only the id slot is written per call.
#[derive(Clone)]
struct Template {
    bytes: Vec<u8>,
    id_at: usize,
}

impl Template {
    fn patch(&mut self, id: u64) {
        let mut digits = itoa(id);
        digits.resize(ID_WIDTH, b' ');
        self.bytes[self.id_at..self.id_at + ID_WIDTH].copy_from_slice(&digits);
    }
}

fn itoa(mut v: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(ID_WIDTH);
    loop {
        out.push(b'0' + (v % 10) as u8);
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.reverse();
    out
}

fn digits(v: u64) -> usize {
    itoa(v).len()
}

struct Endpoint {
    authority: String,
    path: String,
}

impl Endpoint {
    fn parse(url: &str) -> Res<Self> {
        let rest = url
            .strip_prefix("http://")
            .ok_or("the limit client speaks plain http:// only")?;
        let (authority, path) = rest
            .split_once('/')
            .map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
        Ok(Endpoint {
            authority: authority.to_owned(),
            path,
        })
    }
}

/// What the era puts on every request.
struct Era {
    modern: bool,
    session: Option<String>,
}

impl Era {
    /// The request's bytes. `method`, `name` (the 2026 `Mcp-Name`) and the
    /// params' JSON without the braces (`params_inner`); `id: None` makes a
    /// notification.
    fn request(
        &self,
        ep: &Endpoint,
        method: &str,
        name: Option<&str>,
        params_inner: &str,
        id: bool,
    ) -> Template {
        let mut params = String::from("{");
        params.push_str(params_inner);
        if self.modern && id {
            if !params_inner.is_empty() {
                params.push(',');
            }
            params.push_str(&format!(
                r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"client-limit","version":"0.1.0"}}}}"#
            ));
        }
        params.push('}');
        let id_slot = " ".repeat(ID_WIDTH);
        let body = if id {
            format!(r#"{{"jsonrpc":"2.0","id":{id_slot},"method":"{method}","params":{params}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#)
        };
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
            ep.path, ep.authority
        );
        if method != "initialize" {
            head.push_str(&format!(
                "MCP-Protocol-Version: {}\r\n",
                if self.modern { MODERN } else { LEGACY }
            ));
        }
        if let Some(s) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        if self.modern {
            head.push_str(&format!("Mcp-Method: {method}\r\n"));
            if let Some(n) = name {
                head.push_str(&format!("Mcp-Name: {n}\r\n"));
            }
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let id_at = if id {
            head.len() + body.find("\"id\":").unwrap() + 5
        } else {
            0
        };
        let mut t = Template {
            bytes: [head.into_bytes(), body.into_bytes()].concat(),
            id_at,
        };
        if id {
            t.patch(0);
        }
        t
    }
}

// ------------------------------------------------------- blocking connection

struct Conn {
    sock: TcpStream,
    /// Read storage, initialised once and grown when full: `filled` bytes are
    /// the response so far (no zeroing on every read).
    buf: Vec<u8>,
    filled: usize,
    body: Vec<u8>,
    next_id: u64,
    /// How long a read spins on the non-blocking socket before it blocks
    /// (zero: it blocks at once).
    spin: std::time::Duration,
}

impl Conn {
    fn open(ep: &Endpoint) -> Res<Self> {
        let sock = TcpStream::connect(&ep.authority)?;
        sock.set_nodelay(true)?;
        let spin = std::time::Duration::from_micros(env_or("LIMIT_SPIN_US", 100));
        sock.set_nonblocking(!spin.is_zero())?;
        Ok(Conn {
            sock,
            buf: vec![0; 64 * 1024],
            filled: 0,
            body: Vec::new(),
            next_id: 0,
            spin,
        })
    }

    /// Reads what has arrived into the free part of the buffer. With a spin
    /// window, the socket is non-blocking and is read again and again for up
    /// to the window, so an answer that comes within it is read without the
    /// thread sleeping (on a virtual machine a sleeping CPU's wake-up costs
    /// more than a loopback round trip); after the window it blocks.
    fn read_some(&mut self) -> std::io::Result<usize> {
        if self.spin.is_zero() {
            return self.sock.read(&mut self.buf[self.filled..]);
        }
        let until = Instant::now() + self.spin;
        loop {
            match self.sock.read(&mut self.buf[self.filled..]) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= until {
                        self.sock.set_nonblocking(false)?;
                        let read = self.sock.read(&mut self.buf[self.filled..]);
                        self.sock.set_nonblocking(true)?;
                        return read;
                    }
                    std::hint::spin_loop();
                }
                other => return other,
            }
        }
    }

    /// Sends one request, returns its reply (the buffer keeps the bytes until the next call).
    fn call(&mut self, t: &mut Template) -> Res<Reply> {
        self.next_id += 1;
        if t.id_at != 0 {
            t.patch(self.next_id);
        }
        self.sock.write_all(&t.bytes)?;
        self.filled = 0;
        loop {
            if let Some(r) = parse_reply(&self.buf[..self.filled], &mut self.body)? {
                if r.consumed != self.filled {
                    return Err("bytes after the response".into());
                }
                if t.id_at != 0 && (r.id != Some(self.next_id) || !r.is_result || r.status != 200) {
                    return Err(format!(
                        "bad reply: status {} id {:?} (want {}) result {}",
                        r.status, r.id, self.next_id, r.is_result
                    )
                    .into());
                }
                return Ok(r);
            }
            if self.buf.len() - self.filled < 16 * 1024 {
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
            let n = self.read_some()?;
            if n == 0 {
                return Err("server closed the connection".into());
            }
            self.filled += n;
        }
    }

    /// The message of the last reply.
    fn message(&self, r: &Reply) -> &[u8] {
        if r.decoded {
            &self.body[r.msg.clone()]
        } else {
            &self.buf[r.msg.clone()]
        }
    }
}

/// Checks every answer to one kind of request against the first: same
/// length once the id's digits are set aside.
struct LengthCheck(Option<usize>);

impl LengthCheck {
    fn check(&mut self, r: &Reply, id: u64) -> Res<()> {
        let base = r.len - digits(id);
        match self.0 {
            None => self.0 = Some(base),
            Some(b) if b == base => {}
            Some(b) => return Err(format!("reply length {base} != {b}").into()),
        }
        Ok(())
    }
}

// --------------------------------------------------------------- workloads

struct Setup {
    ep: Endpoint,
    era: Era,
    conn: Conn,
}

fn connect(url: &str, modern: bool) -> Res<Setup> {
    let ep = Endpoint::parse(url)?;
    let mut conn = Conn::open(&ep)?;
    let mut era = Era {
        modern,
        session: None,
    };
    if modern {
        let mut t = era.request(&ep, "server/discover", None, "", true);
        let r = conn.call(&mut t)?;
        let msg = conn.message(&r);
        if find(msg, MODERN.as_bytes()).is_none() {
            return Err("server/discover does not offer 2026-07-28".into());
        }
    } else {
        let mut t = era.request(
            &ep,
            "initialize",
            None,
            &format!(r#""protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"client-limit","version":"0.1.0"}}"#),
            true,
        );
        let r = conn.call(&mut t)?;
        era.session = r.session.clone();
        let msg = conn.message(&r);
        if find(msg, format!(r#""protocolVersion":"{LEGACY}""#).as_bytes()).is_none() {
            return Err("initialize did not answer 2025-11-25".into());
        }
        let mut t = era.request(&ep, "notifications/initialized", None, "", false);
        let r = conn.call(&mut t)?;
        if r.status != 202 && r.status != 200 {
            return Err(format!("notifications/initialized: status {}", r.status).into());
        }
    }
    Ok(Setup { ep, era, conn })
}

fn close(s: &mut Setup) -> Res<()> {
    if let Some(session) = &s.era.session {
        let req = format!(
            "DELETE {} HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {LEGACY}\r\nContent-Length: 0\r\n\r\n",
            s.ep.path, s.ep.authority
        );
        let mut t = Template {
            bytes: req.into_bytes(),
            id_at: 0,
        };
        s.conn.call(&mut t)?;
    }
    Ok(())
}

fn run(workload: &str, n: usize, url: &str, modern: bool) -> Res<Map<String, Value>> {
    let t0 = Instant::now();
    let mut s = connect(url, modern)?;
    let mut out = Map::new();
    out.insert("init_ms".into(), (t0.elapsed().as_secs_f64() * 1e3).into());
    let echo_args = format!(r#""name":"echo","arguments":{{"text":"{ECHO_TEXT}"}}"#);
    let kb: u64 = env_or("MCP_BENCH_KB", 1024);
    let blob_args = format!(r#""name":"blob","arguments":{{"kb":{kb}}}"#);
    let (mut echo, mut blob, mut list) = (
        s.era
            .request(&s.ep, "tools/call", Some("echo"), &echo_args, true),
        s.era
            .request(&s.ep, "tools/call", Some("blob"), &blob_args, true),
        s.era.request(&s.ep, "tools/list", None, "", true),
    );
    let sequential = |s: &mut Setup,
                      t: &mut Template,
                      warm: usize,
                      n: usize,
                      min_len: usize|
     -> Res<(f64, f64, Vec<f64>)> {
        let mut check = LengthCheck(None);
        for _ in 0..warm {
            let r = s.conn.call(t)?;
            check.check(&r, s.conn.next_id)?;
        }
        if check.0.is_some_and(|b| b < min_len) {
            return Err("reply shorter than its payload".into());
        }
        let mut lat = Vec::with_capacity(n);
        let (start, cpu) = (Instant::now(), cpu_time_s());
        for _ in 0..n {
            let t1 = Instant::now();
            let r = s.conn.call(t)?;
            check.check(&r, s.conn.next_id)?;
            lat.push(t1.elapsed().as_secs_f64() * 1e6);
        }
        Ok((start.elapsed().as_secs_f64(), cpu_time_s() - cpu, lat))
    };
    match workload {
        "cold" => {
            let r = s.conn.call(&mut list)?;
            if r.len < 40_000 {
                return Err("tools/list too short for 50 tools".into());
            }
        }
        "seq" | "list" | "big" => {
            let (t, warm, min) = match workload {
                "seq" => (&mut echo, 200, ECHO_TEXT.len()),
                "list" => (&mut list, 20, 40_000),
                _ => (&mut blob, 2, kb as usize * 1024),
            };
            let (secs, cpu, mut lat) = sequential(&mut s, t, warm, n, min)?;
            out.insert("elapsed_s".into(), secs.into());
            out.insert("ops_per_s".into(), (n as f64 / secs).into());
            if workload == "big" {
                out.insert(
                    "mb_per_s".into(),
                    ((n as u64 * kb * 1024) as f64 / 1e6 / secs).into(),
                );
            }
            record_latencies(&mut out, &mut lat);
            out.insert("cpu_s".into(), cpu.into());
        }
        "conc" => {
            let width: usize = env_or("MCP_BENCH_CONC", 64);
            let (_, _, _) = sequential(&mut s, &mut echo, 200, 0, ECHO_TEXT.len())?;
            let (secs, cpu) = conc(&s, &echo, n, width)?;
            out.insert("elapsed_s".into(), secs.into());
            out.insert("ops_per_s".into(), (n as f64 / secs).into());
            out.insert("concurrency".into(), width.into());
            out.insert("cpu_s".into(), cpu.into());
        }
        other => return Err(format!("unknown workload {other}").into()),
    }
    close(&mut s)?;
    out.insert("total_ms".into(), (t0.elapsed().as_secs_f64() * 1e3).into());
    Ok(out)
}

/// `conc`: `width` keep-alive connections, one request in flight on each,
/// driven by one thread over epoll (mio). Every connection is opened (and
/// its first request answered, which checks the reply length) before the
/// clock starts.
fn conc(s: &Setup, echo: &Template, n: usize, width: usize) -> Res<(f64, f64)> {
    use mio::{Events, Interest, Poll, Token, net::TcpStream as MioStream};
    struct Slot {
        sock: MioStream,
        req: Template,
        buf: Vec<u8>,
        body: Vec<u8>,
        id: u64,
        written: usize,
    }
    let mut poll = Poll::new()?;
    let mut slots = Vec::with_capacity(width);
    let mut check = LengthCheck(None);
    let mut next_id = 1_000_000u64;
    for i in 0..width.min(n) {
        // A blocking first exchange on each connection, then it goes non-blocking.
        let mut c = Conn::open(&s.ep)?;
        c.next_id = next_id;
        let mut req = echo.clone();
        let r = c.call(&mut req)?;
        check.check(&r, c.next_id)?;
        next_id += 1;
        c.sock.set_nonblocking(true)?;
        let mut sock = MioStream::from_std(c.sock);
        poll.registry()
            .register(&mut sock, Token(i), Interest::READABLE | Interest::WRITABLE)?;
        slots.push(Slot {
            sock,
            req,
            buf: Vec::with_capacity(4096),
            body: Vec::new(),
            id: 0,
            written: 0,
        });
    }
    let mut events = Events::with_capacity(width * 2);
    let (start, cpu) = (Instant::now(), cpu_time_s());
    let (mut sent, mut done) = (0usize, 0usize);
    let send = |slot: &mut Slot, id: u64| -> Res<()> {
        slot.id = id;
        slot.req.patch(id);
        slot.written = 0;
        flush(slot)
    };
    fn flush(slot: &mut Slot) -> Res<()> {
        while slot.written < slot.req.bytes.len() {
            match slot.sock.write(&slot.req.bytes[slot.written..]) {
                Ok(k) => slot.written += k,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
    for slot in slots.iter_mut() {
        if sent < n {
            send(slot, next_id)?;
            next_id += 1;
            sent += 1;
        }
    }
    let mut chunk = [0u8; 16 * 1024];
    while done < n {
        poll.poll(&mut events, None)?;
        for ev in events.iter() {
            let slot = &mut slots[ev.token().0];
            if ev.is_writable() {
                flush(slot)?;
            }
            if !ev.is_readable() {
                continue;
            }
            loop {
                match slot.sock.read(&mut chunk) {
                    Ok(0) => return Err("server closed a connection".into()),
                    Ok(k) => slot.buf.extend_from_slice(&chunk[..k]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e.into()),
                }
            }
            let Some(r) = parse_reply(&slot.buf, &mut slot.body)? else {
                continue;
            };
            if r.consumed != slot.buf.len()
                || r.status != 200
                || r.id != Some(slot.id)
                || !r.is_result
            {
                return Err(format!(
                    "bad reply: status {} id {:?} want {}",
                    r.status, r.id, slot.id
                )
                .into());
            }
            check.check(&r, slot.id)?;
            slot.buf.clear();
            done += 1;
            if sent < n {
                send(slot, next_id)?;
                next_id += 1;
                sent += 1;
            }
        }
    }
    Ok((start.elapsed().as_secs_f64(), cpu_time_s() - cpu))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: client-limit <cold|seq|conc|big|list> <N> <URL> [legacy|2026]";
    let workload = args.first().ok_or(usage)?.clone();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).ok_or(usage)?;
    let url = args.get(2).ok_or(usage)?;
    let modern = match args.get(3).map(String::as_str) {
        None | Some("legacy") => false,
        Some("2026") | Some("2026-07-28") => true,
        Some(other) => return Err(format!("unknown era {other}").into()),
    };
    let mut out = run(&workload, n, url, modern)?;
    out.insert("client".into(), "limit".into());
    out.insert("workload".into(), workload.into());
    out.insert("n".into(), n.into());
    out.insert(
        "protocol".into(),
        (if modern { MODERN } else { LEGACY }).into(),
    );
    out.insert("peak_rss_kb".into(), peak_rss_kb().into());
    println!("{}", Value::Object(out));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_reply_with_content_length() {
        let raw = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{}}   ";
        let mut body = Vec::new();
        assert_eq!(parse_reply(&raw[..50], &mut body).unwrap(), None);
        let r = parse_reply(raw, &mut body).unwrap().unwrap();
        assert_eq!(
            (r.status, r.id, r.is_result, r.len, r.consumed),
            (200, Some(17), true, 40, raw.len())
        );
    }

    #[test]
    fn chunked_event_stream_with_priming_event() {
        let events = b"id: 0\nretry: 3000\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"x\":1}}\n\n";
        let (a, b) = events.split_at(30);
        let mut raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nMcp-Session-Id: abc\r\n\r\n".to_vec();
        for part in [a, b] {
            raw.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            raw.extend_from_slice(part);
            raw.extend_from_slice(b"\r\n");
        }
        let mut body = Vec::new();
        assert_eq!(
            parse_reply(&raw, &mut body).unwrap(),
            None,
            "no last chunk yet"
        );
        raw.extend_from_slice(b"0\r\n\r\n");
        let r = parse_reply(&raw, &mut body).unwrap().unwrap();
        assert_eq!((r.id, r.is_result, r.consumed), (Some(5), true, raw.len()));
        assert_eq!(
            &body[r.msg.clone()],
            br#"{"jsonrpc":"2.0","id":5,"result":{"x":1}}"#
        );
        assert_eq!(r.session.as_deref(), Some("abc"));
    }

    #[test]
    fn error_and_trailing_id() {
        assert_eq!(
            message_id(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1}}"#),
            (Some(3), false)
        );
        assert_eq!(
            message_id(br#"{"result":{"content":[]},"jsonrpc":"2.0","id":42}"#),
            (Some(42), true)
        );
        let mut r = String::from(r#"{"result":{"text":""#);
        r.push_str(&"x".repeat(200));
        r.push_str(r#""},"jsonrpc":"2.0","id":9}"#);
        assert_eq!(message_id(r.as_bytes()), (Some(9), true));
    }

    #[test]
    fn accepted_notification_has_no_message() {
        let raw = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
        let r = parse_reply(raw, &mut Vec::new()).unwrap().unwrap();
        assert_eq!((r.status, r.id, r.len), (202, None, 0));
    }

    #[test]
    fn id_slot_keeps_the_length() {
        let ep = Endpoint::parse("http://127.0.0.1:1/mcp").unwrap();
        let era = Era {
            modern: true,
            session: None,
        };
        let mut t = era.request(&ep, "tools/call", Some("echo"), r#""name":"echo""#, true);
        let len = t.bytes.len();
        t.patch(1234567);
        assert_eq!(t.bytes.len(), len);
        let text = String::from_utf8(t.bytes.clone()).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["id"], 1234567);
        assert!(
            text.contains("Mcp-Name: echo\r\n")
                && text.contains(&format!("Content-Length: {}\r\n", body.len()))
        );
    }
}

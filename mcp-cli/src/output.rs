//! How things are shown: colour (only on a terminal, never with `NO_COLOR`),
//! aligned tables, JSON documents, and result content.

use std::io::{IsTerminal, Write};

use comfy_table::{ColumnConstraint, Table, TableStyle, Width};
use mcp_types::text::{escape_content, escape_line};
use mcp_types::{ContentBlock, ResourceContents};
use serde_json::Value;

use crate::error::CliError;

/// What the terminal can take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ui {
    /// Colour on stdout.
    pub(crate) color: bool,
    /// Colour on stderr.
    pub(crate) err_color: bool,
    /// stderr is a terminal: live status lines and spinners.
    pub(crate) live: bool,
    /// `-v` count.
    pub(crate) verbose: u8,
    /// A person can answer a question: stdin and stderr are terminals.
    pub(crate) interactive: bool,
}

impl Ui {
    pub(crate) fn detect(verbose: u8) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        Self {
            color: stdout_tty && !no_color,
            err_color: stderr_tty && !no_color,
            live: stderr_tty,
            verbose,
            interactive: stderr_tty && std::io::stdin().is_terminal(),
        }
    }

    /// A painter for stdout.
    pub(crate) fn out(&self) -> Paint {
        Paint(self.color)
    }

    /// A painter for stderr.
    pub(crate) fn err(&self) -> Paint {
        Paint(self.err_color)
    }
}

/// ANSI styling that is a no-op when colour is off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Paint(pub(crate) bool);

impl Paint {
    fn wrap(self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    pub(crate) fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }
    pub(crate) fn dim(self, text: &str) -> String {
        self.wrap("2", text)
    }
    pub(crate) fn red(self, text: &str) -> String {
        self.wrap("31", text)
    }
    #[cfg_attr(not(feature = "demo"), allow(dead_code))]
    pub(crate) fn green(self, text: &str) -> String {
        self.wrap("32", text)
    }
    pub(crate) fn yellow(self, text: &str) -> String {
        self.wrap("33", text)
    }
    #[cfg_attr(not(feature = "demo"), allow(dead_code))]
    pub(crate) fn cyan(self, text: &str) -> String {
        self.wrap("36", text)
    }
}

/// An aligned table with upper-case headers and no borders. Cells are plain
/// text (colour would upset the alignment), shown with their control
/// characters escaped: most cells are a server's names and descriptions.
pub(crate) fn table(headers: &[&str], rows: Vec<Vec<String>>) -> String {
    aligned(Some(headers), rows)
}

/// Aligned rows without a header, escaped as [`table`]'s, each line
/// indented by `indent` spaces.
pub(crate) fn rows(rows: Vec<Vec<String>>, indent: usize) -> String {
    let pad = " ".repeat(indent);
    aligned(None, rows)
        .lines()
        .map(|line| format!("{pad}{line}\n"))
        .collect()
}

fn aligned(headers: Option<&[&str]>, rows: Vec<Vec<String>>) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let columns = headers.map_or_else(|| rows.iter().map(Vec::len).max().unwrap_or(0), <[_]>::len);
    let mut table = Table::new();
    table.load_style(TableStyle::new());
    if let Some(headers) = headers {
        table.set_header(headers.iter().map(|h| h.to_uppercase()).collect::<Vec<_>>());
    }
    for row in rows {
        table.add_row(
            row.iter()
                .map(|cell| escape_line(cell).into_owned())
                .collect::<Vec<_>>(),
        );
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    if let Some(last) = table.column_mut(columns.saturating_sub(1)) {
        last.set_padding((0, 0));
        last.set_constraint(ColumnConstraint::UpperBoundary(Width::Fixed(200)));
    }
    let mut out = table.trim_fmt();
    out.push('\n');
    out
}

/// `, 1 tool`, `, 3 tools`, or nothing when the count is not known (lazy
/// discovery).
pub(crate) fn tool_count(tools: Option<usize>) -> String {
    match tools {
        Some(1) => ", 1 tool".to_owned(),
        Some(n) => format!(", {n} tools"),
        None => String::new(),
    }
}

/// The first line of `text`, at most `max` characters, marked `…` when cut.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    let cut = first.chars().count() > max || text.trim().lines().nth(1).is_some();
    let mut out: String = first.chars().take(max).collect();
    if cut {
        out.push('…');
    }
    out
}

/// Writes `text` to stdout.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .or_else(ignore_broken_pipe)
        .map_err(CliError::Output)
}

/// Writes one JSON document, pretty, to stdout.
pub(crate) fn print_json(value: &Value) -> Result<(), CliError> {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    text.push('\n');
    print(&text)
}

/// A reader that went away (`mcp tools | head`) is not an error.
fn ignore_broken_pipe(e: std::io::Error) -> std::io::Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

/// Serialises a wire type to JSON (our own types: cannot fail).
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Human form of content blocks: text as text, other kinds summarised.
/// Everything in them is the server's: text is shown with its control
/// characters escaped (newlines and tabs kept), labels on one line.
pub(crate) fn render_content(blocks: &[ContentBlock], paint: Paint) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => {
                let text = escape_content(&t.text);
                out.push_str(&text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            ContentBlock::Image(i) => out.push_str(&paint.dim(&format!(
                "[image {}, {} of base64]\n",
                escape_line(&i.mime_type),
                size(i.data.len())
            ))),
            ContentBlock::Audio(a) => out.push_str(&paint.dim(&format!(
                "[audio {}, {} of base64]\n",
                escape_line(&a.mime_type),
                size(a.data.len())
            ))),
            ContentBlock::ResourceLink(l) => {
                out.push_str(&paint.dim(&format!(
                    "[resource link {} ({})]\n",
                    escape_line(&l.uri),
                    escape_line(&l.name)
                )));
            }
            ContentBlock::Resource(r) => {
                out.push_str(&render_resource_contents(&r.resource, paint));
            }
            other => {
                let kind = match other.kind() {
                    "" => "unknown",
                    k => k,
                };
                out.push_str(&paint.dim(&format!("[{} content; see --json]\n", escape_line(kind))));
            }
        }
    }
    out
}

/// Human form of one resource's contents.
pub(crate) fn render_resource_contents(contents: &ResourceContents, paint: Paint) -> String {
    match contents {
        ResourceContents::Text(t) => {
            let mut s = escape_content(&t.text).into_owned();
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s
        }
        ResourceContents::Blob(b) => paint.dim(&format!(
            "[blob {} {}, {} of base64]\n",
            escape_line(&b.uri),
            escape_line(b.mime_type.as_deref().unwrap_or("(no type)")),
            size(b.blob.len())
        )),
        other => paint.dim(&format!(
            "[contents of {} in a form this client does not know; see --json]\n",
            escape_line(other.uri())
        )),
    }
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_skip_when_empty() {
        let t = table(
            &["name", "server"],
            vec![
                vec!["a/search".into(), "a".into()],
                vec!["x".into(), "bbb".into()],
            ],
        );
        assert_eq!(t, "NAME      SERVER\na/search  a\nx         bbb\n");
        assert_eq!(table(&["a"], vec![]), "");
        let r = rows(
            vec![
                vec!["a".into(), "number".into()],
                vec!["long\u{1b}".into(), "x".into()],
            ],
            2,
        );
        assert_eq!(r, "  a           number\n  long\\u{1b}  x\n");
    }

    #[test]
    fn a_tool_count_is_said_in_the_right_number_or_not_at_all() {
        assert_eq!(tool_count(Some(1)), ", 1 tool");
        assert_eq!(tool_count(Some(0)), ", 0 tools");
        assert_eq!(tool_count(Some(14)), ", 14 tools");
        assert_eq!(tool_count(None), "");
    }

    #[test]
    fn one_line_marks_what_it_cuts() {
        assert_eq!(one_line("short", 10), "short");
        assert_eq!(one_line("0123456789abc", 10), "0123456789…");
        assert_eq!(one_line("first\nsecond", 10), "first…");
    }

    #[test]
    fn paint_is_plain_without_colour() {
        assert_eq!(Paint(false).red("x"), "x");
        assert_eq!(Paint(true).red("x"), "\x1b[31mx\x1b[0m");
    }
}

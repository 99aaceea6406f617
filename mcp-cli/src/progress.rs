//! What runs while the user waits: a spinner, live status lines per server,
//! and a tool's progress notifications. Drawn on stderr only when it is a
//! terminal; progress notifications are printed as plain lines otherwise.

use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_types::ProgressParams;
use tokio::sync::mpsc;

use crate::output::Ui;

const TICK: Duration = Duration::from_millis(80);

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn status_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix:<16} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A spinner with a message, or nothing when stderr is not a terminal.
pub(crate) struct Activity {
    bar: Option<ProgressBar>,
}

/// The spinner on the terminal now, if any: hidden while a server's
/// question is asked there ([`while_hidden`]).
static SHOWN: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);

fn shown() -> std::sync::MutexGuard<'static, Option<ProgressBar>> {
    SHOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `ask` (a question at the terminal, blocking) with the spinner off
/// the screen: its line is cleared and nothing is drawn until `ask` ends.
/// The spinner's state is not locked meanwhile, so progress that arrives
/// goes on updating it unseen.
pub(crate) fn while_hidden<T>(ask: impl FnOnce() -> T) -> T {
    let bar = shown().clone();
    if let Some(bar) = &bar {
        bar.set_draw_target(ProgressDrawTarget::hidden());
        // The spinner is one line, the cursor at its end.
        eprint!("\r\x1b[2K");
    }
    let answer = ask();
    if let Some(bar) = &bar
        && !bar.is_finished()
    {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    answer
}

impl Activity {
    pub(crate) fn start(ui: &Ui, message: &str) -> Self {
        if !ui.live {
            return Self { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(spinner_style());
        bar.set_message(message.to_owned());
        bar.enable_steady_tick(TICK);
        *shown() = Some(bar.clone());
        Self { bar: Some(bar) }
    }

    pub(crate) fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    pub(crate) fn is_live(&self) -> bool {
        self.bar.is_some()
    }

    /// Removes the spinner.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
            let mut shown = shown();
            if shown.as_ref().is_some_and(ProgressBar::is_finished) {
                *shown = None;
            }
        }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One live line per server while they start.
pub(crate) struct StatusLines {
    multi: Option<MultiProgress>,
    lines: Vec<(String, ProgressBar)>,
}

impl StatusLines {
    pub(crate) fn new(ui: &Ui, servers: &[String]) -> Self {
        if !ui.live {
            return Self {
                multi: None,
                lines: Vec::new(),
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let lines = servers
            .iter()
            .map(|name| {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(status_style());
                bar.set_prefix(name.clone());
                bar.set_message("starting…");
                bar.enable_steady_tick(TICK);
                (name.clone(), bar)
            })
            .collect();
        Self {
            multi: Some(multi),
            lines,
        }
    }

    /// Sets `server`'s line; `done` stops its spinner.
    pub(crate) fn set(&self, server: &str, message: String, done: bool) {
        if let Some((_, bar)) = self.lines.iter().find(|(n, _)| n == server) {
            if done {
                bar.finish_with_message(message);
            } else {
                bar.set_message(message);
            }
        }
    }

    /// Removes every line.
    pub(crate) fn clear(&self) {
        for (_, bar) in &self.lines {
            bar.finish_and_clear();
        }
        if let Some(multi) = &self.multi {
            let _ = multi.clear();
        }
    }
}

/// `notifications/progress` params in words: `2/4 (50%) message`.
pub(crate) fn describe_progress(params: &ProgressParams) -> Option<String> {
    let progress = params.progress_f64()?;
    let mut text = match params.total.as_ref().and_then(serde_json::Number::as_f64) {
        Some(total) if total > 0.0 => format!(
            "{}/{} ({:.0}%)",
            number(progress),
            number(total),
            100.0 * progress / total
        ),
        _ => number(progress),
    };
    if let Some(message) = &params.message {
        text.push(' ');
        // The server's words, on one line.
        text.push_str(&mcp_types::text::escape_line(message));
    }
    Some(text)
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Shows progress notifications until the sender is dropped: on the spinner
/// when live, else as `progress: …` lines on stderr.
pub(crate) async fn show_progress(
    mut updates: mpsc::Receiver<ProgressParams>,
    activity: &Activity,
) {
    while let Some(params) = updates.recv().await {
        let Some(text) = describe_progress(&params) else {
            continue;
        };
        if activity.is_live() {
            activity.set_message(format!("running… {text}"));
        } else {
            eprintln!("progress: {text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> ProgressParams {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn progress_in_words() {
        assert_eq!(
            describe_progress(&params(
                r#"{"progressToken": 1, "progress": 2, "total": 4, "message": "half\u001b[2J"}"#
            ))
            .as_deref(),
            Some("2/4 (50%) half\\u{1b}[2J")
        );
        assert_eq!(
            describe_progress(&params(r#"{"progressToken": 1, "progress": 0.5}"#)).as_deref(),
            Some("0.5")
        );
    }
}

//! Showing a peer's text safely: control characters escaped, length bounded.
//!
//! Everything a server sends is hostile until shown otherwise. A string that
//! reaches a terminal raw can clear the screen, forge lines, set the window
//! title (OSC 0) or write the clipboard (OSC 52); Unicode direction overrides
//! can make text read differently from what it is. These helpers turn such a
//! string into text that shows exactly what was sent, one visible character
//! per hidden one:
//!
//! - [`escape_line`]: for labels, names and anything inside one line of our
//!   own (errors, table cells). Every control character is escaped,
//!   newlines and tabs included.
//! - [`escape_content`]: for text that is content (a tool's text result, a
//!   server's instructions). Newlines and tabs are kept; every other control
//!   character is escaped.
//! - [`Untrusted`]: a `Display` wrapper that escapes as [`escape_line`] does
//!   and bounds the length, for a server string placed inside an error
//!   message of ours.
//!
//! Escaped characters read as `\n`, `\t`, `\r` or `\u{1b}`. What is escaped:
//! C0 controls (U+0000–U+001F), DEL, C1 controls (U+0080–U+009F, which some
//! terminals obey like ESC sequences), the Unicode bidirectional controls
//! (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the line and
//! paragraph separators (U+2028, U+2029), and the characters that show as
//! nothing and have no use in text shown to a person: the zero-width space
//! and word joiner, invisible operators, byte-order mark, fillers and the
//! tag characters (U+E0000–U+E007F, which can spell hidden words), so that
//! `ec\u{200b}ho` cannot pass for `echo`. The invisible characters that text
//! does use — zero-width (non-)joiners in emoji and scripts, variation
//! selectors, the soft hyphen — are kept in content and escaped in a line
//! (a name, a label, a table cell).

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// Characters of a server string kept inside an error message by default.
pub const UNTRUSTED_DISPLAY_CHARS: usize = 200;

/// Whether `c` must never reach a terminal as it is.
fn is_dangerous(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
        || is_invisible(c)
}

/// Characters that show as nothing and have no use in text shown to a
/// person: a name holding one looks like another name.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{34f}'                      // combining grapheme joiner
        | '\u{115f}' | '\u{1160}'      // Hangul fillers
        | '\u{17b4}' | '\u{17b5}'      // Khmer inherent vowels
        | '\u{180e}'                   // Mongolian vowel separator
        | '\u{200b}'                   // zero-width space
        | '\u{2060}'..='\u{2064}'      // word joiner, invisible operators
        | '\u{206a}'..='\u{206f}'      // deprecated format characters
        | '\u{3164}' | '\u{ffa0}'      // Hangul fillers
        | '\u{feff}'                   // byte-order mark
        | '\u{fff9}'..='\u{fffb}'      // interlinear annotation
        | '\u{e0000}'..='\u{e007f}') // tags
}

/// Invisible characters that text does use: joining emoji and letters
/// (ZWNJ, ZWJ), choosing a glyph's presentation (variation selectors) and
/// a hyphenation hint (soft hyphen). Kept in content; escaped in a line,
/// where text names or labels something.
fn is_invisible_in_use(c: char) -> bool {
    matches!(c,
        '\u{ad}'
        | '\u{180b}'..='\u{180d}' | '\u{180f}'
        | '\u{200c}' | '\u{200d}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{e0100}'..='\u{e01ef}')
}

/// Whether `c` is escaped inside one line of ours.
fn escaped_in_line(c: char) -> bool {
    is_dangerous(c) || is_invisible_in_use(c)
}

fn write_escaped(out: &mut impl fmt::Write, c: char) -> fmt::Result {
    match c {
        '\n' => out.write_str("\\n"),
        '\t' => out.write_str("\\t"),
        '\r' => out.write_str("\\r"),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    }
}

fn escape(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = text.find(&escaped) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if escaped(c) {
            // Writing to a String cannot fail.
            let _ = write_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a label of `host` is Punycode (`xn--…`): an internationalised
/// name, which a browser may show in another script, imitating a name the
/// reader knows. Hosts that show a server's URL warn of it.
pub fn is_punycode_host(host: &str) -> bool {
    host.split('.').any(|label| {
        label
            .get(..4)
            .is_some_and(|start| start.eq_ignore_ascii_case("xn--"))
    })
}

/// `text` with every control character escaped (newlines and tabs too), and
/// every invisible one: safe inside one line of a terminal, and a name
/// shown this way looks like no other.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, escaped_in_line)
}

/// Whether content escapes `c` (newline and tab are kept).
fn escaped_in_content(c: char) -> bool {
    is_dangerous(c) && c != '\n' && c != '\t'
}

/// `text` with every control character but newline and tab escaped, and
/// the invisible characters text has no use for: safe to print as content
/// on a terminal. A carriage return is kept only right before a newline (a
/// lone one could overwrite the line it ends).
pub fn escape_content(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return escape(text, escaped_in_content);
    }
    // Keep `\r\n`; escape a lone `\r`.
    let mut out = String::with_capacity(text.len() + 8);
    let mut pieces = text.split("\r\n").peekable();
    while let Some(piece) = pieces.next() {
        out.push_str(&escape(piece, escaped_in_content));
        if pieces.peek().is_some() {
            out.push_str("\r\n");
        }
    }
    Cow::Owned(out)
}

/// A peer's string shown inside a message of ours: control characters
/// escaped as by [`escape_line`], and at most `max` characters of it shown,
/// the cut said in words (`… (1234 more bytes)`), so a long string can
/// neither flood the message nor pass for complete.
///
/// ```
/// use mcp_types::text::Untrusted;
/// let shown = format!("it offered {}", Untrusted::new("2025\u{1b}[2J"));
/// assert_eq!(shown, "it offered 2025\\u{1b}[2J");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Untrusted<'a> {
    text: &'a str,
    max: usize,
}

impl<'a> Untrusted<'a> {
    /// `text`, bounded to [`UNTRUSTED_DISPLAY_CHARS`] characters.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            max: UNTRUSTED_DISPLAY_CHARS,
        }
    }

    /// `text`, bounded to `max` characters.
    pub fn bounded(text: &'a str, max: usize) -> Self {
        Self { text, max }
    }
}

impl fmt::Display for Untrusted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cut = self.text.char_indices().nth(self.max).map(|(at, _)| at);
        let shown = &self.text[..cut.unwrap_or(self.text.len())];
        for c in shown.chars() {
            if escaped_in_line(c) {
                write_escaped(f, c)?;
            } else {
                f.write_char(c)?;
            }
        }
        if let Some(at) = cut {
            write!(f, "… ({} more bytes)", self.text.len() - at)?;
        }
        Ok(())
    }
}

/// An error and its causes in one line, `outer: cause: deeper cause`, each
/// level's words once (a cause that repeats the line so far is left out).
/// For an error that folds its source into its own message, so that
/// `source()` can return nothing and nobody prints the same words twice.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'a));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = self.0.to_string();
        let mut source = self.0.source();
        while let Some(cause) = source {
            let words = cause.to_string();
            if !line.ends_with(&words) {
                line.push_str(": ");
                line.push_str(&words);
            }
            source = cause.source();
        }
        f.write_str(&line)
    }
}

impl fmt::Debug for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_punycode_label_anywhere_in_a_host_is_told() {
        assert!(is_punycode_host("xn--uth-5cd.example.com"));
        assert!(is_punycode_host("login.XN--pple-43d.com"));
        assert!(!is_punycode_host("auth.example.com"));
        assert!(!is_punycode_host("xn-.example.com"));
        assert!(
            !is_punycode_host("\u{430}\u{430}\u{430}\u{430}.example"),
            "no panic on other scripts"
        );
    }

    #[test]
    fn line_escapes_every_control_and_direction_override() {
        assert_eq!(escape_line("plain text é 日本"), "plain text é 日本");
        assert!(matches!(escape_line("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_line("a\u{1b}[2Jb\u{1b}]0;title\u{7}"),
            "a\\u{1b}[2Jb\\u{1b}]0;title\\u{7}"
        );
        assert_eq!(escape_line("x\ny\tz\rw"), "x\\ny\\tz\\rw");
        assert_eq!(escape_line("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(escape_line("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape_line("\u{7f}\u{2028}"), "\\u{7f}\\u{2028}");
    }

    #[test]
    fn an_invisible_character_cannot_make_one_name_look_like_another() {
        // Zero-width space, byte-order mark, word joiner, Hangul filler,
        // and tag characters spelling a hidden word.
        assert_eq!(escape_line("ec\u{200b}ho"), "ec\\u{200b}ho");
        assert_eq!(
            escape_line("\u{feff}a\u{2060}b\u{3164}"),
            "\\u{feff}a\\u{2060}b\\u{3164}"
        );
        assert_eq!(
            escape_line("ok\u{e0068}\u{e0069}"),
            "ok\\u{e0068}\\u{e0069}"
        );
        // In a line, the invisible characters text uses are escaped too.
        assert_eq!(
            escape_line("a\u{200d}b\u{ad}c\u{fe0f}"),
            "a\\u{200d}b\\u{ad}c\\u{fe0f}"
        );
        assert_eq!(Untrusted::new("ec\u{200d}ho").to_string(), "ec\\u{200d}ho");
        // Content keeps those (an emoji sequence, Persian's non-joiner) and
        // escapes the rest.
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} \u{2764}\u{fe0f} \u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}";
        assert_eq!(escape_content(family), family);
        assert_eq!(
            escape_content("run\u{200b}\u{e0072}\u{e006d}"),
            "run\\u{200b}\\u{e0072}\\u{e006d}"
        );
    }

    #[test]
    fn content_keeps_lines_and_tabs_but_not_lone_carriage_returns() {
        assert_eq!(escape_content("a\nb\tc"), "a\nb\tc");
        assert_eq!(escape_content("ok\r\nnext"), "ok\r\nnext");
        assert_eq!(escape_content("real\rforged"), "real\\rforged");
        assert_eq!(
            escape_content("one\r\n\u{1b}]52;c;ZXZpbA==\u{7}\r"),
            "one\r\n\\u{1b}]52;c;ZXZpbA==\\u{7}\\r"
        );
    }

    #[test]
    fn untrusted_is_escaped_and_bounded_with_the_cut_said() {
        assert_eq!(Untrusted::new("2025-06-18").to_string(), "2025-06-18");
        assert_eq!(
            Untrusted::new("\u{1b}[2J\u{1b}[1;1Hok").to_string(),
            "\\u{1b}[2J\\u{1b}[1;1Hok"
        );
        assert_eq!(
            Untrusted::bounded("abcdef", 3).to_string(),
            "abc… (3 more bytes)"
        );
        assert_eq!(Untrusted::bounded("abc", 3).to_string(), "abc");
        let long = "x".repeat(10_000);
        assert!(Untrusted::new(&long).to_string().len() < 250);
    }

    proptest::proptest! {
        #[test]
        fn escaped_text_never_holds_a_dangerous_character(s in "\\PC*|[\\x00-\\x20\\x7f-\\u{ad}\\u{200b}-\\u{206f}\\u{fe00}-\\u{fe0f}\\u{feff}\\u{e0000}-\\u{e007f}a]*") {
            proptest::prop_assert!(!escape_line(&s).chars().any(escaped_in_line));
            proptest::prop_assert!(!Untrusted::new(&s).to_string().chars().any(escaped_in_line));
            proptest::prop_assert!(!escape_content(&s)
                .replace("\r\n", "")
                .chars()
                .any(|c| is_dangerous(c) && c != '\n' && c != '\t'));
        }
    }
}

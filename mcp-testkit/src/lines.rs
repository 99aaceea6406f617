//! Bounded newline-delimited line reading.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What one bounded read produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// A complete line (without its newline) is in the buffer; a final line
    /// without a newline before end of input also counts.
    Line,
    /// The line exceeded the bound; it was skipped through its newline (or to
    /// end of input). Carries how many bytes were skipped.
    TooLong(usize),
    /// End of input, no bytes pending.
    Eof,
}

/// Reads one line into `line` (cleared first), never holding more than `max`
/// bytes: an oversized line is consumed and dropped, so the next call starts
/// at the next line.
pub(crate) async fn read_line_bounded<R>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead>
where
    R: AsyncBufRead + Unpin,
{
    line.clear();
    let mut seen = 0usize;
    let mut discarding = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (seen, discarding) {
                (0, _) => LineRead::Eof,
                (_, true) => LineRead::TooLong(seen),
                (_, false) => LineRead::Line,
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.unwrap_or(available.len());
        if !discarding {
            if line.len() + take > max {
                discarding = true;
                line.clear();
            } else {
                line.extend_from_slice(&available[..take]);
            }
        }
        seen = seen.saturating_add(take);
        match newline {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(if discarding {
                    LineRead::TooLong(seen)
                } else {
                    LineRead::Line
                });
            }
            None => reader.consume(take),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn oversized_line_is_skipped_and_the_next_one_read() {
        let input: &[u8] = b"short\nthis line is too long\nok\nlast";
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut line = Vec::new();
        let mut got = Vec::new();
        loop {
            match read_line_bounded(&mut reader, &mut line, 8).await.unwrap() {
                LineRead::Eof => break,
                LineRead::Line => got.push(String::from_utf8(line.clone()).unwrap()),
                LineRead::TooLong(n) => got.push(format!("<too long {n}>")),
            }
        }
        assert_eq!(got, ["short", "<too long 21>", "ok", "last"]);
    }
}

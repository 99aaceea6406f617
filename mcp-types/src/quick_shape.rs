//! A structural look at the top level of a result object: which of
//! `resultType` and `task` it has, and the `resultType` text, found by
//! jumping over values rather than parsing them.
//!
//! Why: a 2026-07-28 result is decoded in two steps, its kind first (from
//! those two members), then the whole result as that kind. serde_json's
//! pass over the top level validates every value it skips, so the first
//! step cost as much as the decode itself: a 1 MiB text result was read
//! twice. Here a string is skipped with `memchr` from one quote to the
//! next (a quote after an odd run of backslashes is escaped), and
//! containers by counting brackets outside strings.
//!
//! Contract: `None` whenever the look cannot be sure it agrees with
//! serde_json's reading (a key or a `resultType` with an escape, a member
//! twice, anything that is not an object of that shape); the caller then
//! takes serde_json's pass. An answer never validates the values it
//! skipped: the caller's decode that follows does (and fails on invalid
//! JSON whatever this said). Property tests hold it to serde_json.

/// The two members a result's kind depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopLevel<'a> {
    /// The `resultType` string, as written (it had no escape).
    pub(crate) result_type: Option<&'a str>,
    /// Whether a `task` member is present.
    pub(crate) has_task: bool,
}

/// The `resultType` and `task` members of the object `raw`, or `None` when
/// unsure (see the module docs).
pub(crate) fn top_level(raw: &[u8]) -> Option<TopLevel<'_>> {
    let mut found = TopLevel {
        result_type: None,
        has_task: false,
    };
    let mut i = skip_ws(raw, 0);
    if raw.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(raw, i + 1);
    if raw.get(i) == Some(&b'}') {
        return (skip_ws(raw, i + 1) == raw.len()).then_some(found);
    }
    loop {
        if raw.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(raw, i)?;
        // The key without its quotes; one with an escape is left to serde.
        let key = &raw[i + 1..key_end - 1];
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_ws(raw, key_end);
        if raw.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(raw, i + 1);
        let start = i;
        i = value_end(raw, i)?;
        match key {
            b"resultType" => {
                let value = &raw[start..i];
                let text = value.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
                if found.result_type.is_some() || text.contains(&b'\\') {
                    return None;
                }
                found.result_type = Some(std::str::from_utf8(text).ok()?);
            }
            b"task" => {
                if found.has_task {
                    return None;
                }
                found.has_task = true;
            }
            _ => {}
        }
        i = skip_ws(raw, i);
        match raw.get(i) {
            Some(b',') => i = skip_ws(raw, i + 1),
            Some(b'}') => {
                return (skip_ws(raw, i + 1) == raw.len()).then_some(found);
            }
            _ => return None,
        }
    }
}

/// The index after the JSON whitespace at `i`.
fn skip_ws(raw: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = raw.get(i) {
        i += 1;
    }
    i
}

/// The index after the string that starts (with its quote) at `i`: the
/// first quote after it that an even number of backslashes precedes (a long
/// text's many escapes are jumped over, not stopped at one by one).
fn string_end(raw: &[u8], i: usize) -> Option<usize> {
    let mut at = i + 1;
    loop {
        let quote = at + memchr::memchr(b'"', raw.get(at..)?)?;
        let mut run = quote;
        while run > i + 1 && raw[run - 1] == b'\\' {
            run -= 1;
        }
        if (quote - run).is_multiple_of(2) {
            return Some(quote + 1);
        }
        at = quote + 1;
    }
}

/// The index after the value that starts at `i`.
fn value_end(raw: &[u8], mut i: usize) -> Option<usize> {
    match *raw.get(i)? {
        b'"' => string_end(raw, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match *raw.get(i)? {
                    b'"' => {
                        i = string_end(raw, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            // A number or a literal: up to the next delimiter.
            let len = raw[i..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(raw.len() - i);
            (len > 0).then_some(i + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(raw: &str) -> Option<(Option<&str>, bool)> {
        top_level(raw.as_bytes()).map(|t| (t.result_type, t.has_task))
    }

    #[test]
    fn members_are_found_wherever_they_stand() {
        assert_eq!(shape("{}"), Some((None, false)));
        assert_eq!(shape(" { } \n"), Some((None, false)));
        assert_eq!(
            shape(r#"{"content":[{"type":"text","text":"a\"}\\"}],"resultType":"complete"}"#),
            Some((Some("complete"), false))
        );
        assert_eq!(
            shape(r#"{ "resultType" : "input_required" , "inputRequests":{"a":[1,{"b":null}]}}"#),
            Some((Some("input_required"), false))
        );
        assert_eq!(
            shape(r#"{"task":{"taskId":"t"},"n":-1.5e3,"t":true}"#),
            Some((None, true))
        );
        assert_eq!(
            shape(r#"{"resultType":"other"}"#),
            Some((Some("other"), false))
        );
        // Quotes after runs of backslashes: even ends the string, odd not.
        assert_eq!(shape(r#"{"a":"\\","task":1}"#), Some((None, true)));
        assert_eq!(shape(r#"{"a":"\\\\","task":1}"#), Some((None, true)));
        assert_eq!(
            shape(r#"{"a":"\\\",\"task\":1","b":2}"#),
            Some((None, false))
        );
        assert_eq!(
            shape(r#"{"a":"\",\"resultType\":\"task\"","resultType":"complete"}"#),
            Some((Some("complete"), false))
        );
    }

    #[test]
    fn anything_unsure_is_left_to_serde() {
        for raw in [
            r#"{"result\u0054ype":"task"}"#,
            r#"{"resultType":"compl\u0065te"}"#,
            r#"{"resultType":"complete","resultType":"task"}"#,
            r#"{"task":1,"task":2}"#,
            r#"{"resultType":1}"#,
            r#"{"a":1}x"#,
            r#"{"a":1"#,
            r#"{"a":"#,
            r#"{"a":[1,2}"#,
            r#"{"a" 1}"#,
            r#"[1]"#,
            r#""x""#,
            "",
            r#"{"a":1,}"#,
            r#"{,}"#,
            r#"{"a":"\"#,
        ] {
            assert_eq!(shape(raw), None, "{raw}");
        }
    }
}

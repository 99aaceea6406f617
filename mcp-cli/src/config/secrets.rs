//! Telling credentials from references.
//!
//! Configuration names credential *sources* (`${VAR}`, `token_env`), never
//! values: a file is shared, committed and shown, a secret in it leaks. These
//! checks find a value written where a reference belongs, without ever
//! echoing it. They are heuristics tuned to refuse what is clearly a secret
//! (well-known token formats, JWTs, private keys, `Bearer <literal>`) anywhere,
//! and any literal of some length where the name says it is a secret
//! (`Authorization`, `API_KEY`, `--password=`), while leaving paths, URLs,
//! hashes and ordinary settings alone.

use crate::config::expand::{Piece, is_variable_name, pieces};

/// Prefixes of well-known token formats, with the least length of a real
/// token of each (prefix included), so that words like `sk-learn` pass.
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    ("glpat-", 20),
    ("sk-", 20),
    ("sk_live_", 16),
    ("sk_test_", 16),
    ("rk_live_", 16),
    ("xoxb-", 15),
    ("xoxp-", 15),
    ("xoxa-", 15),
    ("xoxs-", 15),
    ("xapp-", 15),
    ("npm_", 20),
    ("pypi-", 20),
    ("hf_", 20),
    ("AKIA", 20),
    ("ASIA", 20),
    ("AIza", 30),
    ("ya29.", 20),
    ("shpat_", 20),
    ("shpss_", 20),
    ("dop_v1_", 20),
    ("SG.", 30),
];

/// Authorization schemes that may stand before a reference
/// (`Bearer ${TOKEN}`).
const SCHEMES: &[&str] = &["bearer", "basic", "token", "bot", "apikey", "digest"];

/// Parts of a variable, header or flag name that make it a secret's name.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "apikey",
    "credential",
    "credentials",
    "cookie",
    "authorization",
];

/// Words that make a following `key` a secret's name (`API_KEY`).
const KEY_QUALIFIERS: &[&str] = &["api", "access", "secret", "private", "client", "auth"];

/// Name endings that say the value is where a secret is, not the secret
/// (`--token-file`, `TOKEN_ENV`).
const POINTER_WORDS: &[&str] = &["file", "path", "dir", "env", "var", "name", "url", "type"];

/// Least length of a literal refused under a secret's name.
const NAMED_SECRET_MIN: usize = 6;

/// Whether `name` (a variable, header or flag name) names a secret.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let lower = name.trim_start_matches('-').to_ascii_lowercase();
    let parts: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect();
    if parts
        .last()
        .is_some_and(|last| POINTER_WORDS.contains(last))
    {
        return false;
    }
    parts.iter().enumerate().any(|(i, part)| {
        SECRET_WORDS.contains(part)
            || (*part == "key" && i > 0 && KEY_QUALIFIERS.contains(&parts[i - 1]))
            || part.ends_with("apikey")
            || part.ends_with("token") && part.len() > 5 && !part.ends_with("tokens")
    })
}

/// `text` without its `${VAR}` references (their `:-default` kept: a default
/// is written in the file): what the file itself says.
fn literal_parts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Literal(literal) => out.push_str(literal),
            Piece::Reference { default, .. } => {
                out.push(' ');
                out.push_str(default.unwrap_or_default());
                out.push(' ');
            }
            Piece::Malformed => out.push(' '),
        }
    }
    out
}

/// Whether one word has the shape of a secret whatever its name.
fn word_is_secret(word: &str) -> bool {
    if TOKEN_PREFIXES
        .iter()
        .any(|(prefix, min)| word.starts_with(prefix) && word.len() >= *min)
    {
        return true;
    }
    // A JWT: three base64url parts, the first a JSON object (`eyJ`).
    if word.starts_with("eyJ") && word.split('.').filter(|p| !p.is_empty()).count() >= 3 {
        return true;
    }
    // A long random-looking word: upper and lower case letters and digits,
    // switching between them at 40 % of its characters or more (random
    // Base64 does at ~65 %, a CamelCase name with a year at ~20–38 %), no
    // path or URL punctuation.
    let has = |f: fn(&char) -> bool| word.chars().any(|c| f(&c));
    word.len() >= 24
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=_-.".contains(c))
        && has(char::is_ascii_lowercase)
        && has(char::is_ascii_uppercase)
        && has(char::is_ascii_digit)
        && class_switches(word) * 5 >= word.len() * 2
        && !word.contains("//")
        && word.matches('/').count() < 2
}

/// How often consecutive characters change between lower case, upper case
/// and digits.
fn class_switches(word: &str) -> usize {
    let class = |c: char| {
        if c.is_ascii_lowercase() {
            0
        } else if c.is_ascii_uppercase() {
            1
        } else if c.is_ascii_digit() {
            2
        } else {
            3
        }
    };
    word.chars()
        .map(class)
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[0] != w[1])
        .count()
}

fn is_path_like(text: &str) -> bool {
    ["/", "./", "../", "~/"].iter().any(|p| text.starts_with(p))
}

/// Whether `text` (a configuration string, `${VAR}` references allowed)
/// writes a credential as a value. `secret_name` says the name it stands
/// under (a header, variable or flag) names a secret: then any literal of
/// some length is refused, not only the known shapes.
pub(crate) fn holds_secret(text: &str, secret_name: bool) -> bool {
    let literal = literal_parts(text);
    if literal.contains("-----BEGIN") && literal.contains("PRIVATE KEY") {
        return true;
    }
    let words: Vec<&str> = literal
        .split(|c: char| c.is_whitespace() || "=:,;\"'&?@()[]{}<>|".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    if words.iter().any(|w| word_is_secret(w)) {
        return true;
    }
    // `Bearer <literal>`: a scheme followed by anything but a reference.
    if let Some(i) = words
        .iter()
        .position(|w| SCHEMES.contains(&w.to_ascii_lowercase().as_str()))
        && words
            .get(i + 1)
            .is_some_and(|w| w.len() >= NAMED_SECRET_MIN)
    {
        return true;
    }
    if secret_name {
        return words.iter().any(|w| {
            !SCHEMES.contains(&w.to_ascii_lowercase().as_str())
                && w.len() >= NAMED_SECRET_MIN
                && !is_path_like(w)
        });
    }
    false
}

/// The index of the first argument of `args` that writes a credential as a
/// value: a secret-shaped word anywhere, or a literal after a secret-named
/// flag (`--api-key=…`, `--token …`).
pub(crate) fn secret_argument(args: &[String]) -> Option<usize> {
    for (i, arg) in args.iter().enumerate() {
        if let Some((flag, value)) = arg.split_once('=')
            && flag.starts_with('-')
            && holds_secret(value, is_secret_name(flag))
        {
            return Some(i);
        }
        if holds_secret(arg, false) {
            return Some(i);
        }
        let follows_secret_flag = i > 0
            && args[i - 1].starts_with("--")
            && !args[i - 1].contains('=')
            && is_secret_name(&args[i - 1]);
        if follows_secret_flag && !arg.starts_with('-') && holds_secret(arg, true) {
            return Some(i);
        }
    }
    None
}

/// Why a value given where a variable *name* belongs (`--token-env`,
/// `token_env`, `env_inherit`) is refused. Neither echoes the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameProblem {
    /// It is more likely the secret itself than a name.
    TokenValue,
    /// It is not an environment variable name.
    NotAName,
}

impl From<NameProblem> for crate::error::AddRefusal {
    fn from(problem: NameProblem) -> Self {
        match problem {
            NameProblem::TokenValue => Self::TokenValue,
            NameProblem::NotAName => Self::NotAVariableName,
        }
    }
}

/// Checks a value given where a variable *name* belongs.
pub(crate) fn check_variable_name(value: &str) -> Result<(), NameProblem> {
    if looks_like_token(value) {
        Err(NameProblem::TokenValue)
    } else if !is_variable_name(value) {
        Err(NameProblem::NotAName)
    } else {
        Ok(())
    }
}

/// Whether `value`, given where a variable name belongs, is more likely a
/// secret.
fn looks_like_token(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if word_is_secret(value) || ["bearer ", "basic "].iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    let has = |f: fn(&char) -> bool| value.chars().any(|c| f(&c));
    let mixed =
        has(char::is_ascii_lowercase) && has(char::is_ascii_uppercase) && has(char::is_ascii_digit);
    (mixed && value.len() >= 16) || (!is_variable_name(value) && value.len() >= 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn tokens_are_told_from_variable_names() {
        for token in [
            "ghp_abcDEF1234567890abcd",
            "github_pat_11AAA",
            "Bearer abc",
            "eyJhbGciOiJIUzI1NiJ9",
            "aB3dE5gH7jK9mN1pQ3",
            "abc/def+ghi=jkl0123456",
            "AKIAIOSFODNN7EXAMPLE",
        ] {
            assert_eq!(
                check_variable_name(token),
                Err(NameProblem::TokenValue),
                "{token}"
            );
        }
        for not_a_name in ["sk-proj-abc", "1X", "A-B", ""] {
            assert_eq!(
                check_variable_name(not_a_name),
                Err(NameProblem::NotAName),
                "{not_a_name}"
            );
        }
        for name in [
            "GITHUB_TOKEN",
            "API_KEY",
            "my_token",
            "AZURE_OPENAI_API_KEY_2",
            "HF_TOKEN",
            "NPM_TOKEN",
            "ASIA_REGION",
        ] {
            assert_eq!(check_variable_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn secret_names() {
        for name in [
            "Authorization",
            "Proxy-Authorization",
            "X-API-Key",
            "api_key",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "--api-key",
            "--token",
            "--password",
            "Cookie",
            "client_secret",
            "X-Auth-Token",
            "accesstoken",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "X-Team",
            "LOG_LEVEL",
            "SORT_KEY",
            "MAX_TOKENS",
            "--token-file",
            "TOKEN_ENV",
            "PWD",
            "AUTH_MODE",
            "--key-path",
            "Content-Type",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn values_that_are_secrets() {
        let secret_anywhere = [
            "Bearer ghp_0123456789abcdefABCDEF012345",
            "ghp_0123456789abcdefABCDEF012345",
            "Bearer abcdefgh12345",
            "token=sk-live-0123456789abcdef0123",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
            "xoxb-1234-5678-abcdefgh",
            "Q2hhbmdlTWUxMjM0NTY3ODkwYWJjZGVm",
            "${NOTSET:-ghp_0123456789abcdefABCDEF012345}",
        ];
        for value in secret_anywhere {
            assert!(holds_secret(value, false), "{value}");
        }
        let fine = [
            "Bearer ${TOKEN}",
            "${GITHUB_TOKEN}",
            "info",
            "/home/user/Projects/notes-2024/db.sqlite",
            "https://api.example.com/v1/mcp",
            "0123456789abcdef0123456789abcdef01234567",
            "550e8400-e29b-41d4-a716-446655440000",
            "sk-learn",
            "--verbose",
            "$$HOME",
            "application/json",
            "MyVeryLongProjectName2024Edition",
            "--name=InternalReportingService2025",
        ];
        for value in fine {
            assert!(!holds_secret(value, false), "{value}");
        }
        // Under a secret's name, any literal of some length is refused.
        assert!(holds_secret("hunter2hunter2", true));
        assert!(holds_secret("Bearer abcdef", true));
        assert!(!holds_secret("Bearer ${T}", true));
        assert!(!holds_secret("${T}", true));
        assert!(!holds_secret("", true));
        assert!(!holds_secret("/run/secrets/api", true));
    }

    #[test]
    fn arguments_that_write_secrets() {
        assert_eq!(
            secret_argument(&strings(&[
                "server.js",
                "--api-key=sk-live-0123456789abcdef"
            ])),
            Some(1)
        );
        assert_eq!(
            secret_argument(&strings(&["--token", "abcdef123456", "--x"])),
            Some(1)
        );
        assert_eq!(
            secret_argument(&strings(&["--password=hunter2hunter2"])),
            Some(0)
        );
        assert_eq!(
            secret_argument(&strings(&["run", "ghp_0123456789abcdefABCDEF012345"])),
            Some(1)
        );
        for fine in [
            &[
                "-y",
                "@modelcontextprotocol/server-filesystem",
                "/home/u/Projects",
            ][..],
            &["--api-key=${API_KEY}"],
            &["--token", "${TOKEN}"],
            &["--token-file", "/run/secrets/token"],
            &["--key-path", "keys/server.pem"],
            &["--db", "${HOME}/notes.db", "--port=8080"],
            &["--token", "--verbose"],
        ] {
            assert_eq!(secret_argument(&strings(fine)), None, "{fine:?}");
        }
    }
}

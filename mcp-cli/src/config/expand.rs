//! `${VAR}` references in configuration strings, expanded when a server is
//! about to be started (so a file can be shared without its secrets).
//!
//! `${VAR}` is the variable's value; a variable that is not set is an error
//! naming it. `${VAR:-default}` uses `default` when `VAR` is unset or empty.
//! `$$` is a literal `$`; any other `$` is kept as it is.

use crate::error::ConfigProblem;

/// One piece of a configuration string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Text as it is (`$$` reads as a `$` of its own).
    Literal(&'a str),
    /// `${name}` or `${name:-default}`.
    Reference {
        name: &'a str,
        default: Option<&'a str>,
    },
    /// `${` without its `}`, or with no variable name.
    Malformed,
}

/// Splits `text` into literal text and references, in order.
pub(crate) fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        if at > 0 {
            out.push(Piece::Literal(&rest[..at]));
        }
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push(Piece::Literal("$"));
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                out.push(Piece::Malformed);
                return out;
            };
            let inner = &body[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            out.push(if is_variable_name(name) {
                Piece::Reference { name, default }
            } else {
                Piece::Malformed
            });
            rest = &body[end + 1..];
        } else {
            out.push(Piece::Literal("$"));
            rest = after;
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    out
}

/// Expands the references in `text`, looking variables up with `lookup`.
pub(crate) fn expand_with(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigProblem> {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Literal(literal) => out.push_str(literal),
            Piece::Malformed => return Err(ConfigProblem::BadReference),
            Piece::Reference { name, default } => match (lookup(name), default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(ConfigProblem::MissingVariable {
                        variable: name.to_owned(),
                    });
                }
            },
        }
    }
    Ok(out)
}

/// [`expand_with`] over the process environment.
pub(crate) fn expand(text: &str) -> Result<String, ConfigProblem> {
    expand_with(text, &|name| std::env::var(name).ok())
}

/// [`expand_with`] over the process environment, reading only the variables
/// `allowed` names when it is given (a project file may read only what its
/// approval listed); another name is an error naming it.
pub(crate) fn expand_only(
    text: &str,
    allowed: Option<&std::collections::BTreeSet<String>>,
) -> Result<String, ConfigProblem> {
    let Some(allowed) = allowed else {
        return expand(text);
    };
    if let Some(name) = references(text)
        .into_iter()
        .find(|name| !allowed.contains(*name))
    {
        return Err(ConfigProblem::VariableNotApproved {
            variable: name.to_owned(),
        });
    }
    expand_with(text, &|name| std::env::var(name).ok())
}

/// The names of the variables `text` refers to (`${NAME}`, `${NAME:-…}`),
/// in order; malformed references are left to [`expand_with`] to report.
pub(crate) fn references(text: &str) -> Vec<&str> {
    pieces(text)
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Reference { name, .. } => Some(name),
            _ => None,
        })
        .collect()
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: Result<&str, ConfigProblem>) {
        let lookup = |name: &str| match name {
            "HOME" => Some("/home/u".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(
            expand_with(text, &lookup),
            expect.map(str::to_owned),
            "{text}"
        );
    }

    #[test]
    fn references_defaults_and_escapes() {
        check("plain", Ok("plain"));
        check("${HOME}/x", Ok("/home/u/x"));
        check("a${HOME}b${HOME}", Ok("a/home/ub/home/u"));
        check("${NOPE:-fallback}", Ok("fallback"));
        check("${EMPTY:-fallback}", Ok("fallback"));
        check("${HOME:-fallback}", Ok("/home/u"));
        check("$$HOME costs $5", Ok("$HOME costs $5"));
        check("$HOME", Ok("$HOME"));
    }

    #[test]
    fn references_are_listed_and_only_approved_ones_are_read() {
        assert_eq!(
            references("a ${HOME} $$ {X} ${TOKEN:-d} $${NOT} ${1X} ${"),
            vec!["HOME", "TOKEN"]
        );
        let allowed: std::collections::BTreeSet<String> = ["PATH".to_owned()].into();
        assert_eq!(
            expand_only("${HOME}", Some(&allowed)),
            Err(ConfigProblem::VariableNotApproved {
                variable: "HOME".into()
            })
        );
        assert!(expand_only("${PATH}", Some(&allowed)).is_ok());
    }

    #[test]
    fn missing_variables_and_bad_references_are_errors() {
        check(
            "Bearer ${TOKEN}",
            Err(ConfigProblem::MissingVariable {
                variable: "TOKEN".into(),
            }),
        );
        check("${", Err(ConfigProblem::BadReference));
        check("${}", Err(ConfigProblem::BadReference));
        check("${1X}", Err(ConfigProblem::BadReference));
        check("${A-B}", Err(ConfigProblem::BadReference));
    }
}

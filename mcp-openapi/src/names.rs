//! Tool names: provider-safe (`[A-Za-z0-9_-]`, at most 64 characters, the
//! hub's rules), stable, and unique across every document of a service.
//!
//! 1. The base is the `operationId`, else the method and path
//!    (`get /users/{id}`).
//! 2. Each run of characters outside `[A-Za-z0-9_-]` becomes one `_`; one
//!    at either end is dropped (`repos/get` → `repos_get`,
//!    `get /users/{id}` → `get_users_id`). The document's prefix goes in
//!    front, as written.
//! 3. A name longer than 64 characters keeps its first 55 and gets `_` and
//!    8 hex digits of a hash of the operation (its prefix, method, path and
//!    `operationId`).
//! 4. Names that are still equal: the one whose name is exactly its prefix
//!    and `operationId` (nothing replaced, nothing cut) keeps it when it is
//!    the only such one; every other gets the hash suffix, 16 digits if 8
//!    do not separate them. Operations that still clash (the same
//!    operation in two documents without prefixes) fail the load with
//!    [`OpenApiError::NameCollision`].
//!
//! The hash is 64-bit FNV-1a over the operation itself, never a counter:
//! a name does not depend on the order or the number of other operations.

use std::collections::HashMap;

use crate::error::OpenApiError;

/// The longest tool name.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// 64-bit FNV-1a: small and stable across platforms and releases.
pub(crate) fn fnv1a64(data: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

fn is_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `name` is a valid tool name by the rules above.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME_LEN && name.chars().all(is_safe)
}

/// Step 2: runs of unsafe characters become one `_`, none at the ends.
pub(crate) fn sanitise(base: &str) -> String {
    let mut out = String::with_capacity(base.len());
    let mut in_run = false;
    for c in base.chars() {
        if is_safe(c) {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    let starts_unsafe = base.chars().next().is_some_and(|c| !is_safe(c));
    let ends_unsafe = base.chars().last().is_some_and(|c| !is_safe(c));
    let mut s = out.as_str();
    if starts_unsafe {
        s = s.strip_prefix('_').unwrap_or(s);
    }
    if ends_unsafe {
        s = s.strip_suffix('_').unwrap_or(s);
    }
    if s.is_empty() {
        "operation".to_owned()
    } else {
        s.to_owned()
    }
}

/// `name` cut to leave room for `_` and `digits` hex digits of `key`'s hash.
fn suffixed(name: &str, key: &str, digits: usize) -> String {
    let hash = format!("{:016x}", fnv1a64(key.as_bytes()));
    let keep = MAX_TOOL_NAME_LEN - 1 - digits;
    // Names are ASCII: byte cuts are character cuts.
    let head = name[..name.len().min(keep)].trim_end_matches('_');
    format!("{head}_{}", &hash[..digits])
}

/// One operation to name.
pub(crate) struct NameRequest<'a> {
    /// The document's prefix (may be empty).
    pub(crate) prefix: &'a str,
    /// The `operationId`, if any.
    pub(crate) operation_id: Option<&'a str>,
    /// The method, lower case.
    pub(crate) method: &'a str,
    /// The path template.
    pub(crate) path: &'a str,
}

impl NameRequest<'_> {
    fn key(&self) -> String {
        format!(
            "{}\n{} {}\n{}",
            self.prefix,
            self.method,
            self.path,
            self.operation_id.unwrap_or("")
        )
    }

    /// Steps 1 to 3, and whether the name is exactly prefix + operationId.
    fn candidate(&self) -> (String, bool) {
        let base = match self.operation_id {
            Some(id) => sanitise(id),
            None => sanitise(&format!("{} {}", self.method, self.path)),
        };
        let name = format!("{}{base}", self.prefix);
        let exact = self.operation_id.is_some_and(|id| id == base);
        if name.len() > MAX_TOOL_NAME_LEN {
            (suffixed(&name, &self.key(), 8), false)
        } else {
            (name, exact)
        }
    }
}

/// Names every operation by the rules of this module, in input order.
pub(crate) fn assign(requests: &[NameRequest<'_>]) -> Result<Vec<String>, OpenApiError> {
    let candidates: Vec<(String, bool)> = requests.iter().map(NameRequest::candidate).collect();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::with_capacity(candidates.len());
    for (i, (name, _)) in candidates.iter().enumerate() {
        groups.entry(name.as_str()).or_default().push(i);
    }
    let mut names: Vec<String> = candidates.iter().map(|(n, _)| n.clone()).collect();
    let mut suffixed_at: Vec<bool> = vec![false; names.len()];
    for members in groups.values().filter(|m| m.len() > 1) {
        let exact: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| candidates[i].1)
            .collect();
        for &i in members {
            if exact.len() == 1 && exact[0] == i {
                continue;
            }
            names[i] = suffixed(&candidates[i].0, &requests[i].key(), 8);
            suffixed_at[i] = true;
        }
    }
    // A suffixed name may meet another name; widen the suffixes involved.
    let clashing = duplicates(&names);
    if clashing.is_empty() {
        return Ok(names);
    }
    for i in clashing {
        if suffixed_at[i] {
            names[i] = suffixed(&candidates[i].0, &requests[i].key(), 16);
        }
    }
    if let Some(&i) = duplicates(&names).first() {
        return Err(OpenApiError::NameCollision {
            name: names[i].clone(),
        });
    }
    Ok(names)
}

/// Indexes of names that occur more than once.
fn duplicates(names: &[String]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if let Some(&j) = first.get(name.as_str()) {
            if !out.contains(&j) {
                out.push(j);
            }
            out.push(i);
        } else {
            first.insert(name, i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req<'a>(
        prefix: &'a str,
        id: Option<&'a str>,
        method: &'a str,
        path: &'a str,
    ) -> NameRequest<'a> {
        NameRequest {
            prefix,
            operation_id: id,
            method,
            path,
        }
    }

    #[test]
    fn sanitising() {
        assert_eq!(sanitise("repos/get"), "repos_get");
        assert_eq!(sanitise("get /users/{id}"), "get_users_id");
        assert_eq!(sanitise("a..b"), "a_b");
        assert_eq!(sanitise("__x__"), "__x__");
        assert_eq!(sanitise("ünïcode"), "n_code");
        assert_eq!(sanitise("///"), "operation");
    }

    #[test]
    fn names_are_safe_unique_and_stable() {
        let long = "actions/get-github-actions-default-workflow-permissions-organization-and-more";
        let requests = [
            req("", Some("listPets"), "get", "/pets"),
            req("", None, "get", "/pets/{id}"),
            req("", Some(long), "get", "/a"),
            req("", Some("a/b"), "get", "/b"),
            req("", Some("a_b"), "get", "/c"),
            req("", Some("a.b"), "get", "/d"),
        ];
        let names = assign(&requests).unwrap();
        assert_eq!(names[0], "listPets");
        assert_eq!(names[1], "get_pets_id");
        assert_eq!(names[2].len(), 64);
        assert!(names[2].starts_with("actions_get-github-actions"));
        // `a_b` is exact and keeps its name; the two sanitised ones get suffixes.
        assert_eq!(names[4], "a_b");
        assert!(names[3].starts_with("a_b_") && names[3].len() == 12);
        assert!(names[5].starts_with("a_b_") && names[5] != names[3]);
        for n in &names {
            assert!(is_valid_tool_name(n), "{n}");
        }
        // The same operations in another order get the same names.
        let mut reversed: Vec<_> = requests.into_iter().rev().collect();
        let again = assign(&reversed).unwrap();
        let mut sorted_again = again.clone();
        sorted_again.reverse();
        assert_eq!(sorted_again, names);
        // One more operation does not rename the others.
        reversed.push(req("", Some("other"), "get", "/e"));
        assert_eq!(assign(&reversed).unwrap()[..6], again[..]);
    }

    #[test]
    fn the_same_operation_twice_without_prefixes_is_refused() {
        let requests = [
            req("", Some("x"), "get", "/x"),
            req("", Some("x"), "get", "/x"),
        ];
        assert!(matches!(
            assign(&requests),
            Err(OpenApiError::NameCollision { .. })
        ));
        let requests = [
            req("a_", Some("x"), "get", "/x"),
            req("b_", Some("x"), "get", "/x"),
        ];
        assert_eq!(assign(&requests).unwrap(), ["a_x", "b_x"]);
    }
}

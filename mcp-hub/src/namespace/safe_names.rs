//! Provider-safe names: `[A-Za-z0-9_-]`, at most 64 characters (what LLM
//! APIs accept for function names).
//!
//! A name that is already safe is kept. Any other character becomes `_` and
//! the result is cut to 64 characters. When that makes two names equal, every
//! changed name in the clash gets a suffix `_` + 8 hex digits of the FNV-1a
//! hash of its original name (the prefix cut to fit). The suffix depends only
//! on the name itself, never on the order names were seen, so a name keeps its
//! safe form across restarts and registration changes.

use std::collections::{HashMap, HashSet};

use crate::HubError;
use crate::namespace::name::is_safe_byte;

/// Longest provider-safe name.
pub const MAX_SAFE_LEN: usize = 64;

/// 64-bit FNV-1a: small, stable across platforms and releases (unlike
/// `std`'s hasher), which is what a name suffix needs.
pub(crate) fn fnv1a64(data: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Whether `name` is provider-safe already.
pub fn is_provider_safe(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_SAFE_LEN && name.bytes().all(is_safe_byte)
}

/// `name` with unsafe characters replaced and cut to 64 characters.
fn sanitise(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii() && is_safe_byte(c as u8) {
                c
            } else {
                '_'
            }
        })
        .take(MAX_SAFE_LEN)
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

fn with_suffix(name: &str, hex_digits: usize) -> String {
    let hash = fnv1a64(name.as_bytes());
    let suffix = format!("{hash:016x}");
    let suffix = &suffix[..hex_digits];
    let base = sanitise(name);
    // `sanitise` output is ASCII, so byte slicing is on char boundaries.
    let keep = MAX_SAFE_LEN - 1 - hex_digits;
    let base = &base[..base.len().min(keep)];
    format!("{base}_{suffix}")
}

/// Maps each name to its provider-safe form; the result is unique, or an
/// error names the clash that even a 16-digit hash could not separate.
pub(crate) fn make_safe(names: &[&str]) -> Result<HashMap<String, String>, HubError> {
    let mut groups: HashMap<String, Vec<&str>> = HashMap::with_capacity(names.len());
    for name in names {
        groups.entry(sanitise(name)).or_default().push(name);
    }
    let mut out = HashMap::with_capacity(names.len());
    for (safe, members) in &groups {
        for name in members {
            let unchanged = *name == safe.as_str();
            let mapped = if members.len() == 1 || unchanged {
                safe.clone()
            } else {
                with_suffix(name, 8)
            };
            out.insert((*name).to_owned(), mapped);
        }
    }
    // A suffixed name could, in principle, equal another name; widen the
    // hash for the suffixed ones involved, then give up with a named error.
    let mut seen: HashMap<&str, &str> = HashMap::with_capacity(out.len());
    let mut clashing: HashSet<String> = HashSet::new();
    for (orig, safe) in &out {
        if let Some(other) = seen.insert(safe.as_str(), orig.as_str()) {
            clashing.insert(other.to_owned());
            clashing.insert(orig.clone());
        }
    }
    if clashing.is_empty() {
        return Ok(out);
    }
    for orig in &clashing {
        if out.get(orig).is_some_and(|s| s != orig) {
            out.insert(orig.clone(), with_suffix(orig, 16));
        }
    }
    let mut seen = HashSet::with_capacity(out.len());
    for safe in out.values() {
        if !seen.insert(safe.as_str()) {
            return Err(HubError::ProviderNameCollision { name: safe.clone() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn safe_names_are_kept_and_unsafe_ones_sanitised() {
        let map = make_safe(&["search", "notes/search", "files.read"]).unwrap();
        assert_eq!(map["search"], "search");
        assert_eq!(map["notes/search"], "notes_search");
        assert_eq!(map["files.read"], "files_read");
    }

    #[test]
    fn clashes_get_a_hash_suffix_independent_of_order() {
        let a = make_safe(&["notes/search", "notes.search", "notes_search"]).unwrap();
        let b = make_safe(&["notes_search", "notes.search", "notes/search"]).unwrap();
        assert_eq!(a, b);
        // The already-safe name keeps its form; the others get suffixes.
        assert_eq!(a["notes_search"], "notes_search");
        assert_ne!(a["notes/search"], a["notes.search"]);
        for v in a.values() {
            assert!(is_provider_safe(v), "{v}");
        }
        assert!(a["notes/search"].starts_with("notes_search_"));
        assert_eq!(a["notes/search"].len(), "notes_search_".len() + 8);
    }

    #[test]
    fn long_names_are_cut_and_clashes_after_cutting_are_separated() {
        let long_a = format!("{}a", "x".repeat(70));
        let long_b = format!("{}b", "x".repeat(70));
        let map = make_safe(&[&long_a, &long_b]).unwrap();
        assert_eq!(map[&long_a].len(), 64);
        assert_eq!(map[&long_b].len(), 64);
        assert_ne!(map[&long_a], map[&long_b]);
        // Cutting alone, without a clash, needs no suffix.
        let single = make_safe(&[&long_a]).unwrap();
        assert_eq!(single[&long_a], "x".repeat(64));
        // Non-ASCII characters become underscores.
        let map = make_safe(&["café"]).unwrap();
        assert_eq!(map["café"], "caf_");
    }
}

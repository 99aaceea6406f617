//! "Did you mean …": the names closest to a mistyped one, by edit distance.

/// Most names suggested.
const MAX_SUGGESTIONS: usize = 3;

/// Names longer than this are not compared (a server's names are its own,
/// and the distance costs their lengths multiplied).
const MAX_COMPARED_CHARS: usize = 128;

/// The edit distance between `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbouring characters each cost one
/// (optimal string alignment, `strsim`, already in the tree through clap),
/// so `ehco` is one edit from `echo`.
fn distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// The candidates closest to `given`, closest first (ties by name), at
/// most three. A candidate is close when at most a third of the longer
/// name's characters, rounded up (at least one, at most four), must
/// change; a
/// qualified candidate (`server/tool`) is also compared by its part after
/// the last `/` when `given` has none, so `serch` finds `notes/search`.
pub(crate) fn closest<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    if given.is_empty() || given.chars().count() > MAX_COMPARED_CHARS {
        return Vec::new();
    }
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|c| c.chars().count() <= MAX_COMPARED_CHARS && *c != given)
        .filter_map(|candidate| {
            let mut d = distance(given, candidate);
            let mut longer = given.chars().count().max(candidate.chars().count());
            if !given.contains('/')
                && let Some((_, local)) = candidate.rsplit_once('/')
            {
                let local_d = distance(given, local);
                if local_d < d {
                    d = local_d;
                    longer = given.chars().count().max(local.chars().count());
                }
            }
            let allowed = longer.div_ceil(3).clamp(1, 4);
            (d <= allowed).then_some((d, candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("echo", "echo"), 0);
        assert_eq!(distance("ehco", "echo"), 1);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("séarch", "search"), 1);
    }

    #[test]
    fn close_names_are_suggested_closest_first() {
        let names = ["echo", "add", "notes/search", "files/search", "refuses"];
        assert_eq!(closest("ech", names), ["echo"]);
        assert_eq!(closest("serch", names), ["files/search", "notes/search"]);
        assert_eq!(closest("refuse", names), ["refuses"]);
        assert!(closest("nope", names).is_empty());
        assert!(closest("echo", names).is_empty());
        assert!(closest("", names).is_empty());
    }
}

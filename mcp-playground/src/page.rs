//! The page: three files embedded in the binary, no build step, nothing
//! fetched from the network. `app.js` writes every server-sent string with
//! `textContent` (the CSP's Trusted Types requirement refuses HTML sinks).

/// The page's files: (path, content type, body).
const FILES: &[(&str, &str, &str)] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("page/index.html"),
    ),
    (
        "/app.js",
        "text/javascript; charset=utf-8",
        include_str!("page/app.js"),
    ),
    (
        "/app.css",
        "text/css; charset=utf-8",
        include_str!("page/app.css"),
    ),
];

/// The file at `path`: its content type and body.
pub(crate) fn file(path: &str) -> Option<(&'static str, &'static str)> {
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, kind, body)| (*kind, *body))
}

/// The page's Content-Security-Policy (sent with every response): only its
/// own script and style, images from itself or `data:` (a resource's
/// image), requests to itself, no forms, no frames around it, and Trusted
/// Types required so that no HTML sink (`innerHTML` …) can take a string.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; \
     frame-ancestors 'none'; base-uri 'none'; require-trusted-types-for 'script'; \
     trusted-types 'none'";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_uses_no_html_sink_and_loads_nothing_from_elsewhere() {
        let (_, script) = file("/app.js").unwrap();
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "setTimeout(\"",
            "http://",
            "https://",
        ] {
            assert!(!script.contains(sink), "app.js uses {sink}");
        }
        let (_, html) = file("/").unwrap();
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(
            !html.contains("<script>"),
            "no inline script: the CSP refuses it"
        );
        assert!(file("/nope").is_none());
    }
}

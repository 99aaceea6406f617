//! The page in a real browser (headless Chromium over WebDriver) against
//! the demo servers and the lab: servers and eras, a tool called from its
//! generated form, a resource read, progress arriving, a failed server's
//! error, the namespace and a review, a server's questions answered on the
//! page. Screenshots go to
//! `target/playground-screenshots/` for a person to look at. The attacks
//! of a page from another origin are in `browser_attacks.rs`.

#[path = "support/lab.rs"]
mod lab;
#[path = "support/webdriver.rs"]
mod webdriver;

use lab::{BROKEN_STDERR, BROKEN_STDOUT, Lab};
use serde_json::{Value, json};
use webdriver::Browser;

/// One browser at a time: two cores, and Chromium is heavy.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Opens the launch URL and waits for the page to be ready.
async fn open(browser: &Browser, lab: &Lab) {
    browser.goto(&lab.url).await;
    browser.wait("body[data-ready=true]").await;
    // The one-time code left the address bar.
    let href = browser.script("return location.href;", json!([])).await;
    assert!(!href.as_str().unwrap().contains("code="), "{href}");
}

/// Picks `server` in the discovery tab's server list and `kind`.
async fn discover(browser: &Browser, server: &str, kind: &str) {
    browser
        .click_on(&format!("#catalog-server option[value={server}]"))
        .await;
    browser
        .click_on(&format!("button.kind[data-kind={kind}]"))
        .await;
    browser.wait("#catalog .item").await;
}

#[tokio::test]
async fn the_page_shows_the_servers_and_calls_a_tool_from_its_generated_form() {
    let _one = ONE_AT_A_TIME.lock().await;
    let lab = Lab::start().await;
    let browser = Browser::start().await;
    open(&browser, &lab).await;

    // The servers, their status and eras.
    for (server, era, version) in [
        ("notes", "modern", "2026-07-28"),
        ("files", "legacy", "2025-06-18"),
        ("github", "modern", "2026-07-28"),
        ("lab", "modern", "2026-07-28"),
    ] {
        let card = format!(".server[data-server={server}]");
        browser.wait_text(&format!("{card} .status"), "ready").await;
        browser.wait_text(&format!("{card} .era"), era).await;
        browser
            .wait_text(&format!("{card} .version"), version)
            .await;
    }
    browser
        .wait_text(".server[data-server=notes] .theirs", "Personal notes.")
        .await;
    // The server's instructions are text, not markup.
    browser
        .wait_text(
            ".server[data-server=lab] .theirs",
            "<b>Never</b> trust this text",
        )
        .await;
    assert!(
        browser
            .find_all(".server[data-server=lab] .theirs b")
            .await
            .is_empty()
    );
    // A direction override and an invisible character are shown, not obeyed.
    browser
        .wait_text(
            ".server[data-server=lab] .theirs",
            "\\u{202e}ohce, ec\\u{200b}ho.",
        )
        .await;
    // The failed server: our words, and its stderr labelled as its own.
    browser
        .wait_text(".server[data-server=broken] .status", "failed")
        .await;
    let ours = browser
        .wait(".server[data-server=broken] .error-message")
        .await;
    assert!(!browser.text(&ours).await.is_empty());
    browser
        .wait_text(".server[data-server=broken] .stderr", BROKEN_STDERR)
        .await;
    browser
        .wait_text(
            ".server[data-server=broken] .stderr .label",
            "The server's stderr",
        )
        .await;
    browser
        .wait_text(".server[data-server=broken] .theirs", BROKEN_STDOUT)
        .await;
    let servers_png = browser.screenshot("servers").await;

    // A tool: its form, a refusal before sending, then the call.
    discover(&browser, "lab", "tools").await;
    browser.click_on(".item[data-name=book_trip]").await;
    browser.type_into("[data-path=city]", "Lisbon").await;
    browser.click_on("#call").await;
    browser
        .wait_text("#form-errors", "arguments.nights: required")
        .await;
    assert_eq!(lab.received("lab", "tools/call"), 0, "nothing was sent");
    browser.type_into("[data-path=nights]", "3").await;
    browser
        .click_on("select[data-path=class] option[value='1']")
        .await;
    browser.click_on("button[data-add=tags]").await;
    browser.type_into("[data-path='tags[0]']", "sea").await;
    browser
        .type_into("[data-path='traveller.name']", "Ana")
        .await;
    browser.click_on("#call").await;
    browser
        .wait_text(
            "#result .block-text",
            "Booked Lisbon for 3 nights in business",
        )
        .await;
    let tool_png = browser.screenshot("tool-call").await;
    let calls = lab.recorders[3].1.with_method("tools/call");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0]["params"]["arguments"],
        json!({"city": "Lisbon", "nights": 3, "class": "business", "tags": ["sea"],
               "traveller": {"name": "Ana"}})
    );

    // A server's enum value with a direction override: its option shows it
    // escaped, and so does the raw JSON made from the form, as a JSON
    // escape that still sends the value itself.
    browser
        .wait_text(
            "select[data-path=class] option[value='2']",
            "\\u{202e}yrxul",
        )
        .await;
    browser
        .click_on("select[data-path=class] option[value='2']")
        .await;
    browser.click_on("#raw-toggle").await;
    let raw = browser
        .script(
            "return document.getElementById('raw-json').value;",
            json!([]),
        )
        .await;
    let raw = raw.as_str().expect("the raw JSON");
    assert!(raw.contains(r#""class": "\u202eyrxul""#), "{raw}");
    assert!(!raw.contains('\u{202e}'), "{raw}");
    browser.click_on("#call").await;
    browser
        .wait_text("#result .block-text", "3 nights in \\u{202e}yrxul")
        .await;
    let calls = lab.recorders[3].1.with_method("tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1]["params"]["arguments"]["class"], "\u{202e}yrxul");
    let trip = ("lab".to_owned(), "book_trip".to_owned());
    assert_eq!(lab.approvals.asked(), [trip.clone(), trip]);

    // The next page; a tool error is marked and its text stays text.
    browser.click_on("#next-page").await;
    browser.click_on(".item[data-name=fail]").await;
    browser.click_on("#call").await;
    browser
        .wait_text("#result .is-error .flag", "reported an error")
        .await;
    browser
        .wait_text("#result .block-text", "<img src=x onerror=alert(1)>")
        .await;
    assert!(browser.find_all("#result img").await.is_empty());

    // The raw-JSON fallback, and structured content formatted.
    browser.click_on(".item[data-name=stats]").await;
    browser.click_on("#raw-toggle").await;
    browser.click_on("#call").await;
    browser
        .wait_text("#result .structured", "\"count\": 42")
        .await;
    assert_eq!(lab.received("lab", "tools/call"), 4);

    browser.quit().await;
    lab.stop().await;
    for png in [servers_png, tool_png] {
        assert!(std::fs::metadata(&png).unwrap().len() > 10_000, "{png:?}");
    }
}

#[tokio::test]
async fn progress_arrives_while_a_slow_tool_runs_and_resources_are_read() {
    let _one = ONE_AT_A_TIME.lock().await;
    let lab = Lab::start().await;
    let browser = Browser::start().await;
    open(&browser, &lab).await;
    browser.wait_text("#live", "live").await;

    discover(&browser, "lab", "tools").await;
    browser.click_on(".item[data-name=slow]").await;
    browser.click_on("#call").await;
    // The call's own progress bar, while it runs, and the event list.
    browser.wait(".call-progress progress").await;
    browser
        .wait_text(".event[data-kind=progress]", "lab slow")
        .await;
    browser.screenshot("progress").await;
    browser
        .wait_text("#result .block-text", "slept 1500 ms")
        .await;

    // A text resource: shown as text.
    discover(&browser, "lab", "resources").await;
    browser.click_on(".item[data-name='lab://readme']").await;
    browser.click_on("#read").await;
    browser
        .wait_text("#result pre.text", "<script>alert(1)</script>")
        .await;
    assert!(browser.find_all("#result script").await.is_empty());
    // Followed: its contents arrive as an event.
    browser.click_on("#follow").await;
    browser
        .wait_text(".event[data-kind=resourceUpdated]", "Hello from the lab.")
        .await;
    // An image: rendered; a blob: offered for download with its size.
    browser.click_on(".item[data-name='lab://logo.png']").await;
    browser.click_on("#read").await;
    browser.wait("#result img").await;
    let width = browser
        .script(
            "const i = document.querySelector('#result img'); return i.complete ? i.naturalWidth : -1;",
            json!([]),
        )
        .await;
    assert_eq!(width, json!(16));
    browser.screenshot("resource").await;
    browser.click_on("#next-page").await;
    browser.click_on(".item[data-name='lab://data.bin']").await;
    browser.click_on("#read").await;
    browser.wait_text("#result a.download", "8 bytes").await;
    // Three reads on a click, one by the subscription.
    assert_eq!(lab.received("lab", "resources/read"), 4);

    // A prompt with its argument.
    discover(&browser, "lab", "prompts").await;
    browser.click_on(".item[data-name=greet]").await;
    browser.type_into("[data-path=name]", "Ana").await;
    browser.click_on("#get-prompt").await;
    browser.wait_text("#result", "Say hello to Ana.").await;

    // A log message the server sends arrives as an event.
    discover(&browser, "lab", "tools").await;
    browser.click_on("#next-page").await;
    browser.click_on("#next-page").await;
    browser.click_on(".item[data-name=shout]").await;
    browser.click_on("#call").await;
    browser
        .wait_text(".event[data-kind=log]", "disk almost full")
        .await;
    browser.quit().await;
    lab.stop().await;
}

#[tokio::test]
async fn the_namespace_and_a_review_of_a_changed_tool_listing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let lab = Lab::start().await;
    let browser = Browser::start().await;
    open(&browser, &lab).await;

    browser.click_on("button.tab[data-tab=namespace]").await;
    browser
        .wait_text("#collisions li[data-tool=search]", "notes as notes/search")
        .await;
    browser
        .wait_text("#hidden li[data-name='github/open_pr']", "allow-list")
        .await;
    browser
        .wait_text("#namespace-tools tr[data-name=book_trip]", "lab/book_trip")
        .await;
    browser.screenshot("namespace").await;

    // The lab's `change` tool makes a new tool appear: held for review.
    browser.click_on("button.tab[data-tab=catalog]").await;
    discover(&browser, "lab", "tools").await;
    browser.click_on("#next-page").await;
    browser.click_on("#next-page").await;
    browser.click_on(".item[data-name=change]").await;
    browser.click_on("#call").await;
    browser
        .wait_text(".event[data-kind=toolsPending]", "waits for review")
        .await;
    browser.wait_text("#review-count", "(1)").await;
    browser.click_on("button.tab[data-tab=reviews]").await;
    browser
        .wait_text(".review[data-server=lab] .added", "added fresh")
        .await;
    browser.screenshot("review").await;
    browser
        .click_on(".review[data-server=lab] button.approve")
        .await;
    browser
        .wait_text(".event[data-kind=toolsAdopted]", "adopted")
        .await;
    browser.click_on("button.tab[data-tab=namespace]").await;
    browser.wait("#namespace-tools tr[data-name=fresh]").await;
    let names: Value = browser
        .script(
            "return [...document.querySelectorAll('#namespace-tools tr[data-name]')].map(r => r.dataset.name);",
            json!([]),
        )
        .await;
    assert!(names.as_array().unwrap().contains(&json!("fresh")));
    // Drawn once, however many refreshes raced.
    assert_eq!(browser.find_all("#namespace-tools").await.len(), 1);
    assert_eq!(
        names.as_array().unwrap().len(),
        names
            .as_array()
            .unwrap()
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
    );
    browser.quit().await;
    lab.stop().await;
}

/// A tool called from the page asks the person: its form appears above the
/// panels (the server's words shown, not obeyed), is filled in and sent,
/// and the call's result shows what the server was answered; a page to
/// open is shown with its host and no link.
#[tokio::test]
async fn a_servers_question_is_answered_on_the_page() {
    let _one = ONE_AT_A_TIME.lock().await;
    let lab = Lab::start().await;
    let browser = Browser::start().await;
    open(&browser, &lab).await;
    discover(&browser, "asker", "tools").await;
    browser.click_on(".item[data-name=sign_up]").await;
    browser.click_on("#call").await;
    let card = ".question[data-kind=form]";
    browser
        .wait_text(&format!("{card} .theirs"), "Who are you? \\u{202e}ohce")
        .await;
    browser
        .wait_text(&format!("{card} .field"), "Your name (name) *")
        .await;
    // The titled choice shows its titles (escaped), the default is set.
    browser
        .wait_text(
            &format!("{card} select[data-field=plan] option[value=pro]"),
            "Pro \\u{202e}",
        )
        .await;
    // A plain default is filled in; one that would reorder the field's
    // text is shown escaped instead.
    let filled = browser
        .script(
            "return [...document.querySelectorAll('.question[data-kind=form] input[type=text]')]\
             .map((i) => [i.dataset.field, i.value]);",
            json!([]),
        )
        .await;
    assert_eq!(
        filled,
        json!([["city", "Oslo"], ["code", ""], ["name", ""]]),
        "{filled}"
    );
    browser
        .wait_text(
            &format!("{card} .hidden-default"),
            "characters that hide or reorder text: ab\\u{202e}cd",
        )
        .await;
    // It stays in view wherever the page is scrolled (the call that asked
    // is further down).
    let top = browser
        .script(
            "window.scrollTo(0, document.body.scrollHeight); \
             const r = document.getElementById('questions-panel').getBoundingClientRect(); \
             return [window.scrollY > 0, r.top >= 0 && r.top < window.innerHeight];",
            json!([]),
        )
        .await;
    assert_eq!(top, json!([true, true]), "the panel scrolled out of view");
    // Required: refused on the page, nothing sent.
    browser.click_on(&format!("{card} button.send")).await;
    browser
        .wait_text(&format!("{card} .errors"), "name: required")
        .await;
    assert!(lab.questions_waiting() == 1);
    browser
        .type_into(&format!("{card} input[data-field=name]"), "Ada")
        .await;
    browser
        .click_on(&format!("{card} select[data-field=plan] option[value=pro]"))
        .await;
    let form_png = browser.screenshot("question-form").await;
    browser.click_on(&format!("{card} button.send")).await;
    browser.wait_text("#result", "Ada").await;
    let answered = lab.recorders[4].1.with_method("tools/call");
    let last = answered.last().unwrap();
    assert_eq!(
        last["params"]["inputResponses"]["user"],
        json!({"action": "accept",
               "content": {"name": "Ada", "plan": "pro", "newsletter": false, "city": "Oslo"}}),
        "{last}"
    );
    // Answered: the panel is hidden again.
    let hidden = browser
        .script(
            "return document.getElementById('questions-panel').hidden;",
            json!([]),
        )
        .await;
    assert_eq!(hidden, json!(true));

    // A page to open: the URL and its host as text, never a link.
    browser.click_on(".item[data-name=open_page]").await;
    browser.click_on("#call").await;
    let card = ".question[data-kind=url]";
    browser
        .wait_text(&format!("{card} .host"), "auth.example.com")
        .await;
    browser
        .wait_text(
            &format!("{card} .url"),
            "https://auth.example.com/login?step=1",
        )
        .await;
    assert!(browser.find_all(&format!("{card} a")).await.is_empty());
    let url_png = browser.screenshot("question-url").await;
    browser.click_on(&format!("{card} button.decline")).await;
    browser.wait_text("#result", "decline").await;

    // A call the server refuses until pages are opened (-32042): the
    // pages come with the error, as text.
    browser.click_on(".item[data-name=connect]").await;
    browser.click_on("#call").await;
    browser
        .wait_text("#result .pages .host", "auth.example.com")
        .await;
    browser
        .wait_text("#result .pages .problem", "A page it listed is not shown")
        .await;
    // A Punycode host is shown with a warning of look-alike letters.
    browser
        .wait_text(
            "#result .pages .punycode",
            "may show as letters of another script",
        )
        .await;
    assert!(browser.find_all("#result a").await.is_empty());
    browser.quit().await;
    lab.stop().await;
    for png in [form_png, url_png] {
        assert!(std::fs::metadata(&png).unwrap().len() > 1000, "{png:?}");
    }
}

//! Namespace builds: every policy, the authority intersection, conflicts,
//! helpers and provider-safe names, on snapshots built in memory.

use std::sync::Arc;

use mcp_types::{JsonSchemaDoc, Tool};

use super::*;
use crate::governance::authority::{Authority, Principal, ServerAuthority};

fn snapshot(server: &str, generation: u64, tools: &[&str]) -> Arc<ToolSnapshot> {
    let tools: Vec<Tool> = tools
        .iter()
        .map(|n| Tool::new(*n, JsonSchemaDoc::empty_object()))
        .collect();
    Arc::new(ToolSnapshot::new(
        ServerName::new(server).unwrap(),
        generation,
        &tools,
    ))
}

struct Fixture {
    names: Vec<ServerName>,
    snapshots: Vec<Arc<ToolSnapshot>>,
    helpers: Vec<Vec<Helper>>,
    authority: Authority,
    principal: Principal,
}

impl Fixture {
    fn classic() -> Self {
        Self::of(&[
            ("notes", &["search", "create"][..]),
            ("files", &["read", "search"][..]),
            ("github", &["list_issues", "open_pr", "search"][..]),
        ])
    }

    fn of(servers: &[(&str, &[&str])]) -> Self {
        Self {
            names: servers
                .iter()
                .map(|(n, _)| ServerName::new(n).unwrap())
                .collect(),
            snapshots: servers
                .iter()
                .enumerate()
                .map(|(i, (n, t))| snapshot(n, i as u64 + 1, t))
                .collect(),
            helpers: vec![Vec::new(); servers.len()],
            authority: Authority::unrestricted(),
            principal: Principal::new("me"),
        }
    }

    fn build_bounded(
        &self,
        policy: CollisionPolicy,
        separator: &Separator,
        safe: bool,
        max_exposed: usize,
    ) -> Result<Namespace, HubError> {
        let views: Vec<ServerView<'_>> = self
            .names
            .iter()
            .zip(&self.snapshots)
            .zip(&self.helpers)
            .map(|((name, snapshot), helpers)| ServerView {
                name,
                snapshot: Some(snapshot),
                helpers: helpers.clone(),
                gate: Gate::new(&self.authority, &self.principal, name.as_str()),
            })
            .collect();
        Namespace::build(
            &views,
            &BuildSettings {
                policy,
                separator,
                provider_safe: safe,
                max_exposed,
            },
            1,
        )
    }

    fn build_with(
        &self,
        policy: CollisionPolicy,
        separator: &Separator,
        safe: bool,
    ) -> Result<Namespace, HubError> {
        self.build_bounded(policy, separator, safe, 1000)
    }

    fn build(&self, policy: CollisionPolicy) -> Namespace {
        self.build_with(policy, &Separator::default(), false)
            .unwrap()
    }
}

fn names(ns: &Namespace) -> Vec<&str> {
    ns.tools().iter().map(ExposedTool::name).collect()
}

fn routes_to(ns: &Namespace, name: &str, server: &str, tool: &str) {
    let route = ns.route(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(route.server.as_str(), server, "{name}");
    assert_eq!(route.target, RouteTarget::Tool(tool.to_owned()), "{name}");
}

#[test]
fn prefix_exposes_every_tool_qualified_and_unique_ones_bare() {
    let ns = Fixture::classic().build(CollisionPolicy::Prefix);
    for (server, tool) in [
        ("notes", "search"),
        ("notes", "create"),
        ("files", "read"),
        ("files", "search"),
        ("github", "list_issues"),
        ("github", "open_pr"),
        ("github", "search"),
    ] {
        routes_to(&ns, &format!("{server}/{tool}"), server, tool);
    }
    for (bare, server) in [
        ("create", "notes"),
        ("read", "files"),
        ("list_issues", "github"),
        ("open_pr", "github"),
    ] {
        routes_to(&ns, bare, server, bare);
    }
    // 7 tools qualified (the issue counts 8, but 2 + 2 + 3 is 7) and the 4
    // unique ones bare.
    assert_eq!(ns.names().count(), 11);
    match ns.route("search") {
        Err(HubError::Ambiguous { name, candidates }) => {
            assert_eq!(name, "search");
            assert_eq!(
                candidates,
                ["notes/search", "files/search", "github/search"]
            );
        }
        other => panic!("{other:?}"),
    }
    let err = ns.route("search").unwrap_err().to_string();
    assert!(
        err.contains("notes/search, files/search, github/search"),
        "{err}"
    );
    assert!(matches!(
        ns.route("nope"),
        Err(HubError::UnknownTool { .. })
    ));
    // The model sees each tool once, by its shortest exposed name.
    assert_eq!(
        names(&ns),
        [
            "notes/search",
            "create",
            "read",
            "files/search",
            "list_issues",
            "open_pr",
            "github/search"
        ]
    );
}

#[test]
fn first_keeps_the_bare_name_for_the_first_registration() {
    let ns = Fixture::classic().build(CollisionPolicy::First);
    assert_eq!(
        names(&ns),
        [
            "search",
            "create",
            "read",
            "files/search",
            "list_issues",
            "open_pr",
            "github/search"
        ]
    );
    // Every tool is reachable qualified too: 7 names, and the 5 bare ones
    // have their qualified name as an alias.
    assert_eq!(ns.names().count(), 12);
    routes_to(&ns, "search", "notes", "search");
    routes_to(&ns, "notes/search", "notes", "search");
    routes_to(&ns, "files/search", "files", "search");
    routes_to(&ns, "github/search", "github", "search");
    routes_to(&ns, "files/read", "files", "read");
    let shadowed: Vec<_> = ns
        .notes()
        .iter()
        .filter_map(|n| match n {
            NamespaceNote::Shadowed {
                server,
                kept_by,
                tool,
            } => Some((server.as_str(), tool.as_str(), kept_by.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        shadowed,
        [("files", "search", "notes"), ("github", "search", "notes")]
    );
}

#[test]
fn reject_refuses_later_servers_naming_the_colliding_tool() {
    let ns = Fixture::classic().build(CollisionPolicy::Reject);
    assert_eq!(names(&ns), ["search", "create"]);
    routes_to(&ns, "notes/create", "notes", "create");
    assert!(ns.route("files/read").is_err());
    for server in ["files", "github"] {
        match ns.refusal(server) {
            Some(HubError::Collision {
                server: s,
                tool,
                existing,
            }) => {
                assert_eq!(s.as_str(), server);
                assert_eq!(tool, "search");
                assert_eq!(existing.as_str(), "notes");
            }
            other => panic!("{server}: {other:?}"),
        }
        let text = ns.refusal(server).unwrap().to_string();
        assert!(text.contains(server) && text.contains("`search`") && text.contains("notes"));
    }
    assert!(ns.refusal("notes").is_none());
    // A refused server's tools do not block later servers.
    let ns = Fixture::of(&[("a", &["x"][..]), ("b", &["x", "y"][..]), ("c", &["y"][..])])
        .build(CollisionPolicy::Reject);
    assert_eq!(names(&ns), ["x", "y"]);
    routes_to(&ns, "y", "c", "y");
}

#[test]
fn outcomes_do_not_depend_on_discovery_order() {
    // Generations record when each server was listed; reversing them (as if
    // github had finished first) changes nothing.
    let mut late = Fixture::classic();
    let n = late.snapshots.len() as u64;
    for (i, s) in late.snapshots.iter_mut().enumerate() {
        let tools: Vec<String> = s.tools().iter().map(|t| t.name.clone()).collect();
        let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
        *s = snapshot(s.server().as_str(), n - i as u64, &tools);
    }
    for policy in [
        CollisionPolicy::Prefix,
        CollisionPolicy::First,
        CollisionPolicy::Reject,
    ] {
        let a = Fixture::classic().build(policy);
        let b = late.build(policy);
        assert_eq!(names(&a), names(&b), "{policy:?}");
        assert_eq!(a.notes(), b.notes(), "{policy:?}");
    }
}

#[test]
fn the_published_surface_is_the_intersection_with_the_authority() {
    let mut f = Fixture::classic();
    f.authority = Authority::named()
        .with_server("notes", ServerAuthority::default().tools(["create"]))
        .with_server(
            "github",
            ServerAuthority::default().tools(Vec::<String>::new()),
        )
        .with_server("files", ServerAuthority::default());
    let ns = f.build(CollisionPolicy::Prefix);
    // notes/search is not published, so `search` is unique to files now.
    assert_eq!(names(&ns), ["create", "read", "search"]);
    routes_to(&ns, "search", "files", "search");
    assert!(ns.route("notes/search").is_err());
    assert!(ns.route("github/open_pr").is_err());
}

#[test]
fn a_default_deny_principal_sees_nothing_untagged() {
    let mut f = Fixture::classic();
    f.authority = Authority::named()
        .with_server("github", ServerAuthority::default().permission("gh"))
        .with_server("notes", ServerAuthority::default())
        .with_server("files", ServerAuthority::default());
    f.principal = Principal::default_deny("reader").grant("gh");
    let ns = f.build(CollisionPolicy::Prefix);
    assert_eq!(names(&ns), ["list_issues", "open_pr", "search"]);
    f.principal = Principal::default_deny("nobody");
    assert!(f.build(CollisionPolicy::Prefix).tools().is_empty());
}

const POLICIES: [CollisionPolicy; 3] = [
    CollisionPolicy::Prefix,
    CollisionPolicy::Reject,
    CollisionPolicy::First,
];

fn is_reserved_note(ns: &Namespace, server: &str, tool: &str, owner: &str) -> bool {
    ns.notes().iter().any(|n| {
        matches!(n, NamespaceNote::Reserved { server: s, tool: t, owner: o }
            if s.as_str() == server && t == tool && o.as_str() == owner)
    })
}

#[test]
fn a_qualified_name_belongs_to_its_server_under_every_policy() {
    // `x` offers a tool literally named `files/search`, registered before
    // and after `files`.
    for servers in [
        [("files", &["search"][..]), ("x", &["files/search"][..])],
        [("x", &["files/search"][..]), ("files", &["search"][..])],
    ] {
        for policy in POLICIES {
            let ns = Fixture::of(&servers).build(policy);
            let at = format!("{policy:?}, {:?} first", servers[0].0);
            // `files/search` is files's, bare `search` too (unique).
            routes_to(&ns, "files/search", "files", "search");
            routes_to(&ns, "search", "files", "search");
            // x's tool is reachable only under x's own qualified name.
            routes_to(&ns, "x/files/search", "x", "files/search");
            assert!(is_reserved_note(&ns, "x", "files/search", "files"), "{at}");
            assert!(
                !ns.notes()
                    .iter()
                    .any(|n| matches!(n, NamespaceNote::NameConflict { .. })),
                "{at}: {:?}",
                ns.notes()
            );
            assert!(
                ns.refusal("x").is_none() && ns.refusal("files").is_none(),
                "{at}"
            );
            assert_eq!(
                ns.tools()
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .len(),
                2,
                "{at}"
            );
        }
    }
}

#[test]
fn a_name_in_a_registered_server_space_is_never_bare() {
    for policy in POLICIES {
        // `notes` does not offer `search` (now): the name is still not x's,
        // so a later listing of notes cannot take it over from x.
        let ns =
            Fixture::of(&[("notes", &["create"][..]), ("x", &["notes/search"][..])]).build(policy);
        assert!(matches!(
            ns.route("notes/search"),
            Err(HubError::UnknownTool { .. })
        ));
        routes_to(&ns, "x/notes/search", "x", "notes/search");
        // The same holds for a server's own tool named in its own space.
        let ns = Fixture::of(&[("notes", &["search", "notes/search"][..])]).build(policy);
        routes_to(&ns, "notes/search", "notes", "search");
        routes_to(&ns, "notes/notes/search", "notes", "notes/search");
        assert!(is_reserved_note(&ns, "notes", "notes/search", "notes"));
        // A name whose prefix is no registered server stays bare.
        let ns = Fixture::of(&[("notes", &["misc/search"][..])]).build(policy);
        routes_to(&ns, "misc/search", "notes", "misc/search");
        routes_to(&ns, "notes/misc/search", "notes", "misc/search");
    }
}

#[test]
fn a_name_two_qualified_routes_claim_is_exposed_by_neither() {
    // A custom separator can make two qualified names equal.
    let f = Fixture::of(&[("a", &["b__c"][..]), ("a__b", &["c"][..])]);
    let ns = f
        .build_with(
            CollisionPolicy::Prefix,
            &Separator::new("__").unwrap(),
            false,
        )
        .unwrap();
    assert!(ns.route("a__b__c").is_err());
    routes_to(&ns, "b__c", "a", "b__c");
    routes_to(&ns, "c", "a__b", "c");
    assert!(ns.notes().iter().any(|n| matches!(
        n,
        NamespaceNote::NameConflict { name, servers } if name == "a__b__c" && servers.len() == 2
    )));
    // Under `__`, a tool named `a__b__x` is in the space of `a` (and of
    // `a__b`): never bare.
    let f = Fixture::of(&[
        ("a", &["y"][..]),
        ("a__b", &["c"][..]),
        ("z", &["a__b__x"][..]),
    ]);
    let ns = f
        .build_with(
            CollisionPolicy::First,
            &Separator::new("__").unwrap(),
            false,
        )
        .unwrap();
    assert!(ns.route("a__b__x").is_err());
    routes_to(&ns, "z__a__b__x", "z", "a__b__x");
}

#[test]
fn helpers_follow_their_server_and_never_take_a_real_tool_name() {
    let mut f = Fixture::of(&[
        ("docs", &["search", "read_resource"][..]),
        ("other", &["docs/list_resources"][..]),
    ]);
    f.helpers = vec![
        vec![Helper::ListResources, Helper::ReadResource],
        Vec::new(),
    ];
    let ns = f.build(CollisionPolicy::Prefix);
    assert_eq!(
        names(&ns),
        [
            "search",
            "read_resource",
            "docs/list_resources",
            "other/docs/list_resources"
        ]
    );
    // `other`'s tool is literally named like docs's helper: the name is in
    // docs's space, so the helper keeps it.
    let helper = ns.resolve("docs/list_resources").unwrap();
    assert!(helper.is_helper());
    assert_eq!(
        helper.route().target,
        RouteTarget::Helper(Helper::ListResources)
    );
    // docs's own tool `read_resource` is `docs/read_resource` qualified: the
    // real tool keeps the name and the helper is left out, with a note.
    routes_to(&ns, "docs/read_resource", "docs", "read_resource");
    assert!(ns.notes().contains(&NamespaceNote::HelperSkipped {
        server: ServerName::new("docs").unwrap(),
        helper: Helper::ReadResource,
    }));
}

#[test]
fn provider_safe_names_route_and_stay_stable() {
    let f = Fixture::of(&[
        ("notes", &["search", "notes_search"][..]),
        ("files", &["search", "read.file"][..]),
    ]);
    let ns = f
        .build_with(CollisionPolicy::Prefix, &Separator::default(), true)
        .unwrap();
    assert!(ns.is_provider_safe());
    for name in ns.names() {
        assert!(crate::is_provider_safe(name), "{name}");
    }
    routes_to(&ns, "read_file", "files", "read.file");
    routes_to(&ns, "files_search", "files", "search");
    // `notes/search` sanitises to `notes_search`, which is the other tool's
    // own (safe) name: the sanitised one gets the hash suffix, every time.
    routes_to(&ns, "notes_search", "notes", "notes_search");
    let suffixed: Vec<&str> = ns
        .names()
        .filter(|n| n.starts_with("notes_search_"))
        .collect();
    assert_eq!(suffixed.len(), 1, "{suffixed:?}");
    routes_to(&ns, suffixed[0], "notes", "search");
    let again = f
        .build_with(CollisionPolicy::Prefix, &Separator::default(), true)
        .unwrap();
    routes_to(&again, suffixed[0], "notes", "search");
    // The ambiguous bare name keeps listing (safe) candidates.
    match ns.route("search") {
        Err(HubError::Ambiguous { candidates, .. }) => {
            assert!(candidates.iter().all(|c| crate::is_provider_safe(c)));
            assert!(candidates.contains(&"files_search".to_owned()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_namespace_is_bounded() {
    let err = Fixture::classic()
        .build_bounded(CollisionPolicy::Prefix, &Separator::default(), false, 5)
        .unwrap_err();
    assert!(matches!(err, HubError::NamespaceTooLarge { limit: 5 }));
}

#[test]
fn every_exposed_name_and_alias_resolves_to_its_own_entry_in_a_large_namespace() {
    let tools: Vec<String> = (0..40).map(|i| format!("tool_{i:02}")).collect();
    let shared: Vec<&str> = tools.iter().map(String::as_str).collect();
    let own: Vec<Vec<String>> = (0..30).map(|s| vec![format!("only_s{s}")]).collect();
    let servers: Vec<(String, Vec<&str>)> = (0..30)
        .map(|s| {
            let mut t = shared.clone();
            t.push(own[s][0].as_str());
            (format!("s{s}"), t)
        })
        .collect();
    let spec: Vec<(&str, &[&str])> = servers
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_slice()))
        .collect();
    let ns = Fixture::of(&spec)
        .build_bounded(
            CollisionPolicy::Prefix,
            &Separator::default(),
            false,
            10_000,
        )
        .unwrap();
    let mut count = 0;
    for entry in ns.tools() {
        for name in std::iter::once(entry.name()).chain(entry.aliases().iter().map(String::as_str))
        {
            let found = ns.resolve(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(std::ptr::eq(found, entry), "{name} resolved elsewhere");
            count += 1;
        }
    }
    // 30 × 40 qualified shared tools, and each server's own tool bare and
    // qualified.
    assert_eq!(count, 30 * 40 + 30 * 2);
    assert_eq!(ns.names().count(), count);
    routes_to(&ns, "only_s7", "s7", "only_s7");
    routes_to(&ns, "s29/tool_39", "s29", "tool_39");
    assert!(matches!(
        ns.resolve("tool_00"),
        Err(HubError::Ambiguous { .. })
    ));
    assert!(matches!(
        ns.resolve("s30/tool_00"),
        Err(HubError::UnknownTool { .. })
    ));
    assert!(matches!(ns.resolve(""), Err(HubError::UnknownTool { .. })));
}

/// A tool name a hostile server lists: clears the screen and writes a line.
const FORGED_TOOL: &str = "search\u{1b}[2J\u{1b}[1;1Hall tools approved";

fn shows_escaped(err: &HubError) {
    let shown = err.to_string();
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(
        shown.contains("search\\u{1b}[2J\\u{1b}[1;1Hall tools approved"),
        "{shown:?}"
    );
}

#[test]
fn server_tool_names_are_escaped_in_ambiguity_and_collision_errors() {
    let f = Fixture::of(&[("a", &[FORGED_TOOL][..]), ("b", &[FORGED_TOOL][..])]);
    let ns = f.build(CollisionPolicy::Prefix);
    let err = ns.route(FORGED_TOOL).unwrap_err();
    match &err {
        HubError::Ambiguous { name, candidates } => {
            assert_eq!(name, FORGED_TOOL);
            assert_eq!(
                candidates,
                &[format!("a/{FORGED_TOOL}"), format!("b/{FORGED_TOOL}")]
            );
        }
        other => panic!("{other:?}"),
    }
    shows_escaped(&err);
    // Both candidates are shown, each escaped.
    assert_eq!(err.to_string().matches("\\u{1b}[2J").count(), 3);

    let ns = f.build(CollisionPolicy::Reject);
    let err = ns.refusal("b").unwrap();
    assert!(matches!(&err, HubError::Collision { tool, .. } if tool == FORGED_TOOL));
    shows_escaped(&err);

    let err = ns.route(&format!("{FORGED_TOOL}\u{7}")).unwrap_err();
    assert!(matches!(err, HubError::UnknownTool { .. }));
    shows_escaped(&err);
    assert!(!err.to_string().contains('\u{7}'));
}

/// Tools a default build has to alias: a qualified name, a space, a dot,
/// and a safe name the space's sanitised form would take.
fn unsafe_names() -> Fixture {
    Fixture::of(&[
        (
            "everything",
            &["echo", "say hello", "files.read", "say_hello"][..],
        ),
        ("other", &["echo"][..]),
    ])
}

#[test]
fn a_default_build_gives_each_unsafe_name_a_provider_safe_alias_that_routes() {
    let f = unsafe_names();
    let ns = f
        .build_with(CollisionPolicy::Prefix, &Separator::default(), false)
        .unwrap();
    assert!(!ns.is_provider_safe());
    // The exposed names stay as they are.
    assert_eq!(
        names(&ns),
        [
            "everything/echo",
            "say hello",
            "files.read",
            "say_hello",
            "other/echo"
        ]
    );
    assert_eq!(ns.names().count(), 5 + 3, "aliases are not listed");
    let provider: Vec<&str> = ns.provider_names().collect();
    // `say hello` sanitises to `say_hello`, a real tool's name: the alias
    // takes the hash suffix, the real name stays.
    let suffixed = provider[1];
    assert!(suffixed.starts_with("say_hello_"), "{suffixed}");
    assert_eq!(suffixed.len(), "say_hello_".len() + 8);
    assert_eq!(
        provider,
        [
            "everything_echo",
            suffixed,
            "files_read",
            "say_hello",
            "other_echo"
        ]
    );
    let unique: std::collections::HashSet<&str> = provider.iter().copied().collect();
    assert_eq!(unique.len(), provider.len());
    assert!(provider.iter().all(|n| crate::is_provider_safe(n)));
    // Names and aliases route alike, and an alias stands for its name.
    for (exposed, alias, server, tool) in [
        ("everything/echo", "everything_echo", "everything", "echo"),
        ("other/echo", "other_echo", "other", "echo"),
        ("say hello", suffixed, "everything", "say hello"),
        ("files.read", "files_read", "everything", "files.read"),
        // The qualified alias of a bare name has its safe form too.
        (
            "everything/files.read",
            "everything_files_read",
            "everything",
            "files.read",
        ),
    ] {
        routes_to(&ns, exposed, server, tool);
        routes_to(&ns, alias, server, tool);
        assert_eq!(ns.lookup(alias).unwrap().1, exposed);
        assert_eq!(ns.lookup(exposed).unwrap().1, exposed);
    }
    routes_to(&ns, "say_hello", "everything", "say_hello");
    assert!(matches!(ns.route("echo"), Err(HubError::Ambiguous { .. })));
    // The provider-safe build names every tool exactly as the aliases do.
    let safe = f
        .build_with(CollisionPolicy::Prefix, &Separator::default(), true)
        .unwrap();
    assert_eq!(names(&safe), provider);
    assert!(
        safe.provider_names()
            .eq(safe.tools().iter().map(ExposedTool::name))
    );
}

#[test]
fn provider_safe_aliases_do_not_depend_on_discovery_order_or_rebuilds() {
    let aliases = |f: &Fixture| -> Vec<String> {
        f.build(CollisionPolicy::Prefix)
            .provider_names()
            .map(str::to_owned)
            .collect()
    };
    let first = aliases(&unsafe_names());
    assert_eq!(first, aliases(&unsafe_names()));
    // As if `other` had been listed first.
    let mut late = unsafe_names();
    late.snapshots = late
        .snapshots
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let tools: Vec<&str> = s.tools().iter().map(|t| t.name.as_str()).collect();
            snapshot(s.server().as_str(), 10 - i as u64, &tools)
        })
        .collect();
    assert_eq!(first, aliases(&late));
}

#[test]
fn an_ambiguous_unsafe_bare_name_stays_ambiguous_in_its_safe_form() {
    let ns = Fixture::of(&[("a", &["read.file"][..]), ("b", &["read.file"][..])])
        .build(CollisionPolicy::Prefix);
    for name in ["read.file", "read_file"] {
        match ns.route(name) {
            Err(HubError::Ambiguous { candidates, .. }) => {
                assert_eq!(candidates, ["a/read.file", "b/read.file"]);
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    routes_to(&ns, "a_read_file", "a", "read.file");
}

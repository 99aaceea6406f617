//! The merged namespace: every exposed name mapped to a route (server, local
//! name), built from the servers' active snapshots under the host's collision
//! policy and authority.
//!
//! A namespace is immutable. Building one reads the servers in registration
//! order only, so the outcome never depends on the order in which servers
//! finished starting or were discovered. A call resolves its name against
//! the namespace current when it starts and keeps that route, so the surface
//! never changes underneath an in-flight call.
//!
//! A qualified name belongs to its server. Under every policy every
//! published tool is reachable by its qualified name (`server/tool`, an
//! alias when the bare name is exposed too), and a tool whose own name
//! starts with a registered server's name and the separator (`files` offering
//! a tool literally called `notes/search`) never takes that name: it is
//! exposed only qualified (`files/notes/search`), with a
//! [`NamespaceNote::Reserved`], whether or not `notes` has a `search` now
//! (so a later listing of `notes` cannot hand the name over). Registered
//! means registered with the hub, ready or not. A name two routes would still
//! claim (only a custom separator that also occurs in server names can make
//! two qualified names equal) is exposed by neither and noted as a conflict;
//! a helper tool never takes a name a real tool has.
//!
//! Every exposed name that is not provider-safe (`[A-Za-z0-9_-]`, at most 64
//! characters: `notes/search`, `read.file`, `say hello`) also has a
//! provider-safe alias ([`Namespace::provider_names`] for a tool's name):
//! the form
//! [`HubConfig::provider_safe_names`](crate::HubConfig::provider_safe_names)
//! would give it, computed by the same rules over all the namespace's names
//! (unsafe characters become `_`, cut to 64, a stable hash suffix where that
//! would collide), so it is unique and depends only on the names, never on
//! start order. Exports hand the model these aliases and
//! [`Namespace::resolve`] accepts them as well as the exposed names, which
//! stay as they are everywhere else. Under `provider_safe_names` every name is safe already,
//! so names and aliases coincide.

use std::collections::{BTreeMap, HashMap, hash_map};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, OnceLock};

use hashbrown::hash_table::{Entry, HashTable};

use mcp_types::Tool;

use crate::HubError;
use crate::config::CollisionPolicy;
use crate::error::{DenyReason, TargetKind};
use crate::governance::authority::Gate;
use crate::namespace::helper::Helper;
use crate::namespace::name::{Separator, ServerName};
use crate::namespace::snapshot::ToolSnapshot;

/// Where an exposed name leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The server.
    pub server: ServerName,
    /// What on the server.
    pub target: RouteTarget,
}

/// The thing a route calls.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteTarget {
    /// A tool, by its local name on the server.
    Tool(String),
    /// A context helper.
    Helper(Helper),
}

#[derive(Clone, Debug)]
enum ToolRef {
    Snapshot(Arc<ToolSnapshot>, usize),
    Helper(Arc<Tool>),
}

/// One tool in the namespace.
#[derive(Clone, Debug)]
pub struct ExposedTool {
    name: String,
    aliases: Vec<String>,
    route: Route,
    tool: ToolRef,
}

impl ExposedTool {
    /// The name to show a model (the bare name when that is exposed, else the
    /// qualified one).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Other exposed names routing to the same tool: the qualified name of
    /// a tool whose bare name is exposed.
    pub fn aliases(&self) -> &[String] {
        &self.aliases
    }

    /// Where calls go.
    pub fn route(&self) -> &Route {
        &self.route
    }

    /// The server.
    pub fn server(&self) -> &ServerName {
        &self.route.server
    }

    /// The tool's definition as the server sent it (its name is the local
    /// name; its annotations are the server's raw hints, never policy). For
    /// a helper, the hub's own definition.
    pub fn tool(&self) -> &Tool {
        match &self.tool {
            ToolRef::Snapshot(snapshot, i) => &snapshot.tools()[*i],
            ToolRef::Helper(tool) => tool,
        }
    }

    /// Whether this is a context helper rather than a server tool.
    pub fn is_helper(&self) -> bool {
        matches!(self.route.target, RouteTarget::Helper(_))
    }
}

/// Something about a namespace the host may want to show.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NamespaceNote {
    /// `first`: `server`'s `tool` is reachable only qualified because an
    /// earlier-registered server keeps the bare name.
    Shadowed {
        /// The later server.
        server: ServerName,
        /// The tool.
        tool: String,
        /// The server keeping the bare name.
        kept_by: ServerName,
    },
    /// `reject`: `server` is refused because its `tool` collides.
    Refused {
        /// The refused server.
        server: ServerName,
        /// The first colliding tool (in the server's order).
        tool: String,
        /// The earlier-registered server.
        existing: ServerName,
    },
    /// Two routes claimed the same name; neither is exposed under it.
    NameConflict {
        /// The name.
        name: String,
        /// The servers involved, in registration order.
        servers: Vec<ServerName>,
    },
    /// `server`'s `tool` has a name in `owner`'s qualified space
    /// (`owner/...`): it is exposed only qualified (`server/owner/...`), so
    /// it can never take or hide a name of `owner`.
    Reserved {
        /// The server offering the tool.
        server: ServerName,
        /// The tool's own name.
        tool: String,
        /// The registered server whose qualified space the name is in.
        owner: ServerName,
    },
    /// A helper was left out because a real tool has its name.
    HelperSkipped {
        /// The server.
        server: ServerName,
        /// The helper.
        helper: Helper,
    },
}

/// What one server contributes to a build.
#[derive(Debug)]
pub(crate) struct ServerView<'a> {
    pub(crate) name: &'a ServerName,
    pub(crate) snapshot: Option<&'a Arc<ToolSnapshot>>,
    pub(crate) helpers: Vec<Helper>,
    pub(crate) gate: Gate<'a>,
}

/// Settings of a build.
#[derive(Debug)]
pub(crate) struct BuildSettings<'a> {
    pub(crate) policy: CollisionPolicy,
    pub(crate) separator: &'a Separator,
    pub(crate) provider_safe: bool,
    pub(crate) max_exposed: usize,
}

/// The merged, published tool surface.
///
/// Each exposed name that is not provider-safe also has a stable
/// provider-safe alias ([`Namespace::provider_names`]): its safe form under
/// the rules of
/// [`HubConfig::provider_safe_names`](crate::HubConfig::provider_safe_names),
/// computed over all the namespace's names, so unique and the same for the
/// same servers on every start. Exports use the aliases and
/// [`Namespace::resolve`] accepts them; the exposed names stay as they are.
#[derive(Debug, Default)]
pub struct Namespace {
    generation: u64,
    entries: Vec<ExposedTool>,
    /// Every routable name as (entry, slot: 0 the name, k the alias k - 1),
    /// in a hash table over the names without a second copy of every name
    /// (a hub of a hundred servers exposes thousands), hashed under this
    /// namespace's random keys (`hasher`), so names a server chose cannot
    /// be made to collide.
    by_name: HashTable<(u32, u32)>,
    hasher: RandomState,
    ambiguous: HashMap<String, Vec<String>>,
    /// Names (bare and qualified) of tools the server lists but the
    /// authority hides, so a call by one is refused as denied, not as
    /// unknown: (server, local name, why).
    hidden: HashMap<String, (ServerName, String, DenyReason)>,
    notes: Vec<NamespaceNote>,
    provider_safe: bool,
    /// The provider-safe forms of the names that are not safe, on first use.
    provider: OnceLock<ProviderForms>,
}

/// The provider-safe forms of a namespace's unsafe names.
#[derive(Debug, Default)]
struct ProviderForms {
    /// Per entry: the safe form of its name, when the name is not safe.
    names: Vec<Option<String>>,
    /// Safe form → (entry, slot of the name it stands for).
    routes: HashMap<String, (u32, u32)>,
    /// An ambiguous bare name stays ambiguous in its safe form.
    ambiguous: HashMap<String, Vec<String>>,
}

impl ProviderForms {
    /// The forms under the rules of `safe_names`, over every name, so they
    /// are unique and distinct from every name. Should even 16-digit hashes
    /// collide, there are none and exporting the unsafe names fails with
    /// `NotProviderSafe`.
    fn of(entries: &[ExposedTool], ambiguous: &HashMap<String, Vec<String>>) -> Self {
        let Ok(map) = safe_names::make_safe(&all_names(entries, ambiguous)) else {
            return Self {
                names: vec![None; entries.len()],
                ..Self::default()
            };
        };
        let safe_form = |name: &str| map.get(name).filter(|safe| *safe != name).cloned();
        let mut forms = Self {
            names: entries.iter().map(|e| safe_form(&e.name)).collect(),
            ..Self::default()
        };
        for (i, e) in entries.iter().enumerate() {
            // Bounded with the entries (see `finish`).
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (k, name) in std::iter::once(&e.name).chain(&e.aliases).enumerate() {
                if let Some(safe) = safe_form(name) {
                    let k = u32::try_from(k).unwrap_or(u32::MAX);
                    forms.routes.insert(safe, (i, k));
                }
            }
        }
        forms.ambiguous = ambiguous
            .iter()
            .filter_map(|(name, candidates)| safe_form(name).map(|s| (s, candidates.clone())))
            .collect();
        forms
    }
}

/// Every name of a build (exposed, aliases, ambiguous bare names and their
/// candidates), sorted, each once: what provider-safe forms are computed
/// over.
fn all_names<'a>(
    entries: &'a [ExposedTool],
    ambiguous: &'a HashMap<String, Vec<String>>,
) -> Vec<&'a str> {
    let mut all: Vec<&str> = Vec::new();
    for e in entries {
        all.push(&e.name);
        all.extend(e.aliases.iter().map(String::as_str));
    }
    all.extend(ambiguous.keys().map(String::as_str));
    for candidates in ambiguous.values() {
        all.extend(candidates.iter().map(String::as_str));
    }
    all.sort_unstable();
    all.dedup();
    all
}

impl Namespace {
    /// Counts namespaces: each rebuild takes the next number.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The exposed tools: registration order, then each server's order, its
    /// helpers last.
    pub fn tools(&self) -> &[ExposedTool] {
        &self.entries
    }

    /// Every exposed name (each tool's name, then its aliases). The
    /// provider-safe aliases of the names that are not safe route too but
    /// are not listed here (see [`Namespace::provider_names`]).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().flat_map(|e| {
            std::iter::once(e.name.as_str()).chain(e.aliases.iter().map(String::as_str))
        })
    }

    /// Notes on the build (shadowed names, refused servers, conflicts).
    pub fn notes(&self) -> &[NamespaceNote] {
        &self.notes
    }

    /// Whether every exposed name is provider-safe by construction.
    pub fn is_provider_safe(&self) -> bool {
        self.provider_safe
    }

    /// The tool exposed as `name`, or whose provider-safe alias `name` is;
    /// an ambiguous bare name is refused listing the names it could mean.
    pub fn resolve(&self, name: &str) -> Result<&ExposedTool, HubError> {
        self.lookup(name).map(|(entry, _)| entry)
    }

    /// [`Namespace::resolve`], with the exposed name `name` stands for
    /// (itself, unless it is a provider-safe alias).
    pub(crate) fn lookup(&self, name: &str) -> Result<(&ExposedTool, &str), HubError> {
        let hash = self.hasher.hash_one(name);
        if let Some(&(entry, k)) = self
            .by_name
            .find(hash, |&slot| name_at(&self.entries, slot) == name)
        {
            let entry = &self.entries[entry as usize];
            return Ok((entry, entry.name_at(k)));
        }
        if let Some(candidates) = self.ambiguous.get(name) {
            return Err(HubError::Ambiguous {
                name: name.to_owned(),
                candidates: candidates.clone(),
            });
        }
        let forms = self.provider_forms();
        if let Some(&(entry, k)) = forms.routes.get(name) {
            let entry = &self.entries[entry as usize];
            return Ok((entry, entry.name_at(k)));
        }
        if let Some(candidates) = forms.ambiguous.get(name) {
            return Err(HubError::Ambiguous {
                name: name.to_owned(),
                candidates: candidates.clone(),
            });
        }
        if let Some((server, tool, reason)) = self.hidden.get(name) {
            return Err(HubError::Denied {
                server: server.clone(),
                kind: TargetKind::Tool,
                name: tool.clone(),
                reason: *reason,
            });
        }
        Err(HubError::UnknownTool {
            name: name.to_owned(),
        })
    }

    /// The name to give an LLM provider for each of [`Namespace::tools`], in
    /// order: the exposed name when that is provider-safe already, else its
    /// provider-safe alias (see the module docs), which
    /// [`Namespace::resolve`] accepts as well. The exports use these. Worked
    /// out on first use, not on every rebuild: most hosts never export.
    pub fn provider_names(&self) -> impl Iterator<Item = &str> {
        let forms = self.provider_forms();
        self.entries
            .iter()
            .zip(&forms.names)
            .map(|(e, form)| form.as_deref().unwrap_or(&e.name))
    }

    fn provider_forms(&self) -> &ProviderForms {
        self.provider
            .get_or_init(|| ProviderForms::of(&self.entries, &self.ambiguous))
    }

    /// The route of `name` (see [`Namespace::resolve`]).
    pub fn route(&self, name: &str) -> Result<Route, HubError> {
        self.resolve(name).map(|e| e.route.clone())
    }

    /// Under `reject`: why `server` was refused, if it was.
    pub fn refusal(&self, server: &str) -> Option<HubError> {
        self.notes.iter().find_map(|n| match n {
            NamespaceNote::Refused {
                server: s,
                tool,
                existing,
            } if s.as_str() == server => Some(HubError::Collision {
                server: s.clone(),
                tool: tool.clone(),
                existing: existing.clone(),
            }),
            _ => None,
        })
    }

    /// Builds a namespace from `views` (in registration order).
    pub(crate) fn build(
        views: &[ServerView<'_>],
        settings: &BuildSettings<'_>,
        generation: u64,
    ) -> Result<Namespace, HubError> {
        let mut builder = Builder::default();
        // The registered server whose qualified space `local` is in, if any
        // (`notes/search` under `/` with `notes` registered). Only names
        // holding the separator are looked at; a custom separator may occur
        // in server names too, so every occurrence is a candidate split.
        let registered: HashMap<&str, usize> = views
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.as_str(), i))
            .collect();
        let sep = settings.separator.as_str();
        let owner_of = |local: &str| -> Option<usize> {
            local
                .match_indices(sep)
                .find_map(|(at, _)| registered.get(&local[..at]).copied())
        };
        // One pass of the gate over each snapshot: what is published, and
        // what it hides (so a call by a hidden name is refused as denied).
        let mut published: Vec<Vec<usize>> = Vec::with_capacity(views.len());
        for view in views {
            let mut shown = Vec::new();
            let tools = view.snapshot.map_or(&[][..], |s| s.tools());
            for (i, tool) in tools.iter().enumerate() {
                match view.gate.tool(&tool.name) {
                    Ok(()) => shown.push(i),
                    Err(reason) => {
                        let hidden = (view.name.clone(), tool.name.clone(), reason);
                        let qualified = settings.separator.qualify(view.name, &tool.name);
                        builder.hidden.insert(qualified, hidden.clone());
                        if owner_of(&tool.name).is_none() {
                            builder.hidden.entry(tool.name.clone()).or_insert(hidden);
                        }
                    }
                }
            }
            published.push(shown);
        }

        // Which servers publish each bare name, in registration order (a
        // name in a server's qualified space is never bare).
        let mut owners: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut reserved: HashMap<(usize, usize), usize> = HashMap::new();
        for (s, view) in views.iter().enumerate() {
            if let Some(snapshot) = view.snapshot {
                for &i in &published[s] {
                    let local = snapshot.tools()[i].name.as_str();
                    match owner_of(local) {
                        Some(owner) => {
                            reserved.insert((s, i), owner);
                        }
                        None => owners.entry(local).or_default().push(s),
                    }
                }
            }
        }

        let mut accepted: HashMap<&str, usize> = HashMap::new();
        for (s, view) in views.iter().enumerate() {
            let Some(snapshot) = view.snapshot else {
                continue;
            };
            if settings.policy == CollisionPolicy::Reject {
                let clash = published[s].iter().find_map(|&i| {
                    let local = snapshot.tools()[i].name.as_str();
                    accepted.get(local).map(|&other| (local, other))
                });
                // (Reserved names are never bare, so they cannot clash.)
                if let Some((tool, other)) = clash {
                    builder.notes.push(NamespaceNote::Refused {
                        server: view.name.clone(),
                        tool: tool.to_owned(),
                        existing: views[other].name.clone(),
                    });
                    continue;
                }
            }
            for &i in &published[s] {
                let local = snapshot.tools()[i].name.as_str();
                let qualified = settings.separator.qualify(view.name, local);
                let sharers = owners.get(local).map_or(&[][..], Vec::as_slice);
                let owner = reserved.get(&(s, i)).copied();
                if let Some(owner) = owner {
                    builder.notes.push(NamespaceNote::Reserved {
                        server: view.name.clone(),
                        tool: local.to_owned(),
                        owner: views[owner].name.clone(),
                    });
                }
                let (name, aliases) = match settings.policy {
                    _ if owner.is_some() => (qualified, Vec::new()),
                    CollisionPolicy::Prefix if sharers.len() == 1 => {
                        (local.to_owned(), vec![qualified])
                    }
                    CollisionPolicy::Prefix => (qualified, Vec::new()),
                    CollisionPolicy::First if sharers.first() == Some(&s) => {
                        (local.to_owned(), vec![qualified])
                    }
                    CollisionPolicy::First => {
                        let kept_by = sharers.first().map_or(s, |&o| o);
                        builder.notes.push(NamespaceNote::Shadowed {
                            server: view.name.clone(),
                            tool: local.to_owned(),
                            kept_by: views[kept_by].name.clone(),
                        });
                        (qualified, Vec::new())
                    }
                    CollisionPolicy::Reject => {
                        accepted.insert(local, s);
                        (local.to_owned(), vec![qualified])
                    }
                };
                builder.entries.push(ExposedTool {
                    name,
                    aliases,
                    route: Route {
                        server: view.name.clone(),
                        target: RouteTarget::Tool(local.to_owned()),
                    },
                    tool: ToolRef::Snapshot(Arc::clone(snapshot), i),
                });
            }
        }
        if settings.policy == CollisionPolicy::Prefix {
            for (local, sharers) in &owners {
                if sharers.len() > 1 {
                    let candidates = sharers
                        .iter()
                        .map(|&s| settings.separator.qualify(views[s].name, local))
                        .collect();
                    builder.ambiguous.insert((*local).to_owned(), candidates);
                }
            }
        }
        builder.drop_conflicts(views);
        builder.add_helpers(views, settings.separator);
        if settings.provider_safe {
            builder.make_provider_safe()?;
        } else {
            // (Provider-safe aliases are worked out on first use.)
        }
        builder.finish(generation, settings)
    }
}

#[derive(Default)]
struct Builder {
    entries: Vec<ExposedTool>,
    ambiguous: HashMap<String, Vec<String>>,
    hidden: HashMap<String, (ServerName, String, DenyReason)>,
    notes: Vec<NamespaceNote>,
}

impl Builder {
    /// Removes every name more than one entry claims (and ambiguous bare
    /// names that a route claims); entries left without any name are dropped.
    fn drop_conflicts(&mut self, views: &[ServerView<'_>]) {
        // The first claimant of every name, borrowed; only names claimed
        // more than once get a list of their claimants (and a copy below).
        let names = self.entries.iter().map(|e| 1 + e.aliases.len()).sum();
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(names);
        let mut shared: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, e) in self.entries.iter().enumerate() {
            for n in std::iter::once(&e.name).chain(&e.aliases) {
                match first.entry(n.as_str()) {
                    hash_map::Entry::Occupied(earlier) => shared
                        .entry(n.as_str())
                        .or_insert_with(|| vec![*earlier.get()])
                        .push(i),
                    hash_map::Entry::Vacant(free) => {
                        free.insert(i);
                    }
                }
            }
        }
        // An ambiguous bare name is a claim too: a route under the same
        // name would make `resolve` silently pick it.
        for name in self.ambiguous.keys() {
            if let Some(&i) = first.get(name.as_str()) {
                shared
                    .entry(name.as_str())
                    .or_insert_with(|| vec![i])
                    .push(usize::MAX);
            }
        }
        if shared.is_empty() {
            return;
        }
        // In name order (the map's).
        let conflicted: Vec<(String, Vec<usize>)> = shared
            .into_iter()
            .map(|(name, claimants)| (name.to_owned(), claimants))
            .collect();
        let order: HashMap<&ServerName, usize> =
            views.iter().enumerate().map(|(i, v)| (v.name, i)).collect();
        for (name, claimants) in &conflicted {
            let mut servers: Vec<ServerName> = claimants
                .iter()
                .filter_map(|&i| self.entries.get(i).map(|e| e.route.server.clone()))
                .collect();
            servers.sort_by_key(|s| order.get(s).copied().unwrap_or(usize::MAX));
            servers.dedup();
            self.notes.push(NamespaceNote::NameConflict {
                name: name.clone(),
                servers,
            });
            for &i in claimants {
                let Some(e) = self.entries.get_mut(i) else {
                    continue;
                };
                e.aliases.retain(|a| a != name);
                if &e.name == name {
                    e.name = if e.aliases.is_empty() {
                        String::new()
                    } else {
                        e.aliases.remove(0)
                    };
                }
            }
            self.ambiguous.remove(name);
        }
        self.entries.retain(|e| !e.name.is_empty());
    }

    fn add_helpers(&mut self, views: &[ServerView<'_>], separator: &Separator) {
        if views.iter().all(|v| v.helpers.is_empty()) {
            // (Entries are already grouped by server, in `views` order.)
            return;
        }
        // Each helper's name, or `None` when a tool or an ambiguous name
        // has it already; decided while the entries are in place.
        let named: Vec<Vec<Option<String>>> = {
            let taken: std::collections::HashSet<&str> = self
                .entries
                .iter()
                .flat_map(|e| std::iter::once(&e.name).chain(&e.aliases))
                .chain(self.ambiguous.keys())
                .map(String::as_str)
                .collect();
            views
                .iter()
                .map(|view| {
                    let names = view.helpers.iter().map(|helper| {
                        let name = separator.qualify(view.name, helper.local_name());
                        (!taken.contains(name.as_str())).then_some(name)
                    });
                    names.collect()
                })
                .collect()
        };
        // Helpers go right after their server's tools.
        let mut out = Vec::with_capacity(self.entries.len());
        let mut rest = std::mem::take(&mut self.entries).into_iter().peekable();
        for (view, names) in views.iter().zip(named) {
            while let Some(e) = rest.next_if(|e| &e.route.server == view.name) {
                out.push(e);
            }
            for (&helper, name) in view.helpers.iter().zip(names) {
                let Some(name) = name else {
                    self.notes.push(NamespaceNote::HelperSkipped {
                        server: view.name.clone(),
                        helper,
                    });
                    continue;
                };
                out.push(ExposedTool {
                    name,
                    aliases: Vec::new(),
                    route: Route {
                        server: view.name.clone(),
                        target: RouteTarget::Helper(helper),
                    },
                    tool: ToolRef::Helper(Arc::new(helper.definition(view.name.as_str()))),
                });
            }
        }
        out.extend(rest);
        self.entries = out;
    }

    fn make_provider_safe(&mut self) -> Result<(), HubError> {
        let map = safe_names::make_safe(&all_names(&self.entries, &self.ambiguous))?;
        let rename = |n: &mut String| {
            if let Some(safe) = map.get(n.as_str()) {
                *n = safe.clone();
            }
        };
        for e in &mut self.entries {
            rename(&mut e.name);
            e.aliases.iter_mut().for_each(rename);
        }
        let ambiguous = std::mem::take(&mut self.ambiguous);
        for (mut name, mut candidates) in ambiguous {
            rename(&mut name);
            candidates.iter_mut().for_each(rename);
            self.ambiguous.insert(name, candidates);
        }
        Ok(())
    }

    fn finish(self, generation: u64, settings: &BuildSettings<'_>) -> Result<Namespace, HubError> {
        let mut exposed = 0;
        for e in &self.entries {
            exposed += 1 + e.aliases.len();
        }
        // The bound counts exposed names (their provider-safe forms come on
        // first use, at most one each), checked before anything is indexed.
        if exposed > settings.max_exposed {
            return Err(HubError::NamespaceTooLarge {
                limit: settings.max_exposed,
            });
        }
        let hasher = RandomState::new();
        let entries = &self.entries;
        let mut by_name: HashTable<(u32, u32)> = HashTable::with_capacity(exposed);
        for (i, e) in entries.iter().enumerate() {
            // Entries and aliases are bounded by `max_exposed` (checked
            // above) far under u32::MAX.
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for k in 0..=e.aliases.len() {
                let slot = (i, u32::try_from(k).unwrap_or(u32::MAX));
                let name = name_at(entries, slot);
                let hash = hasher.hash_one(name);
                // A name claimed twice resolves to the later entry.
                match by_name.entry(
                    hash,
                    |&other| name_at(entries, other) == name,
                    |&other| hasher.hash_one(name_at(entries, other)),
                ) {
                    Entry::Occupied(mut taken) => *taken.get_mut() = slot,
                    Entry::Vacant(free) => {
                        free.insert(slot);
                    }
                }
            }
        }
        Ok(Namespace {
            generation,
            entries: self.entries,
            by_name,
            hasher,
            ambiguous: self.ambiguous,
            hidden: self.hidden,
            notes: self.notes,
            provider_safe: settings.provider_safe,
            provider: OnceLock::new(),
        })
    }
}

/// The name in `slot` of the entries (see `Namespace::by_name`).
fn name_at(entries: &[ExposedTool], (entry, k): (u32, u32)) -> &str {
    entries.get(entry as usize).map_or("", |e| e.name_at(k))
}

impl ExposedTool {
    /// The name in slot `k`: 0 the name, then the aliases.
    fn name_at(&self, k: u32) -> &str {
        match k as usize {
            0 => &self.name,
            k => self.aliases.get(k - 1).map_or("", String::as_str),
        }
    }
}

pub(crate) mod export;
pub(crate) mod helper;
pub(crate) mod name;
pub(crate) mod safe_names;
pub(crate) mod snapshot;
#[cfg(test)]
mod tests;

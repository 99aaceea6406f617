//! Which methods reach the application: the ones that exist in the
//! request's era and belong to a capability the server declared. Everything
//! else is `-32601` from the core, so a handler never sees a method it did
//! not advertise.
//!
//! | method | legacy | 2026-07-28 | needs |
//! |---|---|---|---|
//! | `tools/list`, `tools/call` | ✓ | ✓ | `tools` |
//! | `resources/list`, `resources/templates/list`, `resources/read` | ✓ | ✓ | `resources` |
//! | `resources/subscribe`, `resources/unsubscribe` | ✓ | — | `resources.subscribe` |
//! | `prompts/list`, `prompts/get` | ✓ | ✓ | `prompts` |
//! | `completion/complete` | ✓ | ✓ | `completions` |
//! | `logging/setLevel` | ✓ | — | `logging` |
//! | `subscriptions/listen` | — | ✓ | a `listChanged`, `subscribe` or the tasks extension |
//! | `tasks/get`, `tasks/cancel` | ✓ | ✓ | `tasks` (legacy), the tasks extension (2026) |
//! | `tasks/result`, `tasks/list` | ✓ | — | `tasks` |
//! | `tasks/update` | — | ✓ | the tasks extension |
//! | `skills/list`, `skills/get`, `resources/directory/read` | ✓ | ✓ | the Skills extension |
//!
//! `initialize` and `ping` (legacy) and `server/discover` (both) are the
//! core's own.

use mcp_types::requests::{
    CallTool, CancelTask, Complete, GetPrompt, GetSkill, GetTask, GetTaskPayload, ListPrompts,
    ListResourceTemplates, ListResources, ListSkills, ListTasks, ListTools, ReadDirectory,
    ReadResource, SetLevel, Subscribe, SubscriptionsListen, Unsubscribe, UpdateTask,
};
use mcp_types::{Era, Request, SKILLS_EXTENSION, ServerCapabilities, TASKS_EXTENSION};

/// What kind of result a method has, for the 2026-07-28 decoration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResultKind {
    /// An ordinary result.
    Plain,
    /// A `CacheableResult`: `ttlMs` and `cacheScope` are required.
    Cacheable,
    /// `subscriptions/listen`: notifications for it carry its id.
    Listen,
}

#[derive(Clone, Copy, Debug)]
enum Feature {
    Tools,
    Resources,
    Subscribe,
    Prompts,
    Completions,
    Logging,
    Listen,
    Tasks,
    Skills,
}

#[derive(Clone, Copy, Debug)]
enum Eras {
    Both,
    Legacy,
    Modern,
}

struct Entry {
    method: &'static str,
    eras: Eras,
    feature: Feature,
    kind: ResultKind,
}

const fn entry<R: Request>(eras: Eras, feature: Feature, kind: ResultKind) -> Entry {
    Entry {
        method: R::METHOD,
        eras,
        feature,
        kind,
    }
}

const TABLE: &[Entry] = &[
    entry::<ListTools>(Eras::Both, Feature::Tools, ResultKind::Cacheable),
    entry::<CallTool>(Eras::Both, Feature::Tools, ResultKind::Plain),
    entry::<ListResources>(Eras::Both, Feature::Resources, ResultKind::Cacheable),
    entry::<ListResourceTemplates>(Eras::Both, Feature::Resources, ResultKind::Cacheable),
    entry::<ReadResource>(Eras::Both, Feature::Resources, ResultKind::Cacheable),
    entry::<Subscribe>(Eras::Legacy, Feature::Subscribe, ResultKind::Plain),
    entry::<Unsubscribe>(Eras::Legacy, Feature::Subscribe, ResultKind::Plain),
    entry::<ListPrompts>(Eras::Both, Feature::Prompts, ResultKind::Cacheable),
    entry::<GetPrompt>(Eras::Both, Feature::Prompts, ResultKind::Plain),
    entry::<Complete>(Eras::Both, Feature::Completions, ResultKind::Plain),
    entry::<SetLevel>(Eras::Legacy, Feature::Logging, ResultKind::Plain),
    entry::<SubscriptionsListen>(Eras::Modern, Feature::Listen, ResultKind::Listen),
    entry::<GetTask>(Eras::Both, Feature::Tasks, ResultKind::Plain),
    entry::<CancelTask>(Eras::Both, Feature::Tasks, ResultKind::Plain),
    entry::<GetTaskPayload>(Eras::Legacy, Feature::Tasks, ResultKind::Plain),
    entry::<ListTasks>(Eras::Legacy, Feature::Tasks, ResultKind::Plain),
    entry::<UpdateTask>(Eras::Modern, Feature::Tasks, ResultKind::Plain),
    // `ListSkillsResult` and `GetSkillResult` extend `CacheableResult`.
    entry::<ListSkills>(Eras::Both, Feature::Skills, ResultKind::Cacheable),
    entry::<GetSkill>(Eras::Both, Feature::Skills, ResultKind::Cacheable),
    entry::<ReadDirectory>(Eras::Both, Feature::Skills, ResultKind::Plain),
];

/// The features a server declared, read once from its capabilities.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Features {
    tools: bool,
    resources: bool,
    subscribe: bool,
    prompts: bool,
    completions: bool,
    logging: bool,
    listen: bool,
    legacy_tasks: bool,
    modern_tasks: bool,
    skills: bool,
}

impl Features {
    pub(crate) fn of(caps: &ServerCapabilities) -> Self {
        let resources = caps.resources.as_ref();
        let subscribe = resources.is_some_and(|r| r.subscribe == Some(true));
        let listen = subscribe
            || resources.is_some_and(|r| r.list_changed == Some(true))
            || caps
                .tools
                .as_ref()
                .is_some_and(|t| t.list_changed == Some(true))
            || caps
                .prompts
                .as_ref()
                .is_some_and(|p| p.list_changed == Some(true))
            || caps.has_extension(TASKS_EXTENSION);
        Self {
            tools: caps.tools.is_some(),
            resources: resources.is_some(),
            subscribe,
            prompts: caps.prompts.is_some(),
            completions: caps.completions.is_some(),
            logging: caps.logging.is_some(),
            listen,
            legacy_tasks: caps.tasks.is_some(),
            modern_tasks: caps.has_extension(TASKS_EXTENSION),
            skills: caps.has_extension(SKILLS_EXTENSION),
        }
    }

    fn has(&self, feature: Feature, era: Era) -> bool {
        match feature {
            Feature::Tools => self.tools,
            Feature::Resources => self.resources,
            Feature::Subscribe => self.subscribe,
            Feature::Prompts => self.prompts,
            Feature::Completions => self.completions,
            Feature::Logging => self.logging,
            Feature::Listen => self.listen,
            Feature::Tasks if era == Era::Legacy => self.legacy_tasks,
            Feature::Tasks => self.modern_tasks,
            Feature::Skills => self.skills,
        }
    }
}

/// Where a request for `method` in `era` goes: `Some(kind)` to the
/// application, `None` for `-32601`.
pub(crate) fn app_route(method: &str, era: Era, features: &Features) -> Option<ResultKind> {
    let entry = TABLE.iter().find(|e| e.method == method)?;
    let in_era = match entry.eras {
        Eras::Both => true,
        Eras::Legacy => era == Era::Legacy,
        Eras::Modern => era == Era::Modern,
    };
    (in_era && features.has(entry.feature, era)).then_some(entry.kind)
}

#[cfg(test)]
mod tests {
    use mcp_types::{ResourcesCapability, ToolsCapability};

    use super::*;

    #[test]
    fn a_method_reaches_the_application_only_in_its_era_and_with_its_capability() {
        let caps = ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            logging: Some(Default::default()),
            ..Default::default()
        };
        let f = Features::of(&caps);
        assert_eq!(
            app_route(ListTools::METHOD, Era::Modern, &f),
            Some(ResultKind::Cacheable)
        );
        assert_eq!(
            app_route(CallTool::METHOD, Era::Legacy, &f),
            Some(ResultKind::Plain)
        );
        assert_eq!(
            app_route(SetLevel::METHOD, Era::Legacy, &f),
            Some(ResultKind::Plain)
        );
        // `logging/setLevel` does not exist in 2026-07-28.
        assert_eq!(app_route(SetLevel::METHOD, Era::Modern, &f), None);
        // Resources were not declared.
        assert_eq!(app_route(ListResources::METHOD, Era::Legacy, &f), None);
        // Nothing lists changes, so there is nothing to listen to.
        assert_eq!(
            app_route(SubscriptionsListen::METHOD, Era::Modern, &f),
            None
        );
        assert_eq!(app_route("vendor/thing", Era::Legacy, &f), None);
    }

    #[test]
    fn skills_methods_need_the_extension_and_their_listings_are_cacheable() {
        let mut caps = ServerCapabilities {
            resources: Some(ResourcesCapability::default()),
            ..Default::default()
        };
        let f = Features::of(&caps);
        assert_eq!(app_route(ListSkills::METHOD, Era::Modern, &f), None);
        caps.declare_skills(true);
        let f = Features::of(&caps);
        for era in [Era::Legacy, Era::Modern] {
            assert_eq!(
                app_route(ListSkills::METHOD, era, &f),
                Some(ResultKind::Cacheable)
            );
            assert_eq!(
                app_route(GetSkill::METHOD, era, &f),
                Some(ResultKind::Cacheable)
            );
            assert_eq!(
                app_route(ReadDirectory::METHOD, era, &f),
                Some(ResultKind::Plain)
            );
        }
    }

    #[test]
    fn subscribing_needs_the_subscribe_flag_and_listening_a_change_to_announce() {
        let caps = ServerCapabilities {
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let f = Features::of(&caps);
        assert!(app_route(Subscribe::METHOD, Era::Legacy, &f).is_some());
        assert!(app_route(Subscribe::METHOD, Era::Modern, &f).is_none());
        assert_eq!(
            app_route(SubscriptionsListen::METHOD, Era::Modern, &f),
            Some(ResultKind::Listen)
        );
        assert!(app_route(SubscriptionsListen::METHOD, Era::Legacy, &f).is_none());
    }
}

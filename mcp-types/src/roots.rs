//! Roots: the directories or files a client exposes to servers (`roots/list`).

use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::open_struct;

open_struct! {
    schema;
    /// A root the client exposes.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Root {
        /// The root's URI (`file://` for now).
        req uri: String = "uri",
        /// A display name.
        opt name: String = "name",
        /// 2025-06-18+: metadata.
        opt meta: Meta = "_meta",
    }
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            ..Default::default()
        }
    }
}

open_struct! {
    /// Result of `roots/list`, sent by the client.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListRootsResult {
        /// The roots.
        req roots: Vec<Root> = "roots",
        /// Never required for client results; kept for symmetry.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

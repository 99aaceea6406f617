//! The file token store: private files written atomically, records bound
//! to their server and issuer, and a provider that picks up where the last
//! process left off.

#[path = "support/fixture.rs"]
mod support;

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::sync::Arc;

use mcp_auth::{AuthError, FileTokenStore, MemoryTokenStore, StoreDirectoryProblem, TokenStore};
use support::{AsConfig, RsConfig, call, pair, provider};

fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn records_are_private_files_named_by_hashes_and_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mcp").join("oauth");
    let store = Arc::new(FileTokenStore::new(&dir));
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            reg_secret: Some("SEKRIT-client-secret".into()),
            auth_methods: Some(vec!["client_secret_post".into()]),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);

    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let records: Vec<_> = files(&dir)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(records.len(), 1);
    let path = &records[0];
    assert_eq!(
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        !name.contains("127.0.0.1") && !name.contains("mcp"),
        "{name}"
    );
    // No temporary file is left behind.
    assert!(files(&dir).iter().all(|f| {
        let n = f.file_name().unwrap().to_str().unwrap();
        !n.starts_with(".tmp-")
    }));

    let loaded = store.load(&rs.url()).await.unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].issuer(), auth.issuer());
    assert_eq!(loaded[0].server_url(), rs.url());
    assert!(loaded[0].has_access_token());
    assert!(!format!("{:?}", loaded[0]).contains("SEKRIT"));
    // Nothing for another server.
    assert!(
        store
            .load("http://127.0.0.1:1/mcp")
            .await
            .unwrap()
            .is_empty()
    );

    // A new process with the same store uses the saved token: no new
    // registration, authorization or token request.
    let again = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&again, &rs.url(), "tools/list").await, 200);
    assert_eq!(auth.log.to("/register").len(), 1);
    assert_eq!(auth.log.to("/token").len(), 1);

    // Logout forgets it everywhere.
    again.logout().await.unwrap();
    assert!(store.load(&rs.url()).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_record_readable_by_others_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Arc::new(FileTokenStore::new(tmp.path()));
    let (_auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let record = files(tmp.path())
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "json"))
        .unwrap();
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o644)).unwrap();
    match store.load(&rs.url()).await {
        Err(AuthError::StorePermissions { path }) => assert_eq!(path, record),
        other => panic!("{other:?}"),
    }
    // The provider reports it instead of silently ignoring it.
    let q = provider(&rs.url(), |c| c).with_store(store.clone());
    let err = mcp_transport::CredentialProvider::authorization(&q, support::target())
        .await
        .unwrap_err();
    assert!(format!("{err:?}").contains("StorePermissions"), "{err:?}");
}

#[tokio::test]
async fn a_corrupt_record_is_a_named_error() {
    let tmp = tempfile::tempdir().unwrap();
    let store = FileTokenStore::new(tmp.path());
    let (_auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| c).with_store(Arc::new(store.clone()));
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let record = files(tmp.path())
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "json"))
        .unwrap();
    std::fs::write(&record, b"{ not json").unwrap();
    assert!(matches!(
        store.load(&rs.url()).await,
        Err(AuthError::StoreCorrupt { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_leave_a_torn_record() {
    let tmp = tempfile::tempdir().unwrap();
    let (_auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let source = Arc::new(MemoryTokenStore::new());
    let p = provider(&rs.url(), |c| c).with_store(source.clone());
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let record = source.load(&rs.url()).await.unwrap().remove(0);

    // Two "processes" (separate store values on one directory) write the
    // same record over and over while a third reads.
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let store = FileTokenStore::new(tmp.path());
        let record = record.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                store.save(record.clone()).await.unwrap();
            }
        }));
    }
    let reader = FileTokenStore::new(tmp.path());
    let url = rs.url();
    tasks.push(tokio::spawn(async move {
        for _ in 0..25 {
            let loaded = reader.load(&url).await.unwrap();
            assert!(loaded.len() <= 1);
        }
    }));
    for t in tasks {
        t.await.unwrap();
    }
    let loaded = FileTokenStore::new(tmp.path())
        .load(&rs.url())
        .await
        .unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].issuer(), record.issuer());
}

#[test]
fn the_default_location_follows_xdg() {
    // Read only: the environment of this test process is not changed.
    match FileTokenStore::default_location() {
        Ok(store) => assert!(store.dir().ends_with("mcp/oauth")),
        Err(e) => assert!(matches!(e, AuthError::NoDataDirectory)),
    }
}

#[tokio::test]
async fn a_stored_record_of_another_server_is_never_used() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let p = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    // A second server on another port starts with nothing: its first
    // request carries no token.
    let (_auth2, other) = pair(AsConfig::default(), RsConfig::default()).await;
    let q = provider(&other.url(), |c| c).with_store(store.clone());
    assert!(
        mcp_transport::CredentialProvider::authorization(&q, support::target())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(auth.log.to("/token").len(), 1);

    // A record whose resource does not cover the server (edited by hand,
    // say) is not used either.
    let mut json = serde_json::to_value(store.load(&rs.url()).await.unwrap().remove(0)).unwrap();
    json["resource"] = serde_json::json!("https://elsewhere.example.com/mcp");
    let tampered_store = Arc::new(MemoryTokenStore::new());
    tampered_store
        .save(serde_json::from_value(json).unwrap())
        .await
        .unwrap();
    let r = provider(&rs.url(), |c| c).with_store(tampered_store);
    assert!(
        mcp_transport::CredentialProvider::authorization(&r, support::target())
            .await
            .unwrap()
            .is_empty()
    );
}

/// A record made by a provider against the fake servers (kept in memory).
async fn a_record() -> (
    mcp_auth::StoredCredentials,
    support::AuthServer,
    support::ResourceServer,
) {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let source = Arc::new(MemoryTokenStore::new());
    let p = provider(&rs.url(), |c| c).with_store(source.clone());
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let record = source.load(&rs.url()).await.unwrap().remove(0);
    (record, auth, rs)
}

#[tokio::test]
async fn a_store_directory_that_others_can_write_is_refused_by_name() {
    let (record, _auth, rs) = a_record().await;
    for mode in [0o777, 0o770, 0o1777, 0o702] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("oauth");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let store = FileTokenStore::new(&dir);
        let refused = |result: Result<(), AuthError>, what: &str| match result {
            Err(
                e @ AuthError::StoreDirectoryUnsafe {
                    problem: StoreDirectoryProblem::WritableByOthers { .. },
                    ..
                },
            ) => {
                let AuthError::StoreDirectoryUnsafe { path, problem } = &e else {
                    unreachable!()
                };
                assert_eq!(path, &dir, "{what}");
                assert_eq!(
                    *problem,
                    StoreDirectoryProblem::WritableByOthers { mode },
                    "{what}"
                );
                let shown = e.to_string();
                assert!(shown.contains(dir.to_str().unwrap()), "{shown}");
                assert!(shown.contains("writable by other users"), "{shown}");
            }
            other => panic!("{mode:o} {what}: {other:?}"),
        };
        refused(store.save(record.clone()).await, "save");
        refused(store.load(&rs.url()).await.map(drop), "load");
        refused(store.remove(&rs.url(), record.issuer()).await, "remove");
        // Nothing was written into it, and it was not repaired behind the
        // user's back.
        assert!(files(&dir).is_empty(), "{:?}", files(&dir));
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o7777,
            mode
        );
    }
    // The provider reports it (a store write is remembered, a read fails
    // the request).
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let q = provider(&rs.url(), |c| c).with_store(Arc::new(FileTokenStore::new(tmp.path())));
    let err = mcp_transport::CredentialProvider::authorization(&q, support::target())
        .await
        .unwrap_err();
    assert!(
        format!("{err:?}").contains("StoreDirectoryUnsafe"),
        "{err:?}"
    );
}

#[tokio::test]
async fn the_lock_file_is_never_opened_through_a_symbolic_link() {
    let (record, _auth, rs) = a_record().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("oauth");
    std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    // A link where the lock goes, to a file that does not exist yet:
    // following it would create that file.
    let planted = tmp.path().join("planted");
    std::os::unix::fs::symlink(&planted, dir.join(".lock")).unwrap();
    let store = FileTokenStore::new(&dir);
    for (what, result) in [
        ("save", store.save(record.clone()).await),
        ("load", store.load(&rs.url()).await.map(drop)),
        ("remove", store.remove(&rs.url(), record.issuer()).await),
    ] {
        match result {
            Err(e @ AuthError::Store { .. }) => {
                let AuthError::Store { path, .. } = &e else {
                    unreachable!()
                };
                assert_eq!(path, &dir.join(".lock"), "{what}");
                let source = std::error::Error::source(&e).unwrap().to_string();
                assert!(source.contains("symbolic link"), "{what}: {source}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    assert!(
        !planted.exists(),
        "the lock file was created through the link"
    );
    // Only the link is there: no record was written.
    assert_eq!(files(&dir), [dir.join(".lock")]);
}

#[tokio::test]
async fn a_record_file_is_never_read_through_a_symbolic_link() {
    let (record, _auth, rs) = a_record().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("oauth");
    let store = FileTokenStore::new(&dir);
    store.save(record).await.unwrap();
    assert_eq!(store.load(&rs.url()).await.unwrap().len(), 1);
    // The record moves out of the directory and a link takes its place (a
    // file of ours, 0600, a valid record: only the link is wrong).
    let path = files(&dir)
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let elsewhere = tmp.path().join("elsewhere.json");
    std::fs::rename(&path, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    match store.load(&rs.url()).await {
        Err(e @ AuthError::Store { .. }) => {
            let AuthError::Store { path: p, .. } = &e else {
                unreachable!()
            };
            assert_eq!(p, &path);
        }
        other => panic!("{other:?}"),
    }
}

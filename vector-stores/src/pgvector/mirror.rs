//! An in-process search graph over a PGVector table, kept in step with
//! every writer: [`PgVectorOptions::in_process_index`](super::PgVectorOptions::in_process_index).
//!
//! pgvector's HNSW search takes milliseconds inside the server at the
//! breadth good recall needs; the same search over a graph in this
//! process's memory takes a fraction of one. The graph is the index the
//! in-process store uses, over the table's vectors (of this store's
//! collection and of the table's vector length), held once per process
//! for each table.
//!
//! **Knowing what other writers changed.** A statement-level trigger on
//! the table (`nodekit_vector_version`) bumps the table's row in
//! `nodekit_vector_versions`, in the table's schema, after every insert,
//! update, delete and truncate, whoever runs it (n8n, another process).
//! The row's lock orders the writers, so a snapshot that sees version `v`
//! sees every write up to `v` and none after.
//!
//! - A search takes the graph's `k` nearest and reads their rows with the
//!   table's version in one statement, so both come from one snapshot.
//!   When the version is the graph's, those rows are the answer, their
//!   distances measured by PostgreSQL. Otherwise pgvector answers this
//!   search and the graph catches up in the background.
//! - Catching up reads every row's id and `xmin` (the transaction that
//!   wrote it) in one snapshot, fetches the vectors of the rows the graph
//!   does not hold as they are, and drops those gone.
//! - This process's own writes read the version inside their transaction:
//!   when it is the graph's plus one, their vectors go into the graph
//!   before the commit (a search reads their rows only once the commit
//!   makes them visible), searches take that version as the graph's too,
//!   and the rows a delete removed leave the graph after the commit. So a
//!   search does not fall back to pgvector for this process's own writes;
//!   a write that does not commit takes its vectors out again. Until it
//!   has, a search that sees the write's version also checks that the
//!   write's transaction was not rolled back: another writer's commit may
//!   have taken the same version.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use super::{PgVectorStore, db_error};
use nodekit_core::error::Result;
use nodekit_core::vector_store::{EXACT_LIMIT, store_error};
use nodekit_vector_index::{
    Breadth, Index, IndexError, Throttle, absorb_later, normalise, normalised,
};

/// The trigger's and its function's name.
const TRIGGER: &str = "nodekit_vector_version";
/// Changed rows whose vectors one statement fetches.
const FETCH: usize = 4_096;
/// The version of a graph not loaded yet (versions start at the
/// microseconds since 1970 when the table's row is made).
const NOT_LOADED: i64 = i64::MIN;
/// How long after a failed catch-up the next may start.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Where a store's graph lives; made when the store opens.
#[derive(Debug)]
pub(super) struct Mirrored {
    /// The table in this process's registry of graphs (server, database,
    /// schema, table, column, collection).
    key: String,
    /// `"schema".nodekit_vector_versions`.
    versions: String,
    /// `"schema".nodekit_vector_version`.
    function: String,
    /// The table's version and the rows of `$3` (ids), measured against
    /// `$2` (a vector); `$1` is the table's name. `$4` is the transaction
    /// of a write of this process landing, if any: when it was rolled back,
    /// the version may be another writer's that reused its number, so none
    /// is returned (as for a missing trigger). The ids are read through
    /// a sub-select, so that no plan knows how many there are: PostgreSQL
    /// then keeps one generic plan for the statement instead of planning
    /// it again on every search, which took longer than running it.
    pub(super) search: String,
    /// The table's version and the transaction's id.
    stamp: String,
    /// The table's version.
    version: String,
    /// The graph, once the table holds vectors.
    graph: OnceLock<Arc<Mirror>>,
}

/// The graph of one table's vectors and the ids under its keys.
pub(super) struct Mirror {
    dims: usize,
    index: Arc<Index>,
    ids: RwLock<Ids>,
    /// The table version the graph holds; [`NOT_LOADED`] until loaded.
    version: AtomicI64,
    /// The version a write of this process, whose vectors the graph holds
    /// already, leaves once it commits; [`NOT_LOADED`] when none.
    landing: AtomicI64,
    /// That write's transaction (`txid_current()`), set before `landing`.
    landing_xid: AtomicI64,
    /// Set while a catch-up is scheduled or running.
    scheduled: AtomicBool,
    /// Set when the last catch-up failed.
    failed: AtomicBool,
    retry: Throttle,
    /// One change at a time: a catch-up, or a write of this process.
    changing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("dims", &self.dims)
            .field("version", &self.version.load(Ordering::Relaxed))
            .field("index", &self.index)
            .finish()
    }
}

#[derive(Default)]
struct Ids {
    by_key: HashMap<i64, Uuid>,
    /// The key and the `xmin` of the row held.
    by_id: HashMap<Uuid, (i64, u32)>,
    next_key: i64,
}

/// What a write of this process left: the table's version after it and
/// the id of its transaction (the rows' `xmin`).
pub(super) struct Stamp {
    version: Option<i64>,
    xid: i64,
}

impl Stamp {
    /// The transaction's id as its rows' `xmin` shows it (without the
    /// epoch).
    fn xmin(&self) -> u32 {
        self.xid as u32
    }
}

fn index_error(e: IndexError) -> nodekit_core::error::Error {
    store_error(e.0)
}

fn poisoned(e: impl std::fmt::Display) -> nodekit_core::error::Error {
    store_error(format!("a PGVector graph's lock was poisoned: {e}"))
}

/// The graphs of this process, by table and vector length: stores opened
/// on one table (a node opens one per run) share one.
fn graphs() -> std::sync::MutexGuard<'static, HashMap<String, Arc<Mirror>>> {
    static ALL: OnceLock<Mutex<HashMap<String, Arc<Mirror>>>> = OnceLock::new();
    ALL.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl Mirror {
    fn new(dims: usize) -> Mirror {
        Mirror {
            dims,
            index: Arc::new(Index::new(dims, Breadth::DOCUMENTS)),
            ids: RwLock::default(),
            version: AtomicI64::new(NOT_LOADED),
            landing: AtomicI64::new(NOT_LOADED),
            landing_xid: AtomicI64::new(0),
            scheduled: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            retry: Throttle::new(RETRY_AFTER),
            changing: tokio::sync::Mutex::new(()),
        }
    }

    fn version(&self) -> i64 {
        self.version.load(Ordering::Acquire)
    }

    /// The versions of the table the graph holds now. The landing one
    /// first: a landed write moves the version before it clears the
    /// landing one. A landing that changed while they were read is left
    /// out (its transaction may be the next one's).
    pub(super) fn versions(&self) -> Versions {
        let landing = self.landing.load(Ordering::Acquire);
        let xid = self.landing_xid.load(Ordering::Acquire);
        let version = self.version();
        let landing = match self.landing.load(Ordering::Acquire) == landing {
            true => landing,
            false => NOT_LOADED,
        };
        Versions {
            version,
            landing,
            xid,
        }
    }

    /// Whether the graph holds the table as of some version.
    pub(super) fn loaded(&self) -> bool {
        self.version() != NOT_LOADED
    }

    /// Whether it is loading, catching up, or has vectors waiting to go
    /// into the graph (scanned exactly meanwhile).
    pub(super) fn busy(&self) -> bool {
        !self.loaded() || self.scheduled.load(Ordering::Acquire) || self.index.pending() > 0
    }

    /// The ids of the `k` vectors nearest `query` and the table versions
    /// the graph holds (one, or two while a write of this process lands);
    /// `None` until it is loaded, or for a query of another length.
    pub(super) fn nearest(&self, query: &[f32], k: usize) -> Result<Option<(Versions, Vec<Uuid>)>> {
        // Read before the graph: a change moves the versions after the
        // graph.
        let versions = self.versions();
        if versions.version == NOT_LOADED || query.len() != self.dims {
            return Ok(None);
        }
        let keys = self
            .index
            .search(&normalised(query), k, None)
            .map_err(index_error)?
            .into_keys();
        let ids = self.ids.read().map_err(poisoned)?;
        let found = keys.iter().filter_map(|k| ids.by_key.get(k).copied());
        Ok(Some((versions, found.collect())))
    }

    /// Of the rows a snapshot holds (id, `xmin`): those the graph does not
    /// hold as they are, and the ids it holds that are gone.
    fn diff(&self, rows: &[(Uuid, u32)]) -> Result<(Vec<Uuid>, Vec<Uuid>)> {
        let ids = self.ids.read().map_err(poisoned)?;
        let changed = rows
            .iter()
            .filter(|(id, xmin)| ids.by_id.get(id).is_none_or(|(_, x)| x != xmin))
            .map(|(id, _)| *id)
            .collect();
        let present: HashSet<&Uuid> = rows.iter().map(|(id, _)| id).collect();
        let gone = ids
            .by_id
            .keys()
            .filter(|id| !present.contains(id))
            .copied()
            .collect();
        Ok((changed, gone))
    }

    /// Puts `rows` (id, `xmin`, vector, scaled to length 1 in place) in
    /// the graph in place of what it held under their ids, and takes out
    /// `gone`; whether it held any of them. The version is left as it
    /// was: [`Mirror::settle`] moves it.
    fn change(&self, rows: Vec<(Uuid, u32, Vec<f32>)>, gone: &[Uuid]) -> Result<bool> {
        // The ids lock is held only to change the maps, never across the
        // graph's work: a search maps the keys it found under it. An old
        // key leaves the graph before its id, a new one gets its id before
        // it joins the graph, so every key a search finds has its id.
        let replaced: Vec<&Uuid> = gone
            .iter()
            .chain(rows.iter().map(|(id, _, _)| id))
            .collect();
        let old: Vec<i64> = {
            let ids = self.ids.read().map_err(poisoned)?;
            replaced
                .iter()
                .filter_map(|id| ids.by_id.get(*id).map(|(key, _)| *key))
                .collect()
        };
        self.index.remove(&old).map_err(index_error)?;
        let mut vectors: Vec<(i64, Vec<f32>)> = {
            let mut ids = self.ids.write().map_err(poisoned)?;
            for id in &replaced {
                if let Some((key, _)) = ids.by_id.remove(*id) {
                    ids.by_key.remove(&key);
                }
            }
            rows.into_iter()
                .filter(|(_, _, v)| v.len() == self.dims)
                .map(|(id, xmin, v)| {
                    let key = ids.next_key;
                    ids.next_key += 1;
                    ids.by_id.insert(id, (key, xmin));
                    ids.by_key.insert(key, id);
                    (key, v)
                })
                .collect()
        };
        for (_, v) in &mut vectors {
            normalise(v);
        }
        let added: Vec<(i64, &[f32])> = vectors.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        self.index.add(&added, EXACT_LIMIT).map_err(index_error)?;
        Ok(!old.is_empty())
    }

    /// The graph now holds the table as of `version`.
    fn settle(&self, version: i64) {
        self.version.store(version, Ordering::Release);
        if self.index.pending() > 0 {
            absorb_later(&self.index);
        }
    }

    /// Before a write of this process commits, with the `stamp` read in
    /// its transaction: when the write is the one version after the
    /// graph's, its rows (id, vector) go into the graph now and searches
    /// take the write's version as the graph's too, until
    /// [`Landing::landed`] or the landing's drop (the write did not
    /// commit: its rows leave the graph). Otherwise (a catch-up runs, or
    /// another write came between) `None`: the next search sees the
    /// version move, and the graph catches up.
    pub(super) fn land(&self, stamp: Stamp, rows: Vec<(Uuid, Vec<f32>)>) -> Option<Landing<'_>> {
        let one = self.changing.try_lock().ok()?;
        let held = self.version();
        let version = stamp
            .version
            .filter(|v| held != NOT_LOADED && held + 1 == *v)?;
        let added: Vec<Uuid> = rows.iter().map(|(id, _)| *id).collect();
        let rows = rows
            .into_iter()
            .map(|(id, v)| (id, stamp.xmin(), v))
            .collect();
        let replaces = match self.change(rows, &[]) {
            Ok(replaces) => replaces,
            Err(e) => {
                self.fail(&e);
                return None;
            }
        };
        self.landing_xid.store(stamp.xid, Ordering::Release);
        self.landing.store(version, Ordering::Release);
        Some(Landing {
            mirror: self,
            _one: one,
            version,
            added,
            replaces,
            landed: false,
        })
    }

    /// After a failed change the graph may not match its ids: it is
    /// loaded again from nothing by the next catch-up.
    fn fail(&self, e: &nodekit_core::error::Error) {
        tracing::warn!(error = %e, "vector store: the PGVector table's in-process graph is out of step; it is read again");
        self.version.store(NOT_LOADED, Ordering::Release);
        // The maps are emptied under the lock, the graph after it: a key
        // without an id is skipped by searches, and new keys come after
        // the old ones.
        let Ok(mut ids) = self.ids.write() else {
            return;
        };
        let next_key = ids.next_key;
        let old = std::mem::replace(
            &mut *ids,
            Ids {
                next_key,
                ..Ids::default()
            },
        );
        drop(ids);
        let keys: Vec<i64> = old.by_key.into_keys().collect();
        let _ = self.index.remove(&keys);
    }
}

/// The table versions a search may find the graph in step with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Versions {
    version: i64,
    landing: i64,
    /// The landing write's transaction.
    xid: i64,
}

impl Versions {
    /// Whether a statement that saw the table at `version` may take the
    /// graph's answer.
    pub(super) fn holds(&self, version: Option<i64>) -> bool {
        version.is_some_and(|v| v == self.version || (self.lands() && v == self.landing))
    }

    /// Whether a statement that saw the table at `version` saw a write the
    /// graph neither holds nor is landing (another process's, or one of
    /// this process that could not land): the graph is behind the table.
    /// A version older than the graph's is not.
    pub(super) fn behind(&self, version: Option<i64>) -> bool {
        version.is_none_or(|v| v > self.version && !(self.lands() && v == self.landing))
    }

    /// Whether a write of this process is landing: its new rows are in
    /// the graph before they are committed, its deleted rows after.
    pub(super) fn lands(&self) -> bool {
        self.landing != NOT_LOADED
    }

    /// The landing write's transaction, which the search statement checks
    /// ([`Mirrored::search`]'s `$4`).
    pub(super) fn landing_xid(&self) -> Option<i64> {
        self.lands().then_some(self.xid)
    }
}

/// A write of this process whose rows are in the graph before it
/// commits; see [`Mirror::land`].
pub(super) struct Landing<'a> {
    mirror: &'a Mirror,
    _one: tokio::sync::MutexGuard<'a, ()>,
    version: i64,
    /// The ids it put in the graph, taken out again if it does not land.
    added: Vec<Uuid>,
    /// Whether some of them replaced rows the graph held (which a write
    /// that does not land cannot put back).
    replaces: bool,
    landed: bool,
}

impl Landing<'_> {
    /// The write committed: the rows it removed (`gone`) leave the graph,
    /// which now holds the table as of the write.
    pub(super) fn landed(mut self, gone: &[Uuid]) {
        let mirror = self.mirror;
        match mirror.change(Vec::new(), gone) {
            Ok(_) => mirror.settle(self.version),
            Err(e) => mirror.fail(&e),
        }
        self.landed = true;
        mirror.landing.store(NOT_LOADED, Ordering::Release);
    }
}

impl Drop for Landing<'_> {
    /// Without [`Landing::landed`], the write did not commit (or its
    /// caller went away not knowing): its rows leave the graph, or the
    /// graph is read again if they replaced rows it held. If it did commit,
    /// the next search sees the version move and the graph catches up.
    fn drop(&mut self) {
        if self.landed {
            return;
        }
        let mirror = self.mirror;
        mirror.landing.store(NOT_LOADED, Ordering::Release);
        let undone = if self.replaces {
            Err(store_error("a write that replaced rows did not commit"))
        } else {
            mirror.change(Vec::new(), &self.added).map(drop)
        };
        if let Err(e) = undone {
            mirror.fail(&e);
        }
    }
}

impl Mirrored {
    /// Where this store's graph lives (the trigger is put on the table,
    /// when missing, by [`PgVectorStore::install`]).
    pub(super) async fn new(store: &PgVectorStore) -> Result<Mirrored> {
        let schema: String = sqlx::query_scalar(
            "SELECT quote_ident(n.nspname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.oid = to_regclass($1)",
        )
        .bind(&store.table)
        .fetch_one(&store.pool)
        .await
        .map_err(db_error)?;
        let options = store.pool.connect_options();
        let versions = format!("{schema}.nodekit_vector_versions");
        // NULL while the trigger is missing or disabled.
        let version = format!(
            "(SELECT v.version FROM {versions} v WHERE v.rel = to_regclass($1)
               AND EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v.rel
                 AND t.tgname = '{TRIGGER}' AND t.tgenabled <> 'D'))"
        );
        Ok(Mirrored {
            key: format!(
                "{}:{}/{} {schema}.{} {} {:?}",
                options.get_host(),
                options.get_port(),
                options.get_database().unwrap_or_default(),
                store.table,
                store.vector,
                store.collection_id,
            ),
            search: format!(
                "SELECT v.version, d.id, d.content, d.metadata, d.distance
                 FROM (SELECT CASE WHEN txid_status($4) = 'aborted' THEN NULL
                         ELSE {version} END AS version) v LEFT JOIN (
                   SELECT {id}::text AS id, {content} AS content, {metadata} AS metadata,
                     {vector} <=> $2::vector AS distance
                   FROM {t} WHERE {id} = ANY((SELECT $3::uuid[])::uuid[])) d ON TRUE",
                id = store.id,
                content = store.content,
                metadata = store.metadata,
                vector = store.vector,
                t = store.table,
            ),
            stamp: format!("SELECT {version}, txid_current()"),
            version: format!("SELECT {version}"),
            versions,
            function: format!("{schema}.{TRIGGER}"),
            graph: OnceLock::new(),
        })
    }

    /// The graph, if one was made.
    pub(super) fn graph(&self) -> Option<&Arc<Mirror>> {
        self.graph.get()
    }
}

impl PgVectorStore {
    /// Creates, when missing, the versions table, the trigger function,
    /// the table's trigger and its row; under an advisory lock, so two
    /// processes opening the table at once do not both create them. When
    /// all are there (each store opening the table asks), one round trip.
    pub(super) async fn install(&self, mirrored: &Mirrored) -> Result<()> {
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        // An error here is a missing versions table.
        let counted: Option<Option<i64>> =
            sqlx::query_scalar(sqlx::AssertSqlSafe(mirrored.version.clone()))
                .bind(&self.table)
                .fetch_one(&mut *conn)
                .await
                .ok();
        if counted.flatten().is_some() {
            return Ok(());
        }
        let mut tx = conn.begin().await.map_err(db_error)?;
        let run = async |tx: &mut PgConnection, sql: String| {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(tx)
                .await
                .map(|_| ())
                .map_err(|e| {
                    store_error(format!(
                        "PostgreSQL: cannot set up the in-process index's trigger on the table \
                         (it needs the table's owner): {e}"
                    ))
                })
        };
        run(
            &mut tx,
            format!("SELECT pg_advisory_xact_lock(hashtext('{TRIGGER}'))"),
        )
        .await?;
        let now = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";
        run(
            &mut tx,
            format!(
                "CREATE TABLE IF NOT EXISTS {v} (rel oid PRIMARY KEY, version bigint NOT NULL)",
                v = mirrored.versions
            ),
        )
        .await?;
        let has_function: bool =
            sqlx::query_scalar("SELECT to_regprocedure($1 || '()') IS NOT NULL")
                .bind(&mirrored.function)
                .fetch_one(&mut *tx)
                .await
                .map_err(db_error)?;
        if !has_function {
            // Runs as its owner (writers need no rights on the versions
            // table), with a search path of the catalog only.
            run(
                &mut tx,
                format!(
                    "CREATE FUNCTION {f}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                     SET search_path = pg_catalog, pg_temp AS $body$
                     BEGIN
                       INSERT INTO {v} AS v (rel, version) VALUES (TG_RELID, {now})
                       ON CONFLICT (rel) DO UPDATE SET version = v.version + 1;
                       RETURN NULL;
                     END $body$",
                    f = mirrored.function,
                    v = mirrored.versions
                ),
            )
            .await?;
        }
        let has_trigger: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2)",
        )
        .bind(&self.table)
        .bind(TRIGGER)
        .fetch_one(&mut *tx)
        .await
        .map_err(db_error)?;
        if !has_trigger {
            run(
                &mut tx,
                format!(
                    "CREATE TRIGGER {TRIGGER} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {t}
                     FOR EACH STATEMENT EXECUTE FUNCTION {f}()",
                    t = self.table,
                    f = mirrored.function
                ),
            )
            .await?;
        }
        // Writes made without the trigger were not counted: a graph of
        // this table held already must look again, so its row moves.
        let on_conflict = match has_trigger {
            true => "NOTHING",
            false => "UPDATE SET version = v.version + 1",
        };
        let row = format!(
            "INSERT INTO {v} AS v (rel, version) VALUES (to_regclass($1), {now})
             ON CONFLICT (rel) DO {on_conflict}",
            v = mirrored.versions
        );
        sqlx::query(sqlx::AssertSqlSafe(row))
            .bind(&self.table)
            .execute(&mut *tx)
            .await
            .map_err(db_error)?;
        tx.commit().await.map_err(db_error)
    }

    /// This store's graph, made at the first call once the table holds
    /// vectors (and loaded in the background: `None` meanwhile too).
    pub(super) async fn graph(&self) -> Result<Option<Arc<Mirror>>> {
        let Some(mirrored) = &self.mirrored else {
            return Ok(None);
        };
        let graph = match mirrored.graph() {
            Some(graph) => graph.clone(),
            None => {
                let Some(dims) = self.dims().await? else {
                    return Ok(None);
                };
                let graph = graphs()
                    .entry(format!("{} {dims}", mirrored.key))
                    .or_insert_with(|| Arc::new(Mirror::new(dims)))
                    .clone();
                mirrored.graph.get_or_init(|| graph).clone()
            }
        };
        if !graph.loaded() {
            self.catch_up(&graph);
        }
        Ok(Some(graph))
    }

    /// Brings `graph` to the table's version in the background, unless a
    /// catch-up is on its way already (or one just failed).
    pub(super) fn catch_up(&self, graph: &Arc<Mirror>) {
        if graph.failed.load(Ordering::Acquire) && !graph.retry.due() {
            return;
        }
        if graph.scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        let (store, graph) = (self.clone(), graph.clone());
        tokio::spawn(async move {
            let done = store.sync(&graph).await;
            graph.failed.store(done.is_err(), Ordering::Release);
            graph.scheduled.store(false, Ordering::Release);
            if let Err(e) = done {
                tracing::warn!(error = %e, "vector store: cannot read the PGVector table into its in-process graph; pgvector answers meanwhile");
            }
        });
    }

    /// One catch-up: the rows a snapshot holds, against the graph's.
    async fn sync(&self, graph: &Mirror) -> Result<()> {
        let Some(mirrored) = &self.mirrored else {
            return Ok(());
        };
        let _one = graph.changing.lock().await;
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        let mut installed = false;
        let (mut tx, version) = loop {
            let mut tx = conn
                .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await
                .map_err(db_error)?;
            let version: Option<i64> =
                sqlx::query_scalar(sqlx::AssertSqlSafe(mirrored.version.clone()))
                    .bind(&self.table)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(db_error)?;
            match version {
                Some(version) => break (tx, version),
                None if !installed => {
                    // Dropped since the store opened: put back (which
                    // moves the version, as writes may have come since).
                    tx.rollback().await.map_err(db_error)?;
                    self.install(mirrored).await?;
                    installed = true;
                }
                None => {
                    return Err(store_error(format!(
                        "the table's {TRIGGER} trigger is disabled"
                    )));
                }
            }
        };
        if version == graph.version() {
            return tx.commit().await.map_err(db_error);
        }
        let (scope, _) = self.in_collection(2);
        let scan = format!(
            "SELECT {id}::text, xmin::text::bigint FROM {t}
             WHERE {v} IS NOT NULL AND vector_dims({v}) = $1{scope}",
            id = self.id,
            v = self.vector,
            t = self.table,
        );
        let mut query =
            sqlx::query_as::<_, (String, i64)>(sqlx::AssertSqlSafe(scan)).bind(graph.dims as i32);
        if let Some(c) = &self.collection_id {
            query = query.bind(c.as_str());
        }
        let mut rows = Vec::new();
        for (id, xmin) in query.fetch_all(&mut *tx).await.map_err(db_error)? {
            rows.push((
                Uuid::parse_str(&id).map_err(|e| db_error(sqlx::Error::Decode(Box::new(e))))?,
                xmin as u32,
            ));
        }
        let (changed, gone) = graph.diff(&rows)?;
        let xmins: HashMap<Uuid, u32> = rows.into_iter().collect();
        let fetch = format!(
            "SELECT {id}::text, {v}::real[] FROM {t} WHERE {id} = ANY($1::uuid[])",
            id = self.id,
            v = self.vector,
            t = self.table,
        );
        let changing = async {
            for part in changed.chunks(FETCH) {
                let ids: Vec<String> = part.iter().map(Uuid::to_string).collect();
                let found: Vec<(String, Vec<f32>)> =
                    sqlx::query_as(sqlx::AssertSqlSafe(fetch.clone()))
                        .bind(ids)
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(db_error)?;
                let mut rows = Vec::with_capacity(found.len());
                for (id, vector) in found {
                    let id = Uuid::parse_str(&id)
                        .map_err(|e| db_error(sqlx::Error::Decode(Box::new(e))))?;
                    rows.push((id, xmins.get(&id).copied().unwrap_or_default(), vector));
                }
                graph.change(rows, &[])?;
            }
            graph.change(Vec::new(), &gone)
        };
        if let Err(e) = changing.await {
            graph.fail(&e);
            return Err(e);
        }
        tx.commit().await.map_err(db_error)?;
        graph.settle(version);
        Ok(())
    }

    /// Inside a write's transaction, after the write: the version it made
    /// and its transaction's id.
    pub(super) async fn stamp(&self, mirrored: &Mirrored, tx: &mut PgConnection) -> Result<Stamp> {
        let (version, xid): (Option<i64>, i64) =
            sqlx::query_as(sqlx::AssertSqlSafe(mirrored.stamp.clone()))
                .bind(&self.table)
                .fetch_one(tx)
                .await
                .map_err(db_error)?;
        Ok(Stamp { version, xid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgvector::PgVectorOptions;
    use nodekit_core::document::Document;
    use nodekit_core::vector_store::{Entry, Filter, VectorStore};

    /// A write of this process lands, its transaction is rolled back, and
    /// another writer's commit takes the version the landing one announced
    /// (before this process drops the landing): searches must not take the
    /// graph, which lacks that writer's row, for the table.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rolled_back_landing_does_not_vouch_for_another_writers_version() {
        let Some(schema) = nodekit_test_support::Schema::pgvector().await else {
            return;
        };
        let pool = nodekit_db::postgres::pool_options(2)
            .connect_with(PgVectorStore::session_options(schema.options.clone()))
            .await
            .unwrap();
        let store = PgVectorStore::open(
            &nodekit_db::postgres::Postgres::from_pool(pool.clone()),
            PgVectorOptions {
                in_process_index: true,
                ..PgVectorOptions::default()
            },
        )
        .await
        .unwrap();
        let axis = |i: usize| -> Vec<f32> { (0..4).map(|d| f32::from(u8::from(d == i))).collect() };
        let entries: Vec<Entry> = (0..3)
            .map(|i| Entry {
                document: Document::new(format!("axis {i}")),
                vector: axis(i),
            })
            .collect();
        store.add(&entries).await.unwrap();
        store.search(&axis(0), 1, &Filter::all()).await.unwrap();
        while store.indexing() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let graph = store.graph().await.unwrap().unwrap();
        let held = graph.version();

        let mut tx = pool.begin().await.unwrap();
        let xid: i64 = sqlx::query_scalar("SELECT txid_current()")
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        tx.rollback().await.unwrap();
        let stamp = Stamp {
            version: Some(held + 1),
            xid,
        };
        let landing = graph.land(stamp, vec![(Uuid::new_v4(), axis(1))]).unwrap();
        // Another writer's insert (plain SQL: the graph learns of it only
        // through the version).
        sqlx::raw_sql(
            "INSERT INTO n8n_vectors (text, metadata, embedding) VALUES ('foreign', '{}', '[0,0,0,1]')",
        )
        .execute(&pool)
        .await
        .unwrap();
        let found = store.search(&axis(3), 1, &Filter::all()).await.unwrap();
        assert_eq!(found[0].document.page_content, "foreign");
        drop(landing);

        pool.close().await;
        schema.drop().await;
    }
}

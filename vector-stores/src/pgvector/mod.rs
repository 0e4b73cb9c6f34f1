//! A vector store in PostgreSQL with pgvector, in the table layout of
//! n8n's PGVector node (LangChain's `PGVectorStore`), so documents n8n
//! inserted are found here and the other way round.
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS n8n_vectors (
//!   "id" uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
//!   "text" text, "metadata" jsonb, "embedding" vector);
//! ```
//!
//! The table and column names are n8n's options ([`PgVectorOptions`]).
//! With a collection, a `collection_id` column points at the collection
//! table (`n8n_vector_collections`: `uuid`, `name`, `cmetadata`), as
//! LangChain adds it. Documents without an id get a time-ordered UUID
//! (version 7), which the primary key's index takes faster than random
//! ones, and are written with one binary `COPY` when the columns have
//! n8n's types (as text rows otherwise).
//!
//! Scores are distances, lowest first, as n8n shows them: cosine distance
//! (`1 - similarity`) by default, or the negative inner product, or the
//! Euclidean distance ([`Distance`]). Searches without a filter use a
//! pgvector HNSW index on the vector column (an expression index,
//! `("embedding"::vector(N))`, which leaves the table as n8n made it),
//! created the first time such a search runs on a table of 1,000 documents
//! or more; filtered searches scan exactly. Filters are LangChain's
//! ([`Filter`]).
//!
//! # The in-process index
//!
//! pgvector's HNSW search takes milliseconds inside PostgreSQL at the
//! breadth the nearest documents need. With
//! [`PgVectorOptions::in_process_index`], unfiltered searches go through a
//! graph of the table's vectors held in this process instead (the one the
//! in-process store uses), and then read the `k` rows found in one
//! statement; the distances are still PostgreSQL's.
//!
//! - **Other writers.** A statement-level trigger, `nodekit_vector_version`,
//!   counts the table's writes in `nodekit_vector_versions` (both in the
//!   table's schema), whoever makes them: n8n, another process, `psql`.
//!   The statement that reads the rows also reads the count. When the
//!   count moved past the graph's, pgvector answers that search and the
//!   graph catches up in the background: it reads the id and `xmin` of
//!   every row, fetches the vectors of the rows added or changed, and
//!   drops the rows gone.
//! - **This process's writes** go into the graph as they commit.
//! - **When it loads.** The graph is read from the table by the first
//!   unfiltered search once the table holds vectors, in the background;
//!   [`PgVectorStore::indexing`] says when it is done. Stores opened on
//!   the same table in one process share it, for the life of the process.
//! - **What it needs.** Opening the store creates the trigger when missing,
//!   which needs the table's owner. The graph measures cosine distance,
//!   so it works with [`Distance::Cosine`] only.

mod mirror;

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use sqlx::Connection;
use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgRow};

use self::mirror::Mirrored;
use futures::future::BoxFuture;
use nodekit_core::document::Document;
use nodekit_core::error::Result;
use nodekit_core::node::SharedPools;
use nodekit_core::vector_store::{Bind, SqlDialect, SqlFilter};
use nodekit_core::vector_store::{
    Entry, Filter, Found, Scores, Selection, VectorStore, check_dimensions, check_vector,
    last_of_each_id, store_error,
};
use nodekit_db::postgres::{Postgres, PostgresConfig};
use nodekit_vector_index::pg_vector;

/// Documents below which a table is scanned rather than indexed.
const INDEX_FROM: i64 = 1_000;
/// Rows written per statement (LangChain writes 500).
const ROWS_PER_INSERT: usize = 500;
/// pgvector's HNSW search breadth. Its default, 40, finds too few of the
/// exact nearest on hard data: at 100,000 chunks embedded by feature
/// hashing, 100 finds 91% of the right top 4 and 200 finds 95%, for a
/// search of 8 ms instead of 5.
const EF_SEARCH: u32 = 200;
/// Times a search asks the in-process graph before pgvector answers. A try
/// fails when a write of this process lands while its statement runs. With
/// a writer changing 100,000 rows' table every ~10 ms, three tries left 2%
/// of searches to pgvector and six tries one in a thousand. A try costs one
/// round trip, pgvector's answer at 100,000 rows about fifty.
const GRAPH_TRIES: usize = 8;

/// How distances are measured (n8n's "Distance Strategy").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Distance {
    /// Cosine distance, `<=>` (n8n's default).
    #[default]
    Cosine,
    /// Negative inner product, `<#>`.
    InnerProduct,
    /// Euclidean distance, `<->`.
    Euclidean,
}

impl Distance {
    fn operator(self) -> &'static str {
        match self {
            Distance::Cosine => "<=>",
            Distance::InnerProduct => "<#>",
            Distance::Euclidean => "<->",
        }
    }

    fn ops(self) -> &'static str {
        match self {
            Distance::Cosine => "vector_cosine_ops",
            Distance::InnerProduct => "vector_ip_ops",
            Distance::Euclidean => "vector_l2_ops",
        }
    }

    /// n8n's name for it (`cosine`, `innerProduct`, `euclidean`).
    pub fn from_name(name: &str) -> Option<Distance> {
        match name {
            "cosine" => Some(Distance::Cosine),
            "innerProduct" => Some(Distance::InnerProduct),
            "euclidean" => Some(Distance::Euclidean),
            _ => None,
        }
    }
}

/// The column names (n8n's "Column Names" option).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// The id (`uuid`), default `id`.
    pub id: String,
    /// The vector, default `embedding`.
    pub vector: String,
    /// The text, default `text`.
    pub content: String,
    /// The metadata (`jsonb`), default `metadata`.
    pub metadata: String,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            id: "id".into(),
            vector: "embedding".into(),
            content: "text".into(),
            metadata: "metadata".into(),
        }
    }
}

/// Where and how the documents are kept; the defaults are n8n's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgVectorOptions {
    /// The table, default `n8n_vectors`.
    pub table: String,
    /// The collection (name, collection table), if documents are kept in
    /// one; n8n's defaults are `n8n` and `n8n_vector_collections`.
    pub collection: Option<(String, String)>,
    /// Column names.
    pub columns: Columns,
    /// How searches measure distance.
    pub distance: Distance,
    /// Whether unfiltered searches may create and use an HNSW index.
    pub hnsw_index: bool,
    /// Whether unfiltered searches go through a graph of the table's
    /// vectors held in this process (off by default; cosine distance
    /// only). It puts a statement-level trigger on the table, so that
    /// every writer's changes are seen (opening the store then needs the
    /// table's owner), and holds the table's vectors in memory for the
    /// life of the process, once for each table. pgvector answers until
    /// the graph is loaded, and after another writer's change until the
    /// graph has caught up; see [the module docs](self#the-in-process-index).
    pub in_process_index: bool,
}

impl Default for PgVectorOptions {
    fn default() -> Self {
        PgVectorOptions {
            table: "n8n_vectors".into(),
            collection: None,
            columns: Columns::default(),
            distance: Distance::Cosine,
            hnsw_index: true,
            in_process_index: false,
        }
    }
}

/// Documents in a PostgreSQL table with pgvector; see the module docs.
#[derive(Debug, Clone)]
pub struct PgVectorStore {
    pool: PgPool,
    options: PgVectorOptions,
    /// Quoted identifiers.
    table: String,
    id: String,
    vector: String,
    content: String,
    metadata: String,
    /// The collection's uuid, as text.
    collection_id: Option<String>,
    /// The vector length an HNSW index is known to exist for.
    indexed: Arc<OnceLock<usize>>,
    /// Whether the columns have n8n's types (`uuid`, `text`, `jsonb`,
    /// `vector`), so new documents can be sent in `COPY`'s binary form.
    copyable: bool,
    /// Whether the pool's sessions search the HNSW index less widely than
    /// [`EF_SEARCH`] (made without [`PgVectorStore::session_options`]), so
    /// each indexed search sets it in a transaction of its own.
    widen: bool,
    /// Where the in-process graph lives, when the options ask for one.
    mirrored: Option<Arc<Mirrored>>,
}

fn db_error(e: sqlx::Error) -> nodekit_core::error::Error {
    nodekit_core::vector_store::VectorStoreError::Store(nodekit_db::store_error(
        Some(nodekit_core::error::Backend::Postgres),
        e,
    ))
    .into()
}

/// A name for SQL: letters, digits and `_`, up to 63 bytes, quoted.
fn quoted(what: &str, name: &str) -> Result<String> {
    if !nodekit_db::is_plain_identifier(name, 63) {
        return Err(store_error(format!(
            "invalid {what} {:?}: use 1 to 63 letters, digits and `_`, starting with a letter or `_`",
            nodekit_core::error::shorten(name, 70)
        )));
    }
    Ok(format!("\"{name}\""))
}

/// How PostgreSQL spells a filter: `jsonb` operators, lists as `text[]`.
struct Pg<'a> {
    metadata: &'a str,
}

impl SqlDialect for Pg<'_> {
    fn key(&self, key: &str) -> String {
        key.to_owned()
    }
    fn text(&self, key: &str) -> String {
        format!("({} ->> {key}::text)", self.metadata)
    }
    fn number(&self, key: &str) -> String {
        format!(
            "(CASE WHEN jsonb_typeof({m} -> {key}::text) = 'number' THEN ({m} ->> {key}::text)::numeric END)",
            m = self.metadata
        )
    }
    fn contains(&self, key: &str, list: &str) -> String {
        format!(
            "COALESCE(({} -> {key}::text) ?| {list}::text[], FALSE)",
            self.metadata
        )
    }
    fn one_of(&self, value: &str, list: &str) -> String {
        format!("{value} = ANY({list}::text[])")
    }
}

fn bind_filter<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    binds: &'q [Bind],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    for b in binds {
        query = match b {
            Bind::Text(t) => query.bind(t.as_str()),
            Bind::Number(n) => query.bind(*n),
            Bind::Texts(ts) => query.bind(ts.clone()),
        };
    }
    query
}

impl PgVectorStore {
    /// `options` plus the settings nodekit's searches need, sent when a
    /// connection starts (no round trip): pgvector's HNSW search breadth
    /// (`hnsw.ef_search`, 200). [`PgVectorStore::postgres`] makes its pool
    /// with them; give them to a pool of your own
    /// ([`Postgres::from_pool`]), or each search through the index sets
    /// the breadth first, in a transaction of its own (three round trips
    /// more; pgvector's default breadth, 40, would find fewer of the
    /// nearest documents and never more than 40).
    pub fn session_options(options: PgConnectOptions) -> PgConnectOptions {
        // A placeholder setting until pgvector loads, then its own.
        options.options([("hnsw.ef_search", EF_SEARCH)])
    }

    /// A pool to `config`'s server with nodekit's policy
    /// ([`Postgres::new`]) whose sessions search as widely as the store
    /// needs ([`PgVectorStore::session_options`]).
    pub fn postgres(config: &PostgresConfig) -> Result<Postgres> {
        Ok(Postgres::from_options(PgVectorStore::session_options(
            config.options()?,
        )))
    }

    /// The same pool, the one `pools` shares (a node's:
    /// [`SupplyContext::pools`](nodekit_core::node::SupplyContext::pools)).
    pub fn shared_postgres(pools: &SharedPools, config: &PostgresConfig) -> Result<Postgres> {
        Postgres::shared_with(pools, config, "pgvector", PgVectorStore::session_options)
    }

    /// The store in `pg`'s database; creates the extension, the table (and
    /// the collection's) when missing, and with
    /// [`PgVectorOptions::in_process_index`] the table's version trigger.
    /// A pool from [`PgVectorStore::postgres`] is the one nodekit's
    /// searches are fastest on.
    pub async fn open(pg: &Postgres, options: PgVectorOptions) -> Result<PgVectorStore> {
        pg.check()
            .await
            .map_err(nodekit_core::vector_store::VectorStoreError::Store)?;
        let pool = pg.pool().clone();
        let c = &options.columns;
        let mut store = PgVectorStore {
            table: quoted("table name", &options.table)?,
            id: quoted("column name", &c.id)?,
            vector: quoted("column name", &c.vector)?,
            content: quoted("column name", &c.content)?,
            metadata: quoted("column name", &c.metadata)?,
            pool,
            options,
            collection_id: None,
            indexed: Arc::default(),
            copyable: false,
            widen: false,
            mirrored: None,
        };
        store.ensure().await?;
        if let Some((name, table)) = store.options.collection.clone() {
            store.collection_id = Some(store.collection(&name, &table).await?);
        }
        store.copyable = store.has_n8n_types().await?;
        store.widen = store.narrow_sessions().await?;
        if store.options.in_process_index {
            if store.options.distance != Distance::Cosine {
                return Err(store_error(
                    "the in-process index measures cosine distance: use it with Distance::Cosine, \
                     or turn it off to search with pgvector's index",
                ));
            }
            let mirrored = Mirrored::new(&store).await?;
            store.install(&mirrored).await?;
            store.mirrored = Some(Arc::new(mirrored));
        }
        Ok(store)
    }

    /// Whether the in-process graph ([`PgVectorOptions::in_process_index`])
    /// is loading, catching up with another writer's change, or has
    /// vectors waiting to go into it (scanned exactly meanwhile); `false`
    /// without a graph. The graph is made by the first unfiltered search
    /// once the table holds vectors; searches are answered meanwhile.
    pub fn indexing(&self) -> bool {
        self.mirrored
            .as_ref()
            .and_then(|m| m.graph())
            .is_some_and(|g| g.busy())
    }

    /// Whether the pool's sessions search less widely than nodekit's
    /// searches need (pgvector's default breadth is 40), with a warning
    /// that says how to avoid the extra round trips this costs.
    async fn narrow_sessions(&self) -> Result<bool> {
        let breadth: Option<String> =
            sqlx::query_scalar("SELECT current_setting('hnsw.ef_search', true)")
                .fetch_one(&self.pool)
                .await
                .map_err(db_error)?;
        let narrow = breadth
            .and_then(|b| b.parse::<u32>().ok())
            .is_none_or(|b| b < EF_SEARCH);
        if narrow {
            tracing::warn!(
                "vector store: the pool's sessions search pgvector's HNSW index with a breadth \
                 under {EF_SEARCH}; each search sets it first (three round trips more): make the \
                 pool with PgVectorStore::postgres to avoid that"
            );
        }
        Ok(narrow)
    }

    /// Whether the table's columns have the types of n8n's layout, the
    /// only ones `COPY`'s binary rows are written for (a table made
    /// elsewhere may differ: its documents are inserted as text).
    async fn has_n8n_types(&self) -> Result<bool> {
        let mut wanted = vec![
            (self.options.columns.id.as_str(), "uuid"),
            (self.options.columns.content.as_str(), "text"),
            (self.options.columns.metadata.as_str(), "jsonb"),
            (self.options.columns.vector.as_str(), "vector"),
        ];
        if self.collection_id.is_some() {
            wanted.push(("collection_id", "uuid"));
        }
        let names: Vec<&str> = wanted.iter().map(|(name, _)| *name).collect();
        let types: Vec<(String, String)> = sqlx::query_as(
            "SELECT a.attname::text, t.typname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
             WHERE a.attrelid = to_regclass($1) AND a.attname = ANY($2) AND a.attnum > 0 AND NOT a.attisdropped",
        )
        .bind(&self.table)
        .bind(names)
        .fetch_all(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(wanted
            .iter()
            .all(|(name, typ)| types.iter().any(|(n, t)| n == name && t == typ)))
    }

    /// The extension and the table (LangChain's DDL, which n8n runs for
    /// every client too).
    async fn ensure(&self) -> Result<()> {
        let has = || async {
            sqlx::query_scalar::<_, bool>(
                "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')",
            )
            .fetch_one(&self.pool)
            .await
            .map_err(db_error)
        };
        if !has().await? {
            // Another connection may create it meanwhile: then it is there.
            if let Err(e) = sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS vector")
                .execute(&self.pool)
                .await
                && !has().await?
            {
                return Err(store_error(format!(
                    "PostgreSQL: the pgvector extension is missing and cannot be created ({e});                      install it (`CREATE EXTENSION vector` as a superuser)"
                )));
            }
        }
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS {t} ({id} uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY, \
             {content} text, {metadata} jsonb, {vector} vector)",
            t = self.table,
            id = self.id,
            content = self.content,
            metadata = self.metadata,
            vector = self.vector,
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// The collection's uuid (created when missing, with LangChain's DDL).
    async fn collection(&self, name: &str, table: &str) -> Result<String> {
        let ctable = quoted("collection table name", table)?;
        let raw = |name: &str| name.trim_matches('"').to_owned();
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS {ctable} (uuid uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY, \
             name character varying, cmetadata jsonb);
             CREATE INDEX IF NOT EXISTS \"idx_{c}_name\" ON {ctable} (name);
             ALTER TABLE {t} ADD COLUMN IF NOT EXISTS collection_id uuid;",
            c = raw(&ctable),
            t = self.table,
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        let fk = format!("{}_collection_id_fkey", raw(&self.table));
        let has_fk: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = $1 AND conrelid = to_regclass($2))",
        )
        .bind(&fk)
        .bind(&self.table)
        .fetch_one(&self.pool)
        .await
        .map_err(db_error)?;
        if !has_fk {
            let add = format!(
                "ALTER TABLE {t} ADD CONSTRAINT \"{fk}\" FOREIGN KEY (collection_id) \
                 REFERENCES {ctable}(uuid) ON DELETE CASCADE",
                t = self.table
            );
            if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(add))
                .execute(&self.pool)
                .await
                && !e.to_string().contains("already exists")
            {
                return Err(db_error(e));
            }
        }
        let find = format!("SELECT uuid::text FROM {ctable} WHERE name = $1");
        if let Some(id) = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(find))
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(db_error)?
        {
            return Ok(id);
        }
        let create = format!(
            "INSERT INTO {ctable} (uuid, name, cmetadata) VALUES (gen_random_uuid(), $1, NULL) RETURNING uuid::text"
        );
        sqlx::query_scalar(sqlx::AssertSqlSafe(create))
            .bind(name)
            .fetch_one(&self.pool)
            .await
            .map_err(db_error)
    }

    /// `AND collection_id = $n` when the store has a collection, and the
    /// number of the next placeholder.
    fn in_collection(&self, n: usize) -> (String, usize) {
        match self.collection_id {
            Some(_) => (format!(" AND collection_id = ${n}::uuid"), n + 1),
            None => (String::new(), n),
        }
    }

    /// [`PgVectorStore::in_collection`] and `filter` as SQL, its
    /// placeholders after the collection's.
    fn scoped(&self, filter: &Filter, n: usize) -> (String, SqlFilter) {
        let (scope, next) = self.in_collection(n);
        let pg = Pg {
            metadata: &self.metadata,
        };
        (scope, filter.to_sql(&pg, next))
    }

    async fn dims(&self) -> Result<Option<usize>> {
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        self.dims_on(&mut conn).await
    }

    /// The length of the table's vectors (of the first one found).
    async fn dims_on(&self, conn: &mut PgConnection) -> Result<Option<usize>> {
        let (scope, _) = self.in_collection(1);
        let sql = format!(
            "SELECT vector_dims({v}) FROM {t} WHERE {v} IS NOT NULL{scope} LIMIT 1",
            v = self.vector,
            t = self.table
        );
        let mut query = sqlx::query_scalar::<_, i32>(sqlx::AssertSqlSafe(sql));
        if let Some(id) = &self.collection_id {
            query = query.bind(id.as_str());
        }
        let dims = query.fetch_optional(conn).await.map_err(db_error)?;
        Ok(dims.map(|d| d as usize))
    }

    async fn add_now(&self, entries: &[Entry]) -> Result<Vec<String>> {
        let Some(first) = entries.first() else {
            return Ok(Vec::new());
        };
        // One connection for the whole add (a pool made without
        // `pool_options` checks each one it hands out with a round trip).
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        let dims = match self.dims_on(&mut conn).await? {
            Some(d) => d,
            None => first.vector.len(),
        };
        for e in entries {
            check_vector(dims, &e.vector)?;
        }
        let mut ids = Vec::with_capacity(entries.len());
        for e in entries {
            ids.push(match &e.document.id {
                Some(id) => uuid::Uuid::parse_str(id).map_err(|_| {
                    store_error(format!(
                        "document id {:?} is not a UUID, which a PGVector table's ids are",
                        nodekit_core::error::shorten(id, 60)
                    ))
                })?,
                // Time-ordered: the primary key's index takes them at its
                // end instead of all over.
                None => uuid::Uuid::now_v7(),
            });
        }
        // Past pgvector's 16,000 dimensions or PostgreSQL's 1 GB field, the
        // text rows get the server's own error.
        let copy = self.copyable
            && dims <= 16_000
            && entries
                .iter()
                .all(|e| e.document.id.is_none() && e.document.page_content.len() < 1 << 30);
        let (written, written_ids) = last_of_each_id(entries, &ids);
        let graph = self.loaded_graph();
        let mut tx = conn.begin().await.map_err(db_error)?;
        if copy {
            self.copy(&mut tx, &written, &written_ids).await?;
        } else {
            self.insert(&mut tx, &written, &written_ids).await?;
        }
        let landing = match &graph {
            Some((mirrored, graph)) => {
                let stamp = self.stamp(mirrored, &mut tx).await?;
                let rows = written_ids
                    .iter()
                    .zip(written.iter())
                    .map(|(id, e)| (*id, e.vector.clone()))
                    .collect();
                graph.land(stamp, rows)
            }
            None => None,
        };
        tx.commit().await.map_err(db_error)?;
        if let Some(landing) = landing {
            landing.landed(&[]);
        }
        Ok(ids.iter().map(uuid::Uuid::to_string).collect())
    }

    /// Writes documents as text rows, `ROWS_PER_INSERT` a statement (in the
    /// caller's transaction); a document whose id is in the table replaces
    /// it.
    async fn insert(
        &self,
        conn: &mut PgConnection,
        entries: &[Entry],
        ids: &[uuid::Uuid],
    ) -> Result<()> {
        let collection = self.collection_id.as_deref();
        // With collections, a document added again under its id moves to
        // this store's collection.
        let (cc, cv, cu) = if collection.is_some() {
            (
                ", collection_id",
                ", $5::uuid",
                ", collection_id = excluded.collection_id",
            )
        } else {
            ("", "", "")
        };
        let sql = format!(
            "INSERT INTO {t} ({id}, {content}, {metadata}, {vector}{cc})
             SELECT i::uuid, c, m::jsonb, v::vector{cv}
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS r(i, c, m, v)
             ON CONFLICT ({id}) DO UPDATE SET {content} = excluded.{content},
               {metadata} = excluded.{metadata}, {vector} = excluded.{vector}{cu}",
            t = self.table,
            id = self.id,
            content = self.content,
            metadata = self.metadata,
            vector = self.vector,
        );
        for (chunk, chunk_ids) in entries
            .chunks(ROWS_PER_INSERT)
            .zip(ids.chunks(ROWS_PER_INSERT))
        {
            let contents: Vec<String> = chunk
                .iter()
                .map(|e| pg_text(&e.document.page_content).into_owned())
                .collect();
            let metadata: Vec<String> = chunk
                .iter()
                .map(|e| Value::Object(e.document.metadata.clone()).to_string())
                .collect();
            let vectors: Vec<String> = chunk.iter().map(|e| pg_vector(&e.vector)).collect();
            let chunk_ids: Vec<String> = chunk_ids.iter().map(uuid::Uuid::to_string).collect();
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .bind(chunk_ids)
                .bind(contents)
                .bind(metadata)
                .bind(vectors);
            if let Some(c) = collection {
                query = query.bind(c);
            }
            query.execute(&mut *conn).await.map_err(db_error)?;
        }
        Ok(())
    }

    /// Writes new documents (their ids just made, so none is in the table)
    /// with one `COPY` in binary form: PostgreSQL parses neither numbers
    /// nor vectors, and the rows are one statement, all or none.
    async fn copy(
        &self,
        conn: &mut PgConnection,
        entries: &[Entry],
        ids: &[uuid::Uuid],
    ) -> Result<()> {
        let mut columns = format!(
            "{}, {}, {}, {}",
            self.id, self.content, self.metadata, self.vector
        );
        let collection = match &self.collection_id {
            Some(c) => {
                columns.push_str(", collection_id");
                Some(
                    uuid::Uuid::parse_str(c)
                        .map_err(|e| db_error(sqlx::Error::Decode(Box::new(e))))?,
                )
            }
            None => None,
        };
        let mut rows =
            BinaryRows::new(entries.len(), entries.first().map_or(0, |e| e.vector.len()));
        for (e, id) in entries.iter().zip(ids) {
            rows.row(if collection.is_some() { 5 } else { 4 });
            rows.field(id.as_bytes());
            rows.field(pg_text(&e.document.page_content).as_bytes());
            rows.jsonb(&e.document.metadata);
            rows.vector(&e.vector);
            if let Some(c) = &collection {
                rows.field(c.as_bytes());
            }
        }
        let sql = format!(
            "COPY {t} ({columns}) FROM STDIN (FORMAT binary)",
            t = self.table
        );
        let mut copy = conn.copy_in_raw(&sql).await.map_err(db_error)?;
        if let Err(e) = copy.send(rows.finish()).await {
            let _ = copy.abort("nodekit could not send the rows").await;
            return Err(db_error(e));
        }
        copy.finish().await.map_err(db_error)?;
        Ok(())
    }

    /// Creates the HNSW index for `dims`-long vectors when missing and the
    /// table is large enough; whether unfiltered searches can use it.
    async fn indexed(&self, dims: usize) -> Result<bool> {
        if !self.options.hnsw_index {
            return Ok(false);
        }
        let raw_table = self.table.trim_matches('"');
        let raw_vector = self.vector.trim_matches('"');
        let ops = self.options.distance.ops();
        if self.indexed.get() == Some(&dims) {
            return Ok(true);
        }
        let name: String = format!("{raw_table}_{raw_vector}_hnsw_{dims}_{ops}")
            .chars()
            .take(63)
            .collect();
        // Found in the table's schema (the search path), like the table.
        let exists: bool = sqlx::query_scalar("SELECT to_regclass(quote_ident($1)) IS NOT NULL")
            .bind(&name)
            .fetch_one(&self.pool)
            .await
            .map_err(db_error)?;
        if !exists {
            let count = format!(
                "SELECT count(*) FROM (SELECT 1 FROM {} LIMIT {INDEX_FROM}) s",
                self.table
            );
            let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(count))
                .fetch_one(&self.pool)
                .await
                .map_err(db_error)?;
            // A search of the wrong length builds nothing.
            if n < INDEX_FROM || self.dims().await? != Some(dims) {
                return Ok(false);
            }
            tracing::info!(index = %name, "vector store: creating pgvector's HNSW index");
            let ddl = format!(
                "CREATE INDEX IF NOT EXISTS \"{name}\" ON {t} USING hnsw (({v}::vector({dims})) {ops})",
                t = self.table,
                v = self.vector,
            );
            // Vectors of other lengths in the table make the cast fail: scan instead.
            if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
                .execute(&self.pool)
                .await
            {
                tracing::warn!(error = %e, "vector store: cannot create the HNSW index; searches scan the table");
                return Ok(false);
            }
        }
        let _ = self.indexed.set(dims);
        Ok(true)
    }

    async fn search_now(&self, vector: &[f32], k: usize, filter: &Filter) -> Result<Vec<Found>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        // One round trip: the query's length is taken for the table's, and
        // only a failing search asks what the table holds.
        if filter.is_empty()
            && let Some(found) = self.search_graph(vector, k).await?
        {
            return Ok(found);
        }
        let dims = vector.len();
        // pgvector's HNSW search returns at most `ef_search` rows: a larger
        // `k` scans.
        let indexed = filter.is_empty() && k <= EF_SEARCH as usize && self.indexed(dims).await?;
        let found = match self.query(vector, k, filter, dims, indexed).await {
            Ok(found) => found,
            Err(e) => {
                if let Some(held) = self.dims().await? {
                    check_dimensions(held, dims, "a vector")?;
                }
                return Err(e);
            }
        };
        // The index filters a collection after its search: it may come back
        // short of `k`, and the exact scan then answers.
        if indexed && found.len() < k && self.collection_id.is_some() {
            return self.query(vector, k, filter, dims, false).await;
        }
        Ok(found)
    }

    async fn query(
        &self,
        vector: &[f32],
        k: usize,
        filter: &Filter,
        dims: usize,
        indexed: bool,
    ) -> Result<Vec<Found>> {
        let op = self.options.distance.operator();
        // The index's expression when it answers, else the column.
        let measured = if indexed {
            format!("{}::vector({dims})", self.vector)
        } else {
            self.vector.clone()
        };
        let (scope, sql) = self.scoped(filter, 3);
        let text = format!(
            "SELECT {id}::text, {content}, {metadata}, {measured} {op} $1::vector({dims}) AS _distance
             FROM {t} WHERE {vector} IS NOT NULL{scope} AND {cond}
             ORDER BY {measured} {op} $1::vector({dims}) LIMIT $2",
            id = self.id,
            content = self.content,
            metadata = self.metadata,
            vector = self.vector,
            t = self.table,
            cond = sql.condition,
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(text))
            .bind(VectorParam(vector))
            .bind(k as i64);
        if let Some(id) = &self.collection_id {
            query = query.bind(id.as_str());
        }
        let query = bind_filter(query, &sql.binds);
        let rows = if indexed && self.widen {
            let mut tx = self.pool.begin().await.map_err(db_error)?;
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "SET LOCAL hnsw.ef_search = {EF_SEARCH}"
            )))
            .execute(&mut *tx)
            .await
            .map_err(db_error)?;
            let rows = query.fetch_all(&mut *tx).await.map_err(db_error)?;
            tx.commit().await.map_err(db_error)?;
            rows
        } else {
            query.fetch_all(&self.pool).await.map_err(db_error)?
        };
        Ok(rows.iter().filter_map(|r| found(r, 0)).collect())
    }

    /// The graph and where it lives, when it is loaded.
    fn loaded_graph(&self) -> Option<(Arc<Mirrored>, Arc<mirror::Mirror>)> {
        let mirrored = self.mirrored.clone()?;
        let graph = mirrored.graph().filter(|g| g.loaded())?.clone();
        Some((mirrored, graph))
    }

    /// The in-process graph's answer to an unfiltered search, when the
    /// graph holds the table as the statement reading the rows sees it;
    /// `None` otherwise (and it catches up in the background). When the
    /// graph moved while the statement ran (a write of this process landed,
    /// or a catch-up ended), or some of the rows it found were not in the
    /// table (a write of this process landing), it is asked again, up to
    /// [`GRAPH_TRIES`] times in all, before pgvector answers.
    async fn search_graph(&self, vector: &[f32], k: usize) -> Result<Option<Vec<Found>>> {
        let (Some(mirrored), Some(graph)) = (&self.mirrored, self.graph().await?) else {
            return Ok(None);
        };
        let mut wanted = k;
        // The table's version the last statement saw.
        let mut seen = None;
        for attempt in 1..=GRAPH_TRIES {
            let Some((versions, ids)) = graph.nearest(vector, wanted)? else {
                return Ok(None);
            };
            let asked = ids.len();
            let ids: Vec<String> = ids.iter().map(uuid::Uuid::to_string).collect();
            let rows = sqlx::query(sqlx::AssertSqlSafe(mirrored.search.clone()))
                .bind(&self.table)
                .bind(VectorParam(vector))
                .bind(ids)
                .bind(versions.landing_xid())
                .fetch_all(&self.pool)
                .await
                .map_err(db_error)?;
            seen = rows.first().and_then(|r| r.get::<Option<i64>, _>(0));
            let mut found: Vec<Found> = rows.iter().filter_map(|r| found(r, 1)).collect();
            if versions.holds(seen) && found.len() >= k.min(asked) {
                // Nearest first; ties in the graph's order.
                found.sort_by(|a, b| a.score.total_cmp(&b.score));
                found.truncate(k);
                return Ok(Some(found));
            }
            // Asked again only when the graph moved meanwhile or a write
            // is landing; then for more rows than `k`, so that those
            // the landing write holds in the graph and not in the table
            // leave enough.
            let now = graph.versions();
            if attempt == GRAPH_TRIES || (now == versions && !now.lands()) {
                break;
            }
            if now.lands() {
                wanted = 2 * k;
            }
        }
        // Only a table ahead of the graph makes it catch up: retries that
        // ran out while this process's writes kept landing, or an answer
        // left short by a landing write, do not.
        if graph.versions().behind(seen) {
            self.catch_up(&graph);
        }
        Ok(None)
    }

    async fn delete_now(&self, which: &Selection) -> Result<u64> {
        let graph = self.loaded_graph();
        // With a graph, the ids deleted come back, to leave it too.
        let returning = match graph {
            Some(_) => format!(" RETURNING {}::text", self.id),
            None => String::new(),
        };
        let (filter, sql) = match which {
            Selection::Ids(_) => {
                let (scope, _) = self.in_collection(2);
                let text = format!(
                    "DELETE FROM {t} WHERE {id} = ANY($1::uuid[]){scope}{returning}",
                    t = self.table,
                    id = self.id
                );
                (None, text)
            }
            Selection::Filter(filter) => {
                let (scope, sql) = self.scoped(filter, 1);
                let text = format!(
                    "DELETE FROM {t} WHERE TRUE{scope} AND {cond}{returning}",
                    t = self.table,
                    cond = sql.condition
                );
                (Some(sql), text)
            }
        };
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Selection::Ids(ids) = which {
            let ids: Vec<String> = ids
                .iter()
                .filter(|id| uuid::Uuid::parse_str(id).is_ok())
                .cloned()
                .collect();
            query = query.bind(ids);
        }
        if let Some(c) = &self.collection_id {
            query = query.bind(c.as_str());
        }
        if let Some(filter) = &filter {
            query = bind_filter(query, &filter.binds);
        }
        let Some((mirrored, graph)) = graph else {
            let done = query.execute(&self.pool).await.map_err(db_error)?;
            return Ok(done.rows_affected());
        };
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        let mut tx = conn.begin().await.map_err(db_error)?;
        let rows = query.fetch_all(&mut *tx).await.map_err(db_error)?;
        let stamp = self.stamp(&mirrored, &mut tx).await?;
        let landing = graph.land(stamp, Vec::new());
        tx.commit().await.map_err(db_error)?;
        let gone: Vec<uuid::Uuid> = rows
            .iter()
            .filter_map(|r| uuid::Uuid::parse_str(r.get::<&str, _>(0)).ok())
            .collect();
        if let Some(landing) = landing {
            landing.landed(&gone);
        }
        Ok(rows.len() as u64)
    }
}

/// The document and distance in a row's columns `at..at + 4` (id, text,
/// metadata, distance); `None` for a row without text or distance.
fn found(r: &PgRow, at: usize) -> Option<Found> {
    let metadata = match r.get::<Option<Value>, _>(at + 2) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    Some(Found {
        document: Document {
            page_content: r.get::<Option<String>, _>(at + 1)?,
            metadata,
            id: Some(r.get::<Option<String>, _>(at)?),
        },
        score: r.get::<Option<f64>, _>(at + 3)?,
    })
}

/// pgvector's binary form of a vector: its length and a zero (16 bits
/// each), then each element as a 32-bit float, all big-endian.
fn binary_vector(vector: &[f32], out: &mut Vec<u8>) {
    out.reserve(4 + 4 * vector.len());
    out.extend_from_slice(&(vector.len() as i16).to_be_bytes());
    out.extend_from_slice(&0i16.to_be_bytes());
    for x in vector {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

/// A vector bound as a `vector` parameter in pgvector's binary form, so
/// the server parses no text.
struct VectorParam<'a>(&'a [f32]);

impl sqlx::Type<sqlx::Postgres> for VectorParam<'_> {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        sqlx::postgres::PgTypeInfo::with_name("vector")
    }
}

impl sqlx::Encode<'_, sqlx::Postgres> for VectorParam<'_> {
    fn encode_by_ref(
        &self,
        buf: &mut sqlx::postgres::PgArgumentBuffer,
    ) -> std::result::Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        binary_vector(self.0, buf);
        Ok(sqlx::encode::IsNull::No)
    }
}

/// A document's text as PostgreSQL can hold it: without NULs (LangChain
/// strips them too).
fn pg_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        text.replace('\0', "").into()
    } else {
        text.into()
    }
}

/// Rows in `COPY`'s binary form: a header, then per row its field count
/// and each field's length and bytes (big-endian numbers), then a trailer.
struct BinaryRows(Vec<u8>);

impl BinaryRows {
    fn new(rows: usize, dims: usize) -> BinaryRows {
        let mut out = Vec::with_capacity(19 + rows * (100 + 4 * dims) + 2);
        out.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
        out.extend_from_slice(&0i32.to_be_bytes()); // flags
        out.extend_from_slice(&0i32.to_be_bytes()); // header extension
        BinaryRows(out)
    }

    fn row(&mut self, fields: i16) {
        self.0.extend_from_slice(&fields.to_be_bytes());
    }

    fn field(&mut self, bytes: &[u8]) {
        self.length(bytes.len());
        self.0.extend_from_slice(bytes);
    }

    /// A length (the caller keeps fields under 1 GB, PostgreSQL's limit).
    fn length(&mut self, len: usize) {
        self.0.extend_from_slice(&(len as i32).to_be_bytes());
    }

    /// `jsonb`'s binary form: version 1, then the JSON text.
    fn jsonb(&mut self, metadata: &Map<String, Value>) {
        let at = self.0.len();
        self.0.extend_from_slice(&[0; 4]);
        self.0.push(1);
        serde_json::to_writer(&mut self.0, metadata).expect("a JSON map serializes");
        let len = (self.0.len() - at - 4) as i32;
        self.0[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// pgvector's binary form: dimensions and a zero (16 bits each), then
    /// each element as a 32-bit float.
    fn vector(&mut self, vector: &[f32]) {
        self.length(4 + 4 * vector.len());
        binary_vector(vector, &mut self.0);
    }

    fn finish(mut self) -> Vec<u8> {
        self.0.extend_from_slice(&(-1i16).to_be_bytes());
        self.0
    }
}

impl VectorStore for PgVectorStore {
    fn scores(&self) -> Scores {
        Scores::Distance
    }

    fn dimensions(&self) -> BoxFuture<'_, Result<Option<usize>>> {
        Box::pin(self.dims())
    }

    fn add<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, Result<Vec<String>>> {
        Box::pin(self.add_now(entries))
    }

    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Found>>> {
        Box::pin(self.search_now(vector, k, filter))
    }

    fn delete<'a>(&'a self, which: &'a Selection) -> BoxFuture<'a, Result<u64>> {
        Box::pin(self.delete_now(which))
    }

    fn metadata_keys(&self) -> BoxFuture<'_, Result<Option<Vec<String>>>> {
        Box::pin(async move {
            let (scope, _) = self.in_collection(1);
            let sql = format!(
                "SELECT DISTINCT k FROM (SELECT {m} FROM {t} WHERE jsonb_typeof({m}) = 'object'{scope} LIMIT 10000) s,
                 jsonb_object_keys(s.{m}) AS k ORDER BY k",
                m = self.metadata,
                t = self.table
            );
            let mut query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql));
            if let Some(c) = &self.collection_id {
                query = query.bind(c.as_str());
            }
            Ok(Some(query.fetch_all(&self.pool).await.map_err(db_error)?))
        })
    }
}

-- Agent memory, SQLite. Keep in step with ../postgres/0001_init.sql:
-- same tables, columns, constraints and indexes; only the types differ.
-- Times are Unix milliseconds (INTEGER); JSON is text.

CREATE TABLE IF NOT EXISTS nodekit_am_threads (
    id          TEXT    NOT NULL PRIMARY KEY,
    resource_id TEXT    NOT NULL,
    title       TEXT,
    metadata    TEXT    NOT NULL DEFAULT '{}',
    last_seq    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
-- threads(resource): newest first.
CREATE INDEX IF NOT EXISTS nodekit_am_threads_resource_idx
    ON nodekit_am_threads (resource_id, updated_at);

CREATE TABLE IF NOT EXISTS nodekit_am_messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    role        TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    token_count INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
-- Every thread query (recent, range, count, token sums) walks this index;
-- its uniqueness is the last guard against a duplicated seq.
CREATE UNIQUE INDEX IF NOT EXISTS nodekit_am_messages_thread_seq_idx
    ON nodekit_am_messages (thread_id, seq);

CREATE TABLE IF NOT EXISTS nodekit_am_working_memory (
    resource_id TEXT    NOT NULL PRIMARY KEY,
    content     TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS nodekit_am_observations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    generation  INTEGER NOT NULL,
    content     TEXT    NOT NULL,
    token_count INTEGER NOT NULL,
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS nodekit_am_observations_thread_idx
    ON nodekit_am_observations (thread_id, generation, first_seq);

CREATE TABLE IF NOT EXISTS nodekit_am_plans (
    thread_id   TEXT    NOT NULL PRIMARY KEY,
    resource_id TEXT    NOT NULL,
    plan        TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS nodekit_am_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS nodekit_am_events_thread_idx
    ON nodekit_am_events (thread_id, id);

CREATE TABLE IF NOT EXISTS nodekit_am_embeddings (
    message_id  INTEGER NOT NULL PRIMARY KEY,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    dims        INTEGER NOT NULL,
    vector      BLOB    NOT NULL
);
CREATE INDEX IF NOT EXISTS nodekit_am_embeddings_thread_idx
    ON nodekit_am_embeddings (thread_id);

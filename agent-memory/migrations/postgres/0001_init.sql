-- Agent memory, PostgreSQL. Keep in step with ../sqlite/0001_init.sql:
-- same tables, columns, constraints and indexes; only the types differ.
-- Times are Unix milliseconds (BIGINT); JSON is JSONB.

CREATE TABLE IF NOT EXISTS nodekit_am_threads (
    id          TEXT    NOT NULL PRIMARY KEY,
    resource_id TEXT    NOT NULL,
    title       TEXT,
    metadata    JSONB   NOT NULL DEFAULT '{}',
    last_seq    BIGINT  NOT NULL DEFAULT 0,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
-- threads(resource): newest first.
CREATE INDEX IF NOT EXISTS nodekit_am_threads_resource_idx
    ON nodekit_am_threads (resource_id, updated_at);

CREATE TABLE IF NOT EXISTS nodekit_am_messages (
    id          BIGSERIAL PRIMARY KEY,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    seq         BIGINT  NOT NULL,
    role        TEXT    NOT NULL,
    content     JSONB   NOT NULL,
    token_count BIGINT  NOT NULL,
    created_at  BIGINT  NOT NULL
);
-- Every thread query (recent, range, count, token sums) walks this index;
-- its uniqueness is the last guard against a duplicated seq.
CREATE UNIQUE INDEX IF NOT EXISTS nodekit_am_messages_thread_seq_idx
    ON nodekit_am_messages (thread_id, seq);

CREATE TABLE IF NOT EXISTS nodekit_am_working_memory (
    resource_id TEXT    NOT NULL PRIMARY KEY,
    content     TEXT    NOT NULL,
    version     BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);

CREATE TABLE IF NOT EXISTS nodekit_am_observations (
    id          BIGSERIAL PRIMARY KEY,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    generation  BIGINT  NOT NULL,
    content     TEXT    NOT NULL,
    token_count BIGINT  NOT NULL,
    first_seq   BIGINT  NOT NULL,
    last_seq    BIGINT  NOT NULL,
    created_at  BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS nodekit_am_observations_thread_idx
    ON nodekit_am_observations (thread_id, generation, first_seq);

CREATE TABLE IF NOT EXISTS nodekit_am_plans (
    thread_id   TEXT    NOT NULL PRIMARY KEY,
    resource_id TEXT    NOT NULL,
    plan        JSONB   NOT NULL,
    updated_at  BIGINT  NOT NULL
);

CREATE TABLE IF NOT EXISTS nodekit_am_events (
    id          BIGSERIAL PRIMARY KEY,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    payload     JSONB   NOT NULL,
    created_at  BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS nodekit_am_events_thread_idx
    ON nodekit_am_events (thread_id, id);

CREATE TABLE IF NOT EXISTS nodekit_am_embeddings (
    message_id  BIGINT  NOT NULL PRIMARY KEY,
    thread_id   TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    dims        BIGINT  NOT NULL,
    vector      BYTEA   NOT NULL
);
CREATE INDEX IF NOT EXISTS nodekit_am_embeddings_thread_idx
    ON nodekit_am_embeddings (thread_id);

-- Semantic recall (tier 5). Keep in step with ../sqlite/0002_recall.sql.
--
-- One row: the vector dimension and the index kind, fixed when the first
-- vector is written (the embedder decides the dimension). The vector index
-- itself is created then too, since its column type carries the dimension:
-- SQLite: the sqlite-vec virtual table nodekit_am_vec (vec0);
-- PostgreSQL: nodekit_am_vectors with a pgvector HNSW index, or nothing when
-- the vector extension is missing (exact search over nodekit_am_embeddings).
-- nodekit_am_embeddings keeps one row per indexed message (dims 0: nothing
-- to embed); messages without one are indexed on the next run.
CREATE TABLE IF NOT EXISTS nodekit_am_recall_meta (
    id          BIGINT NOT NULL PRIMARY KEY CHECK (id = 1),
    dims        BIGINT NOT NULL,
    index_kind  TEXT    NOT NULL,
    created_at  BIGINT NOT NULL
);

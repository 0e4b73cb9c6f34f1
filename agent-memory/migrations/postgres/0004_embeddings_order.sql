-- The graphs of long threads read a thread's vectors in message-id order,
-- from a given id on (recall/ann.rs). SQLite needs no such index: its
-- index on thread_id already holds the rowid, which is message_id.
CREATE INDEX IF NOT EXISTS nodekit_am_embeddings_thread_message_idx
    ON nodekit_am_embeddings (thread_id, message_id);

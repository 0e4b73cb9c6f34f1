//! What the nodes one owner supplies share: connection pools above all.
//!
//! A node that reaches a database through a credential asks its context
//! ([`SupplyContext::pools`](super::SupplyContext::pools)) for the pool of
//! that credential's server instead of opening one of its own (a store's
//! crate does it for the node, as
//! `nodekit::postgres::Postgres::shared` does). The owner
//! of the contexts decides how far the sharing goes: the n8n bridge keeps
//! one set for its whole process, so every execution, session and node
//! with the same credential uses the same connections; a workflow run
//! keeps one set for the run. A context made on its own has a set of its
//! own.
//!
//! A pool belongs to the Tokio runtime that uses it first, so a set is
//! never process-wide by itself: whoever owns the runtime owns the set.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use crate::error::Result;

/// Values shared by the nodes one owner supplies, by key: connection pools
/// by server and login, and what was made once over them (a store whose
/// tables were checked). Any crate keeps its own kinds of value here; a
/// key's type and the value's type together say which map a value is in,
/// so two crates never meet. Cloning shares the set.
#[derive(Clone, Default)]
pub struct SharedPools {
    maps: Arc<Mutex<Maps>>,
}

/// One `HashMap<K, V>` per pair of key and value types.
type Maps = HashMap<(TypeId, TypeId), Box<dyn Any + Send>>;

/// A value made once; concurrent first uses wait for the one making it.
type Once<T> = Arc<tokio::sync::OnceCell<Arc<T>>>;

impl SharedPools {
    /// The value kept under `key`, or the one `make` makes, kept from then
    /// on. A kept value `reuse` refuses (a closed pool) is made again. A
    /// failure is not kept: the next use tries again. `make` runs while the
    /// set is locked, so it should be quick (a lazy pool opens nothing).
    pub fn get_or_make<K, V>(
        &self,
        key: K,
        reuse: impl FnOnce(&V) -> bool,
        make: impl FnOnce() -> Result<V>,
    ) -> Result<V>
    where
        K: Hash + Eq + Send + 'static,
        V: Clone + Send + 'static,
    {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        let map = maps
            .entry((TypeId::of::<K>(), TypeId::of::<V>()))
            .or_insert_with(|| Box::new(HashMap::<K, V>::new()))
            .downcast_mut::<HashMap<K, V>>()
            .expect("the map of K and V");
        if let Some(kept) = map.get(&key).filter(|kept| reuse(kept)) {
            return Ok(kept.clone());
        }
        let made = make()?;
        map.insert(key, made.clone());
        Ok(made)
    }

    /// What `make` makes under `key` (e.g. a store's server, login, table
    /// and options), made on first use and kept while the set lives: later
    /// uses get the same value without making it again, and concurrent
    /// first uses wait for the one making it. A failure is not kept: the
    /// next use tries again.
    pub async fn made_once<K, T, Fut>(&self, key: K, make: impl FnOnce() -> Fut) -> Result<Arc<T>>
    where
        K: Hash + Eq + Send + 'static,
        T: Send + Sync + 'static,
        Fut: Future<Output = Result<T>>,
    {
        let cell: Once<T> = self.get_or_make(key, |_| true, || Ok(Once::<T>::default()))?;
        let made = cell.get_or_try_init(|| async { make().await.map(Arc::new) });
        Ok(made.await?.clone())
    }
}

impl std::fmt::Debug for SharedPools {
    // The keys hold passwords: only how many kinds of value are kept.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds = self.maps.lock().unwrap_or_else(|e| e.into_inner()).len();
        f.debug_struct("SharedPools")
            .field("kinds", &kinds)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn values_are_kept_by_key_and_type_and_shared_by_clones() {
        let pools = SharedPools::default();
        let one = pools.get_or_make("a", |_| true, || Ok(1u32)).unwrap();
        let kept = pools
            .clone()
            .get_or_make("a", |_| true, || Ok(2u32))
            .unwrap();
        // Another value type under the same key is another map.
        let other = pools.get_or_make("a", |_| true, || Ok(3u64)).unwrap();
        assert_eq!((one, kept, other), (1, 1, 3));
        // A value `reuse` refuses is made again.
        assert_eq!(pools.get_or_make("a", |v| *v != 1, || Ok(4u32)).unwrap(), 4);
        // A failure is not kept.
        let failed = pools.get_or_make(
            "b",
            |_| true,
            || Err::<u32, _>(crate::Error::other(std::io::Error::other("no"))),
        );
        assert!(failed.is_err());
        assert_eq!(pools.get_or_make("b", |_| true, || Ok(5u32)).unwrap(), 5);
        assert_eq!(format!("{pools:?}"), "SharedPools { kinds: 2 }");
    }

    #[tokio::test]
    async fn made_once_makes_once_for_concurrent_uses() {
        let pools = SharedPools::default();
        let made = std::sync::atomic::AtomicU32::new(0);
        let make = || async {
            made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::task::yield_now().await;
            Ok(String::from("store"))
        };
        let (a, b) = tokio::join!(pools.made_once(1u8, make), pools.made_once(1u8, make));
        assert!(Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1);
        let failed = pools
            .made_once(2u8, || async {
                Err::<String, _>(crate::Error::other(std::io::Error::other("down")))
            })
            .await;
        assert!(failed.is_err());
        assert_eq!(*pools.made_once(2u8, make).await.unwrap(), "store");
    }
}

//! A small persistent (immutable, structurally shared) hash map from string ids to values.
//!
//! Why not `HashMap`: the writer builds the next tenant state from the current one for every
//! toggle, and cloning a 100k-entry `HashMap` costs milliseconds. Here an insert copies only the
//! path to the changed leaf (a 16-way trie over a 64-bit hash, depth ≈ log16(n)), so a toggle
//! costs about the same at 1k and at 100k zones, and readers keep using the old version untouched.

use std::sync::Arc;

use crate::hashing::hash_bytes;

const BITS: u32 = 4;
const WIDTH: usize = 1 << BITS;
const MASK: u64 = (WIDTH as u64) - 1;

/// Keys are zone/account ids that only the operator's config or authorized API callers choose,
/// so the fast non-keyed [`hash_bytes`] is enough.
fn hash_key(key: &str) -> u64 {
    hash_bytes(key.as_bytes())
}

#[derive(Debug)]
enum Node<V> {
    /// Entries whose full 64-bit hashes are equal (almost always exactly one).
    Leaf {
        hash: u64,
        entries: Vec<(Box<str>, V)>,
    },
    Branch(Box<[Option<Arc<Node<V>>>; WIDTH]>),
}

/// Persistent map: `clone` is O(1), `insert`/`remove` return a new map sharing all untouched
/// nodes with the old one, `get` walks at most ⌈64/4⌉ levels without allocating.
#[derive(Debug)]
pub struct PMap<V> {
    root: Option<Arc<Node<V>>>,
    len: usize,
}

impl<V> Clone for PMap<V> {
    fn clone(&self) -> Self {
        PMap {
            root: self.root.clone(),
            len: self.len,
        }
    }
}

impl<V> Default for PMap<V> {
    fn default() -> Self {
        PMap { root: None, len: 0 }
    }
}

impl<V: Clone> PMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        let hash = hash_key(key);
        let mut node = self.root.as_deref()?;
        let mut shift = 0u32;
        loop {
            match node {
                Node::Leaf { hash: h, entries } => {
                    if *h != hash {
                        return None;
                    }
                    return entries.iter().find(|(k, _)| &**k == key).map(|(_, v)| v);
                }
                Node::Branch(children) => {
                    node = children[((hash >> shift) & MASK) as usize].as_deref()?;
                    shift += BITS;
                }
            }
        }
    }

    /// A new map with `key` set to `value`.
    pub fn insert(&self, key: &str, value: V) -> Self {
        let hash = hash_key(key);
        let (root, added) = insert_at(self.root.as_ref(), hash, 0, key, value);
        PMap {
            root: Some(root),
            len: self.len + usize::from(added),
        }
    }

    /// A new map without `key` (the same map, shared, when `key` is absent).
    pub fn remove(&self, key: &str) -> Self {
        let Some(root) = self.root.as_ref() else {
            return self.clone();
        };
        match remove_at(root, hash_key(key), 0, key) {
            Removal::Absent => self.clone(),
            Removal::Replaced(root) => PMap {
                root,
                len: self.len - 1,
            },
        }
    }

    /// Every entry, in hash order (stable for a given set of keys, not sorted).
    pub fn iter(&self) -> Iter<'_, V> {
        Iter {
            stack: self.root.as_deref().into_iter().collect(),
            leaf: [].iter(),
        }
    }
}

fn insert_at<V: Clone>(
    node: Option<&Arc<Node<V>>>,
    hash: u64,
    shift: u32,
    key: &str,
    value: V,
) -> (Arc<Node<V>>, bool) {
    let Some(node) = node else {
        return (
            Arc::new(Node::Leaf {
                hash,
                entries: vec![(key.into(), value)],
            }),
            true,
        );
    };
    match &**node {
        Node::Leaf { hash: h, entries } if *h == hash => {
            let mut entries = entries.clone();
            let added = match entries.iter_mut().find(|(k, _)| &**k == key) {
                Some(slot) => {
                    slot.1 = value;
                    false
                }
                None => {
                    entries.push((key.into(), value));
                    true
                }
            };
            (Arc::new(Node::Leaf { hash, entries }), added)
        }
        Node::Leaf { hash: h, .. } => {
            // Split: the existing leaf moves one level down under a fresh branch.
            let mut children: Box<[Option<Arc<Node<V>>>; WIDTH]> = Box::default();
            children[((*h >> shift) & MASK) as usize] = Some(node.clone());
            let branch = Arc::new(Node::Branch(children));
            insert_at(Some(&branch), hash, shift, key, value)
        }
        Node::Branch(children) => {
            let index = ((hash >> shift) & MASK) as usize;
            let (child, added) =
                insert_at(children[index].as_ref(), hash, shift + BITS, key, value);
            let mut children = children.clone();
            children[index] = Some(child);
            (Arc::new(Node::Branch(children)), added)
        }
    }
}

enum Removal<V> {
    Absent,
    Replaced(Option<Arc<Node<V>>>),
}

fn remove_at<V: Clone>(node: &Arc<Node<V>>, hash: u64, shift: u32, key: &str) -> Removal<V> {
    match &**node {
        Node::Leaf { hash: h, entries } => {
            if *h != hash || !entries.iter().any(|(k, _)| &**k == key) {
                return Removal::Absent;
            }
            let entries: Vec<_> = entries
                .iter()
                .filter(|(k, _)| &**k != key)
                .cloned()
                .collect();
            if entries.is_empty() {
                Removal::Replaced(None)
            } else {
                Removal::Replaced(Some(Arc::new(Node::Leaf { hash, entries })))
            }
        }
        Node::Branch(children) => {
            let index = ((hash >> shift) & MASK) as usize;
            let Some(child) = children[index].as_ref() else {
                return Removal::Absent;
            };
            match remove_at(child, hash, shift + BITS, key) {
                Removal::Absent => Removal::Absent,
                Removal::Replaced(child) => {
                    let mut children = children.clone();
                    children[index] = child;
                    if children.iter().all(Option::is_none) {
                        Removal::Replaced(None)
                    } else {
                        Removal::Replaced(Some(Arc::new(Node::Branch(children))))
                    }
                }
            }
        }
    }
}

/// Iterator over `(key, value)` of a [`PMap`].
pub struct Iter<'a, V> {
    stack: Vec<&'a Node<V>>,
    leaf: std::slice::Iter<'a, (Box<str>, V)>,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a str, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((k, v)) = self.leaf.next() {
                return Some((k, v));
            }
            match self.stack.pop()? {
                Node::Leaf { entries, .. } => self.leaf = entries.iter(),
                Node::Branch(children) => self
                    .stack
                    .extend(children.iter().rev().flatten().map(|c| &**c)),
            }
        }
    }
}

impl<V: Clone> FromIterator<(String, V)> for PMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        iter.into_iter()
            .fold(PMap::new(), |map, (k, v)| map.insert(&k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn insert_get_remove_match_a_hashmap() {
        let mut model = HashMap::new();
        let mut map = PMap::new();
        for i in 0..5000u32 {
            let key = format!("{:032x}", i.wrapping_mul(2_654_435_761));
            map = map.insert(&key, i);
            model.insert(key, i);
        }
        assert_eq!(map.len(), model.len());
        for (k, v) in &model {
            assert_eq!(map.get(k), Some(v));
        }
        assert_eq!(map.iter().count(), model.len());
        let before = map.clone();
        for (i, k) in model.keys().enumerate().filter(|(i, _)| i % 2 == 0) {
            map = map.remove(k);
            assert_eq!(map.get(k), None, "entry {i}");
        }
        assert_eq!(map.len(), model.len() - model.len().div_ceil(2));
        // The old version is untouched.
        assert_eq!(before.len(), model.len());
        for (k, v) in &model {
            assert_eq!(before.get(k), Some(v));
        }
        assert_eq!(map.remove("absent").len(), map.len());
    }

    #[test]
    fn overwrite_keeps_len_and_removing_everything_empties() {
        let map = PMap::new().insert("a", 1).insert("a", 2).insert("b", 3);
        assert_eq!(map.len(), 2);
        assert_eq!(map.get("a"), Some(&2));
        let empty = map.remove("a").remove("b");
        assert!(empty.is_empty());
        assert_eq!(empty.iter().count(), 0);
        assert_eq!(empty.get("a"), None);
    }
}

//! [`Shared`]: one process-wide copy of a value many objects hold alike (the
//! scheduling part of the pods of one template, the allocatable of the nodes
//! of one instance type), read through `Deref`. A handle is one pointer;
//! copies no object uses any more are dropped from the table as it grows
//! (as [`super::Interned`] does for strings).

use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, Mutex, PoisonError};

/// A value shared with every equal [`Shared`] value of its type.
pub struct Shared<T: Interning>(Arc<T>);

/// A type whose values [`Shared`] keeps one copy of: it names its table.
pub trait Interning: Eq + Hash + Sized + Send + Sync + 'static {
    /// The process-wide table of this type's shared values.
    fn table() -> &'static Mutex<Table<Self>>;
}

/// The shared values of one type, and how many were live at the last sweep.
pub struct Table<T> {
    values: HashSet<Arc<T>>,
    kept: usize,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            values: HashSet::new(),
            kept: 0,
        }
    }
}

impl<T: Interning> Shared<T> {
    /// The shared copy of `value`.
    pub fn new(value: T) -> Self {
        let mut table = T::table().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = table.values.get(&value) {
            return Shared(Arc::clone(found));
        }
        if table.values.len() > 2 * table.kept.max(1024) {
            table.values.retain(|v| Arc::strong_count(v) > 1);
            table.kept = table.values.len();
        }
        let value = Arc::new(value);
        table.values.insert(Arc::clone(&value));
        Shared(value)
    }
}

impl<T: Interning> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Interning> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: Interning> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: Interning> Eq for Shared<T> {}

impl<T: Interning + Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

impl<T: Interning + fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Implements [`Interning`] for a type with a table of its own.
macro_rules! interning {
    ($ty:ty) => {
        impl $crate::model::shared::Interning for $ty {
            fn table() -> &'static std::sync::Mutex<$crate::model::shared::Table<Self>> {
                static TABLE: std::sync::LazyLock<
                    std::sync::Mutex<$crate::model::shared::Table<$ty>>,
                > = std::sync::LazyLock::new(Default::default);
                &TABLE
            }
        }
    };
}
pub(crate) use interning;

impl<T: Interning + serde::Serialize> serde::Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Interning + serde::Deserialize<'de>> serde::Deserialize<'de> for Shared<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Shared::new)
    }
}

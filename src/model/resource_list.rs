//! `ResourceList`: amounts of cpu, memory, ephemeral storage, pods and the
//! scalar resources the scheduler counts (extended resources such as
//! `nvidia.com/gpu`, `hugepages-…`, `attachable-volumes-…`), in whole
//! canonical units (see [`super::quantity`]).
//!
//! It is the scheduler's `framework.Resource` (`pkg/scheduler/framework/types.go`):
//! names it does not count (`storage`, `kubernetes.io/…` other than the four
//! above) are not kept. On the wire it is the API's map of quantity strings;
//! an entry that does not parse is skipped, so a field rollcall does not need
//! never rejects an object.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Interned;
use super::quantity::{format_bytes_exact, format_milli, parse_milli, parse_units};
use super::shared::interning;

// Nodes of one instance type share their allocatable.
interning!(ResourceList);

/// The resource names with a field of their own.
pub const CPU: &str = "cpu";
/// Memory, in bytes.
pub const MEMORY: &str = "memory";
/// Ephemeral storage, in bytes.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// The pod count (a node's `allocatable.pods`).
pub const PODS: &str = "pods";

/// Amounts per resource; absent means zero.
///
/// Scalar resources sit in a boxed slice sorted by name: 16 bytes and no
/// allocation when empty, which is every pod without a GPU or hugepages
/// (an inline vector would cost 8 bytes more on each of 130,000 pods).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceList {
    /// Millicores.
    pub cpu: i64,
    /// Bytes.
    pub memory: i64,
    /// Bytes.
    pub ephemeral_storage: i64,
    /// A count.
    pub pods: i64,
    scalars: Box<[(Interned, i64)]>,
}

impl ResourceList {
    /// The amount of `name` (cpu in millicores), zero when absent.
    pub fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.cpu,
            MEMORY => self.memory,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            PODS => self.pods,
            _ => self
                .scalars
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .map_or(0, |i| self.scalars[i].1),
        }
    }

    /// Sets `name` to `amount` (cpu in millicores). Names the scheduler does
    /// not count are ignored.
    pub fn set(&mut self, name: &str, amount: i64) {
        match name {
            CPU => self.cpu = amount,
            MEMORY => self.memory = amount,
            EPHEMERAL_STORAGE => self.ephemeral_storage = amount,
            PODS => self.pods = amount,
            _ if is_scalar_resource(name) => {
                match self.scalars.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
                    Ok(i) => self.scalars[i].1 = amount,
                    Err(i) => {
                        let mut scalars = std::mem::take(&mut self.scalars).into_vec();
                        scalars.insert(i, (Interned::new(name), amount));
                        self.scalars = scalars.into_boxed_slice();
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds `other` entry by entry (saturating: hostile amounts never panic).
    pub fn add(&mut self, other: &ResourceList) {
        self.combine(other, i64::saturating_add);
    }

    /// Subtracts `other` entry by entry (saturating).
    pub fn sub(&mut self, other: &ResourceList) {
        self.combine(other, i64::saturating_sub);
    }

    /// Keeps the larger amount of each entry.
    pub fn max(&mut self, other: &ResourceList) {
        self.combine(other, i64::max);
    }

    fn combine(&mut self, other: &ResourceList, op: impl Fn(i64, i64) -> i64) {
        self.cpu = op(self.cpu, other.cpu);
        self.memory = op(self.memory, other.memory);
        self.ephemeral_storage = op(self.ephemeral_storage, other.ephemeral_storage);
        self.pods = op(self.pods, other.pods);
        for (name, amount) in &other.scalars {
            let combined = op(self.get(name), *amount);
            self.set(name, combined);
        }
    }

    /// Whether every amount is zero.
    pub fn is_zero(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The non-zero entries as (name, amount): cpu, memory, ephemeral
    /// storage, pods, then the scalar resources by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> {
        [
            (CPU, self.cpu),
            (MEMORY, self.memory),
            (EPHEMERAL_STORAGE, self.ephemeral_storage),
            (PODS, self.pods),
        ]
        .into_iter()
        .chain(self.scalars.iter().map(|(n, a)| (n.as_str(), *a)))
        .filter(|(_, amount)| *amount != 0)
    }

    /// Reads one API entry (`"cpu": "500m"`); false when it does not parse or
    /// names a resource the scheduler does not count.
    pub fn set_quantity(&mut self, name: &str, quantity: &str) -> bool {
        let parsed = if name == CPU {
            parse_milli(quantity)
        } else {
            parse_units(quantity)
        };
        match parsed {
            Ok(amount) if is_counted(name) => {
                self.set(name, amount);
                true
            }
            _ => false,
        }
    }
}

/// The amount of `name` as the API writes it exactly (`1500m`, `512Mi`, `3`).
pub fn exact_quantity(name: &str, amount: i64) -> String {
    match name {
        CPU => format_milli(amount),
        MEMORY | EPHEMERAL_STORAGE => format_bytes_exact(amount),
        _ if name.starts_with("hugepages-") => format_bytes_exact(amount),
        _ => amount.to_string(),
    }
}

/// The amount of `name` for a person to read (`500m`, `1.5Gi`, `3`).
pub fn display_quantity(name: &str, amount: i64) -> String {
    match name {
        CPU => format_milli(amount),
        MEMORY | EPHEMERAL_STORAGE => super::quantity::format_bytes(amount),
        _ if name.starts_with("hugepages-") => super::quantity::format_bytes(amount),
        _ => amount.to_string(),
    }
}

fn is_counted(name: &str) -> bool {
    matches!(name, CPU | MEMORY | EPHEMERAL_STORAGE | PODS) || is_scalar_resource(name)
}

/// Upstream's `IsScalarResourceName`: an extended resource (a
/// domain-qualified name outside `kubernetes.io/`, not a quota `requests.`
/// name), hugepages, or attachable volumes.
pub fn is_scalar_resource(name: &str) -> bool {
    let extended =
        name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.");
    extended || name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")
}

impl Serialize for ResourceList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (name, amount) in self.iter() {
            map.serialize_entry(name, &exact_quantity(name, amount))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ResourceList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = ResourceList;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of resource quantities")
    }

    fn visit_unit<E>(self) -> Result<ResourceList, E> {
        Ok(ResourceList::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResourceList, A::Error> {
        let mut list = ResourceList::default();
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if let QuantityText(Some(text)) = map.next_value()? {
                list.set_quantity(&name, &text);
            }
        }
        Ok(list)
    }
}

/// A quantity as it appears in JSON: a string, or a bare number some tools
/// write; anything else is kept as nothing.
struct QuantityText(Option<String>);

impl<'de> Deserialize<'de> for QuantityText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(QuantityText(
            match serde_json::Value::deserialize(deserializer)? {
                serde_json::Value::String(text) => Some(text),
                serde_json::Value::Number(number) => Some(number.to_string()),
                _ => None,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_api_map_and_skips_what_it_cannot_read() {
        let list: ResourceList = serde_json::from_value(json!({
            "cpu": "3900m", "memory": "15Gi", "pods": "110", "ephemeral-storage": "100Gi",
            "nvidia.com/gpu": "4", "hugepages-1Gi": "2Gi", "storage": "1Ti",
            "kubernetes.io/batch": "1", "broken": "x", "example.com/bad": "1.2.3", "example.com/n": {"nested": 1}
        }))
        .unwrap();
        assert_eq!(list.cpu, 3_900);
        assert_eq!(list.memory, 15 << 30);
        assert_eq!(list.pods, 110);
        assert_eq!(list.ephemeral_storage, 100 << 30);
        assert_eq!(list.get("nvidia.com/gpu"), 4);
        assert_eq!(list.get("hugepages-1Gi"), 2 << 30);
        assert_eq!(
            list.get("storage"),
            0,
            "not a resource the scheduler counts"
        );
        assert_eq!(list.iter().count(), 6);
        let again: ResourceList =
            serde_json::from_value(serde_json::to_value(&list).unwrap()).unwrap();
        assert_eq!(again, list);
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            json!({"cpu": "3900m", "memory": "15Gi", "ephemeral-storage": "100Gi", "pods": "110", "hugepages-1Gi": "2Gi", "nvidia.com/gpu": "4"})
        );
        let null: ResourceList = serde_json::from_value(json!(null)).unwrap();
        assert!(null.is_zero());
    }

    #[test]
    fn arithmetic_is_entrywise_and_never_overflows() {
        let mut a = ResourceList::default();
        a.set(CPU, 500);
        a.set("nvidia.com/gpu", 1);
        let mut b = ResourceList::default();
        b.set(CPU, 200);
        b.set(MEMORY, 64);
        b.set("example.com/fpga", 2);
        let mut sum = a.clone();
        sum.add(&b);
        assert_eq!(
            (
                sum.cpu,
                sum.memory,
                sum.get("nvidia.com/gpu"),
                sum.get("example.com/fpga")
            ),
            (700, 64, 1, 2)
        );
        sum.sub(&b);
        assert_eq!(sum.get("example.com/fpga"), 0);
        assert_eq!((sum.cpu, sum.get("nvidia.com/gpu")), (500, 1));
        let mut peak = a.clone();
        peak.max(&b);
        assert_eq!((peak.cpu, peak.memory), (500, 64));
        let mut huge = ResourceList::default();
        huge.set(CPU, i64::MAX);
        huge.add(&a);
        assert_eq!(huge.cpu, i64::MAX);
        assert!(ResourceList::default().is_zero());
        assert_eq!(display_quantity(MEMORY, 3 << 29), "1.5Gi");
        assert_eq!(display_quantity(CPU, 120), "120m");
    }
}

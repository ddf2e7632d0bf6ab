// MARK: - What a layer above keeps with a connection or a column layout

/// A key for a value that a layer above this module keeps with a
/// ``Connection`` or a ``ColumnLayout``, its `Owner`: the key's type is the
/// key and fixes the value's type, as with SwiftUI's `EnvironmentKey`. The
/// value is made by ``makeValue(for:)`` the first time the key is used on
/// an owner, and kept with it: by a layout for good, by a connection until
/// it forgets its prepared statements.
///
/// ```swift
/// final class Names { var byText: [String: String] = [:] }
/// enum NamesKey: LayerCacheKey {
///     static func makeValue(for connection: Connection) -> Names { Names() }
/// }
/// connection[cache: NamesKey.self].byText["a"] = "b"
/// ```
package protocol LayerCacheKey {
    associatedtype Owner: AnyObject
    associatedtype Value: AnyObject
    /// The value for `owner`, made when it has none yet.
    static func makeValue(for owner: Owner) -> Value
}

/// The values kept under ``LayerCacheKey``s for one owner, found by the
/// identity of the key's type: the first key used in a slot of its own,
/// any other in a list searched in order (a layer uses one or two keys).
/// A value is made while no access to the storage is held, so that making
/// it may use the owner's other keys. Not synchronized: the owner is used
/// by one thread at a time.
struct LayerCaches {
    private var firstKey: ObjectIdentifier?
    private var firstValue: AnyObject?
    private var others: [(key: ObjectIdentifier, value: AnyObject)] = []

    /// The value kept under `key`, `nil` when there is none.
    func value<Key: LayerCacheKey>(_ key: Key.Type) -> Key.Value? {
        let id = ObjectIdentifier(key)
        // Only `Key.Value`s are stored under `Key` (`add`): the cast holds.
        if firstKey == id, let firstValue { return unsafeDowncast(firstValue, to: Key.Value.self) }
        for entry in others where entry.key == id { return unsafeDowncast(entry.value, to: Key.Value.self) }
        return nil
    }

    /// Keeps `value` under `key`, which holds nothing yet.
    mutating func add<Key: LayerCacheKey>(_ value: Key.Value, for key: Key.Type) {
        let id = ObjectIdentifier(key)
        if firstKey == nil {
            firstKey = id
            firstValue = value
        } else {
            others.append((id, value))
        }
    }

    /// The value under `key` in `owner`'s store (`caches`), made and kept
    /// when there is none. It is made with no access to the store held,
    /// so that making it may use the owner's other keys; should that have
    /// kept a value under `key` meanwhile, that one is kept and returned.
    static func value<Key: LayerCacheKey>(
        _ key: Key.Type, of owner: Key.Owner, in caches: ReferenceWritableKeyPath<Key.Owner, LayerCaches>
    ) -> Key.Value {
        if let value = owner[keyPath: caches].value(key) { return value }
        let value = Key.makeValue(for: owner)
        if let made = owner[keyPath: caches].value(key) { return made }
        owner[keyPath: caches].add(value, for: key)
        return value
    }

    /// Forgets every value.
    mutating func removeAll() {
        firstKey = nil
        firstValue = nil
        others = []
    }
}

extension Connection {
    /// The value a layer above keeps under `key` for this connection, made
    /// on first use and forgotten with the prepared statements (when the
    /// statement cache is emptied, or the connection closed), since what is
    /// derived from them may no longer hold. Used by the thread that uses
    /// the connection, which is one at a time.
    package subscript<Key: LayerCacheKey>(cache key: Key.Type) -> Key.Value where Key.Owner == Connection {
        // A value already kept is read directly: a key path's access costs more than the search.
        if let value = layerCaches.value(key) { return value }
        return LayerCaches.value(key, of: self, in: \.layerCaches)
    }
}

extension ColumnLayout {
    /// The value a layer above keeps under `key` for these columns (how a
    /// row is written as JSON, say), made on first use and kept with the
    /// layout, which a prepared statement keeps: built once per statement
    /// rather than per query. Used by the thread that uses the connection
    /// whose results have this layout, which is one at a time.
    package subscript<Key: LayerCacheKey>(cache key: Key.Type) -> Key.Value where Key.Owner == ColumnLayout {
        if let value = layerCaches.value(key) { return value }
        return LayerCaches.value(key, of: self, in: \.layerCaches)
    }
}

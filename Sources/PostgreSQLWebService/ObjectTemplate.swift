import JSONStreaming
import PostgreSQL

/// How one row becomes a JSON object, worked out once per result.
///
/// Keys come in column order, then the embeds. A dotted label
/// (`"name.first"`) puts its value in a nested object (`"name": {"first": ...}`);
/// all labels with the same prefix share that object. The keys are escaped
/// once, here, not for every row.
///
/// ```swift
/// // columns id, name.first, name.last; embed "titles"
/// // → {"id":1,"name":{"first":"Ada","last":"Lovelace"},"titles":[...]}
/// ```
struct ObjectTemplate {
    /// One key of the object and what its value is. A struct rather than an
    /// enum with payloads: Swift keeps such an enum's case in spare bits of
    /// the payload's pointer, which LeakSanitizer then does not recognise,
    /// so the keys of a template cached until the process exits were
    /// reported as leaks.
    struct Entry {
        enum Kind {
            case column, object, embed
        }

        let kind: Kind
        /// The key, escaped, with its `:`, after `{` for the first entry and
        /// `,` for the others: one append per entry. The bytes lie in the
        /// template's `keyBytes`, which lives as long as the template: a
        /// pointer, not an array, so that appending a key costs no retain
        /// and release on every row.
        let key: UnsafeRawBufferPointer
        /// The result column (`.column`) or the embed (`.embed`).
        let index: Int
        /// How the column's values are written (`.column`).
        let format: PostgresJSON.Format?
        /// The nested object's entries (`.object`).
        let entries: [Entry]
    }

    let entries: [Entry]
    /// Whether the row is its one column's value alone (``valueMarker``):
    /// its entry's key is empty, and no braces are written around it.
    private let isValue: Bool

    /// The label of a column after which a result's columns are not
    /// written: they are there for embedded queries to bind from (a read
    /// request puts them after the members it selected).
    static let hiddenColumnsMarker = "\u{1}hidden"
    /// The label prefix of a column (its value unused) that marks where
    /// the embed of the index after it is written, among the columns
    /// (`"\u{2}0"`): a read request's `select` orders embeds and columns alike.
    static let embedMarker = "\u{2}"
    /// The same for an embed whose members are written among the row's own (a spread).
    static let spreadMarker = "\u{3}"

    /// The label of a result's one column whose value is written alone,
    /// without an object around it (a function's scalar result: `3`).
    static let valueMarker = "\u{4}value"

    /// The embed a marker column stands for, and whether it is spread.
    private static func embedPlace(_ label: String) -> (index: Int, isSpread: Bool)? {
        guard let first = label.unicodeScalars.first, first == "\u{2}" || first == "\u{3}",
            let index = Int(String(label.unicodeScalars.dropFirst()))
        else { return nil }
        return (index, first == "\u{3}")
    }

    /// Holds the bytes of every key of `entries`.
    private let keyBytes: KeyBytes

    /// - Parameters:
    ///   - columns: the columns to write, in order.
    ///   - firstColumn: the result column index of `columns[0]` (batch
    ///     results have a leading bookkeeping column).
    ///   - embedKeys: keys of the attached arrays, dotted like labels.
    init(columns: [Column], firstColumn: Int32 = 0, embedKeys: [String] = []) {
        let root = Node()
        var placed = Set<Int>()
        for (offset, column) in columns.enumerated() {
            if column.label == Self.hiddenColumnsMarker { break }
            if let (index, isSpread) = Self.embedPlace(column.label), index < embedKeys.count {
                placed.insert(index)
                if isSpread {
                    root.addSpread(index)
                } else {
                    root.insert(path: embedKeys[index], .embed(index: index))
                }
                continue
            }
            root.insert(path: column.label, .column(index: firstColumn + Int32(offset), type: column.type))
        }
        for (index, key) in embedKeys.enumerated() where !placed.contains(index) {
            root.insert(path: key, .embed(index: index))
        }
        keyBytes = KeyBytes(root.keyBytes())
        var offset = 0
        entries = root.entries(keyBytes, offset: &offset)
        isValue = entries.count == 1 && entries[0].key.isEmpty && entries[0].kind == .column
    }

    /// The keys' bytes, in one block of memory that lives as long as the template.
    private final class KeyBytes {
        let storage: UnsafeMutableRawBufferPointer

        init(_ bytes: [UInt8]) {
            storage = .allocate(byteCount: max(bytes.count, 1), alignment: 1)
            storage.copyBytes(from: bytes)
        }

        deinit {
            storage.deallocate()
        }
    }

    /// Writes the object for row `row` of `result`; `embed` writes the
    /// value (an array) of the embed with the given index.
    func write<Output: JSONOutput>(
        row: Int32, of result: QueryResult, options: JSONRenderingOptions, to output: inout Output,
        embed: (Int, inout Output) throws -> Void
    ) rethrows {
        try Self.write(
            entries, { result.bytes(row: row, column: Int32($0)) }, options: options, to: &output, braces: !isValue, embed: embed)
    }

    /// Writes the object for `row`; `embed` writes the value (an
    /// array) of the embed with the given index.
    func write<Output: JSONOutput>(
        _ row: Row, options: JSONRenderingOptions, to output: inout Output,
        embed: (Int, inout Output) throws -> Void
    ) rethrows {
        // Where the values are is decided once per row, not per value.
        switch row.values {
        case .wire(let values):
            try Self.write(entries, { values.bytes($0) }, options: options, to: &output, braces: !isValue, embed: embed)
        case .result(let result, let index):
            try Self.write(
                entries, { result.bytes(row: index, column: Int32($0)) }, options: options, to: &output, braces: !isValue, embed: embed)
        }
    }

    /// Writes the members of row `row` of `result` without the object's
    /// braces, for a row spread among its parent's members; `row` `nil`:
    /// each member `null`.
    func writeMembers<Output: JSONOutput>(
        row: Int32?, of result: QueryResult?, options: JSONRenderingOptions, to output: inout Output,
        embed: (Int, inout Output) throws -> Void
    ) rethrows {
        guard let row, let result else {
            return try Self.write(entries, { _ in nil }, options: options, to: &output, braces: false, embed: embed)
        }
        try Self.write(
            entries, { result.bytes(row: row, column: Int32($0)) }, options: options, to: &output, braces: false, embed: embed)
    }

    /// Writes, for each member, the array of its values in `rows` of
    /// `result`, without the object's braces (`"a":[1,2],"b":["x","y"]`):
    /// a to-many relationship spread among its parent's members.
    /// `embed(index, row)` writes an embed's value for one row.
    func writeArrays<Output: JSONOutput>(
        rows: [Int32], of result: QueryResult?, options: JSONRenderingOptions, to output: inout Output,
        embed: (Int, Int32, inout Output) -> Void
    ) {
        for position in entries.indices {
            let key = entries[position].key
            JSONWriter.appendRaw(position == 0 ? UnsafeRawBufferPointer(rebasing: key.dropFirst()) : key, to: &output)
            output.append(UInt8(ascii: "["))
            for (number, row) in rows.enumerated() {
                if number > 0 { output.append(UInt8(ascii: ",")) }
                guard let result else { continue }
                switch entries[position].kind {
                case .column:
                    if let bytes = result.bytes(row: row, column: Int32(entries[position].index)), let format = entries[position].format {
                        PostgresJSON.append(bytes, format: format, to: &output, options: options)
                    } else {
                        JSONWriter.appendNull(to: &output)
                    }
                case .object:
                    Self.write(entries[position].entries, { result.bytes(row: row, column: Int32($0)) }, options: options, to: &output) {
                        index, output in embed(index, row, &output)
                    }
                case .embed:
                    embed(entries[position].index, row, &output)
                }
            }
            output.append(UInt8(ascii: "]"))
        }
    }

    /// Writes the object for a row whose values `value(column)` gives (its
    /// text bytes, `nil` for NULL), without embeds.
    func write<Output: JSONOutput>(
        values value: (Int) -> UnsafeRawBufferPointer?, options: JSONRenderingOptions, to output: inout Output
    ) {
        Self.write(entries, value, options: options, to: &output, braces: !isValue) { _, _ in }
    }

    /// `value(column)` gives a column's text bytes, `nil` for NULL: a
    /// closure that is not kept, so that reading a value costs a call and
    /// no reference counting, wherever the row lies.
    /// Without `braces`, the members alone: the first key without its `{`,
    /// and no `}` (each member of a nested object keeps its own).
    private static func write<Output: JSONOutput>(
        _ entries: [Entry], _ value: (Int) -> UnsafeRawBufferPointer?, options: JSONRenderingOptions,
        to output: inout Output, braces: Bool = true, embed: (Int, inout Output) throws -> Void
    ) rethrows {
        if entries.isEmpty, braces { output.append(UInt8(ascii: "{")) }
        // By index, fields read in place: a copy of each entry (its two
        // arrays) would cost retains and releases on every row.
        for position in entries.indices {
            if !braces, position == 0 {
                JSONWriter.appendRaw(UnsafeRawBufferPointer(rebasing: entries[position].key.dropFirst()), to: &output)
            } else {
                JSONWriter.appendRaw(entries[position].key, to: &output)
            }
            switch entries[position].kind {
            case .column:
                if let bytes = value(entries[position].index),
                    let format = entries[position].format
                {
                    PostgresJSON.append(bytes, format: format, to: &output, options: options)
                } else {
                    JSONWriter.appendNull(to: &output)
                }
            case .object:
                try write(entries[position].entries, value, options: options, to: &output, embed: embed)
            case .embed:
                try embed(entries[position].index, &output)
            }
        }
        if braces { output.append(UInt8(ascii: "}")) }
    }

    // MARK: - Building

    private enum Leaf {
        case column(index: Int32, type: PostgresType)
        case embed(index: Int)
    }

    /// One level of the key tree while it is built.
    private final class Node {
        enum Child {
            case leaf(Leaf)
            case node(Node)
        }

        var keys: [String] = []
        var children: [String: Child] = [:]

        func insert(path: String, _ leaf: Leaf) {
            // Most labels have no dot: no need to split them (templates are built per block).
            guard path.utf8.contains(UInt8(ascii: ".")) else {
                add(path, .leaf(leaf))
                return
            }
            let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count > 1, !parts.contains(where: \.isEmpty) else {
                add(path, .leaf(leaf))
                return
            }
            var node = self
            for part in parts.dropLast() {
                switch node.children[part] {
                case .node(let next):
                    node = next
                case .leaf:
                    add(path, .leaf(leaf))  // "a" and "a.b" both present: keep the label whole
                    return
                case nil:
                    let next = Node()
                    node.add(part, .node(next))
                    node = next
                }
            }
            node.add(parts[parts.count - 1], .leaf(leaf))
        }

        private func add(_ key: String, _ child: Child) {
            if children[key] == nil { keys.append(key) }
            children[key] = child
        }

        /// The embed of `index` spread among this level's keys: its members
        /// are written after the separator alone.
        func addSpread(_ index: Int) {
            add(Self.spreadKey(index), .leaf(.embed(index: index)))
        }

        private static func spreadKey(_ index: Int) -> String { ObjectTemplate.spreadMarker + String(index) }

        /// A key as written: after `{` or `,`, escaped, with its `:`; a
        /// spread's, the separator alone.
        private static func written(_ key: String, position: Int) -> [UInt8] {
            if key == ObjectTemplate.valueMarker { return [] }
            var bytes: [UInt8] = [position == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")]
            if key.unicodeScalars.first == "\u{3}" { return bytes }
            JSONWriter.appendString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            return bytes
        }

        /// Every key of this level and those below, in the order `entries` takes them.
        func keyBytes() -> [UInt8] {
            var bytes: [UInt8] = []
            for (position, key) in keys.enumerated() {
                bytes += Self.written(key, position: position)
                if case .node(let node) = children[key] { bytes += node.keyBytes() }
            }
            return bytes
        }

        /// The entries, their keys in `storage` from `offset` on.
        func entries(_ storage: KeyBytes, offset: inout Int) -> [Entry] {
            // `add` keeps `keys` and `children` together: every key has its child.
            keys.enumerated().map { position, key in
                let count = Self.written(key, position: position).count
                let keyBytes = UnsafeRawBufferPointer(rebasing: storage.storage[offset..<(offset + count)])
                offset += count
                switch children[key]! {
                case .leaf(.column(let index, let type)):
                    return Entry(
                        kind: .column, key: keyBytes, index: Int(index), format: PostgresJSON.Format(type: type), entries: [])
                case .leaf(.embed(let index)):
                    return Entry(kind: .embed, key: keyBytes, index: index, format: nil, entries: [])
                case .node(let node):
                    return Entry(kind: .object, key: keyBytes, index: 0, format: nil, entries: node.entries(storage, offset: &offset))
                }
            }
        }
    }
}

// MARK: - Templates kept with a result's columns

/// The templates of one column layout, kept with it.
private final class ObjectTemplates {
    let plain: ObjectTemplate
    /// Templates with embeds, by embed keys.
    var byEmbedKeys: [[String]: ObjectTemplate] = [:]
    /// The template `objectTemplate(embeds:)` returned last, and its keys.
    var last: (keys: [String], template: ObjectTemplate)?

    init(columns: [Column]) {
        plain = ObjectTemplate(columns: columns)
    }
}

/// Where a column layout keeps its ``ObjectTemplates``.
private enum ObjectTemplatesKey: LayerCacheKey {
    static func makeValue(for layout: ColumnLayout) -> ObjectTemplates { ObjectTemplates(columns: layout.columns) }
}

extension ColumnLayout {
    private var templates: ObjectTemplates { self[cache: ObjectTemplatesKey.self] }

    /// How a row is written as a JSON object, built on first use.
    var objectTemplate: ObjectTemplate { templates.plain }

    /// How a row is written with the arrays of embeds `keys` after its columns.
    func objectTemplate(embedKeys keys: [String]) -> ObjectTemplate {
        let templates = self.templates
        if keys.isEmpty { return templates.plain }
        if let template = templates.byEmbedKeys[keys] { return template }
        let template = ObjectTemplate(columns: columns, embedKeys: keys)
        templates.byEmbedKeys[keys] = template
        return template
    }

    /// How a row is written with the values of `embeds` after its
    /// columns. The same embeds as last time (each request of a route
    /// embeds the same) are recognised without hashing their keys.
    func objectTemplate(embeds: [Query.Embed]) -> ObjectTemplate {
        let templates = self.templates
        if let last = templates.last, last.keys.elementsEqual(embeds, by: { $0 == $1.key }) {
            return last.template
        }
        let keys = embeds.map(\.key)
        let template = objectTemplate(embedKeys: keys)
        templates.last = (keys, template)
        return template
    }
}

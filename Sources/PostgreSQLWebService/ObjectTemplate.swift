import JSONStreaming
import PostgreSQL

/// How one row becomes a JSON object, worked out once per result.
///
/// Keys come in column order, then the attachments. A dotted label
/// (`"name.first"`) puts its value in a nested object (`"name": {"first": ...}`);
/// all labels with the same prefix share that object. The keys are escaped
/// once, here, not for every row.
///
/// ```swift
/// // columns id, name.first, name.last; attachment "titles"
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
            case column, object, attachment
        }

        let kind: Kind
        /// The key, escaped, with its `:`, after `{` for the first entry and
        /// `,` for the others: one append per entry. The bytes lie in the
        /// template's `keyBytes`, which lives as long as the template: a
        /// pointer, not an array, so that appending a key costs no retain
        /// and release on every row.
        let key: UnsafeRawBufferPointer
        /// The result column (`.column`) or the attachment (`.attachment`).
        let index: Int
        /// How the column's values are written (`.column`).
        let format: PostgresJSON.Format?
        /// The nested object's entries (`.object`).
        let entries: [Entry]
    }

    let entries: [Entry]

    /// The label of a column after which a result's columns are not
    /// written: they are there for attached queries to bind from
    /// (``Query/choosing(_:)`` puts them after the members a request selected).
    static let hiddenColumnsMarker = "\u{1}hidden"

    /// Holds the bytes of every key of `entries`.
    private let keyBytes: KeyBytes

    /// - Parameters:
    ///   - columns: the columns to write, in order.
    ///   - firstColumn: the result column index of `columns[0]` (batch
    ///     results have a leading bookkeeping column).
    ///   - attachmentKeys: keys of the attached arrays, dotted like labels.
    init(columns: [Column], firstColumn: Int32 = 0, attachmentKeys: [String] = []) {
        let root = Node()
        for (offset, column) in columns.enumerated() {
            if column.label == Self.hiddenColumnsMarker { break }
            root.insert(path: column.label, .column(index: firstColumn + Int32(offset), type: column.type))
        }
        for (index, key) in attachmentKeys.enumerated() {
            root.insert(path: key, .attachment(index: index))
        }
        keyBytes = KeyBytes(root.keyBytes())
        var offset = 0
        entries = root.entries(keyBytes, offset: &offset)
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

    /// Writes the object for row `row` of `result`; `attachment` writes the
    /// value (an array) of the attachment with the given index.
    func write<Output: JSONOutput>(
        row: Int32, of result: QueryResult, options: JSONRenderingOptions, to output: inout Output,
        attachment: (Int, inout Output) throws -> Void
    ) rethrows {
        try Self.write(entries, { result.bytes(row: row, column: Int32($0)) }, options: options, to: &output, attachment: attachment)
    }

    /// Writes the object for `row`; `attachment` writes the value (an
    /// array) of the attachment with the given index.
    func write<Output: JSONOutput>(
        _ row: Row, options: JSONRenderingOptions, to output: inout Output,
        attachment: (Int, inout Output) throws -> Void
    ) rethrows {
        // Where the values are is decided once per row, not per value.
        switch row.values {
        case .wire(let values):
            try Self.write(entries, { values.bytes($0) }, options: options, to: &output, attachment: attachment)
        case .result(let result, let index):
            try Self.write(entries, { result.bytes(row: index, column: Int32($0)) }, options: options, to: &output, attachment: attachment)
        }
    }

    /// Writes the object for a row whose values `value(column)` gives (its
    /// text bytes, `nil` for NULL), without attachments.
    func write<Output: JSONOutput>(
        values value: (Int) -> UnsafeRawBufferPointer?, options: JSONRenderingOptions, to output: inout Output
    ) {
        Self.write(entries, value, options: options, to: &output) { _, _ in }
    }

    /// `value(column)` gives a column's text bytes, `nil` for NULL: a
    /// closure that is not kept, so that reading a value costs a call and
    /// no reference counting, wherever the row lies.
    private static func write<Output: JSONOutput>(
        _ entries: [Entry], _ value: (Int) -> UnsafeRawBufferPointer?, options: JSONRenderingOptions,
        to output: inout Output, attachment: (Int, inout Output) throws -> Void
    ) rethrows {
        if entries.isEmpty { output.append(UInt8(ascii: "{")) }
        // By index, fields read in place: a copy of each entry (its two
        // arrays) would cost retains and releases on every row.
        for position in entries.indices {
            JSONWriter.appendRaw(entries[position].key, to: &output)
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
                try write(entries[position].entries, value, options: options, to: &output, attachment: attachment)
            case .attachment:
                try attachment(entries[position].index, &output)
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    // MARK: - Building

    private enum Leaf {
        case column(index: Int32, type: PostgresType)
        case attachment(index: Int)
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

        /// A key as written: after `{` or `,`, escaped, with its `:`.
        private static func written(_ key: String, position: Int) -> [UInt8] {
            var bytes: [UInt8] = [position == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")]
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
                case .leaf(.attachment(let index)):
                    return Entry(kind: .attachment, key: keyBytes, index: index, format: nil, entries: [])
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
    /// Templates with attachments, by attachment keys.
    var byAttachmentKeys: [[String]: ObjectTemplate] = [:]
    /// The template `objectTemplate(attachments:)` returned last, and its keys.
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

    /// How a row is written with the arrays of attachments `keys` after its columns.
    func objectTemplate(attachmentKeys keys: [String]) -> ObjectTemplate {
        let templates = self.templates
        if keys.isEmpty { return templates.plain }
        if let template = templates.byAttachmentKeys[keys] { return template }
        let template = ObjectTemplate(columns: columns, attachmentKeys: keys)
        templates.byAttachmentKeys[keys] = template
        return template
    }

    /// How a row is written with the arrays of `attachments` after its
    /// columns. The same attachments as last time (each request of a route
    /// attaches the same) are recognised without hashing their keys.
    func objectTemplate(attachments: [Attachment]) -> ObjectTemplate {
        let templates = self.templates
        if let last = templates.last, last.keys.elementsEqual(attachments, by: { $0 == $1.key }) {
            return last.template
        }
        let keys = attachments.map(\.key)
        let template = objectTemplate(attachmentKeys: keys)
        templates.last = (keys, template)
        return template
    }
}

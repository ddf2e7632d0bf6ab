extension JSONValue {
    /// An object's members, in the order they were added (or parsed); a
    /// name appears at most once, and is found without a search.
    ///
    /// ```swift
    /// var members: JSONValue.Members = ["type": "object"]
    /// members["required"] = ["id"]   // added after "type"
    /// members["type"] = "array"      // replaced where it stands
    /// ```
    public struct Members: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
        /// The members, in order.
        public private(set) var members: [(key: String, value: JSONValue)] = []
        /// The position of each member in `members`, by name.
        private var positions: [String: Int] = [:]

        /// Members from `members` in their order; a repeated name keeps its
        /// first place and its last value.
        ///
        /// ```swift
        /// JSONValue.Members([(key: "a", value: 1), (key: "b", value: 2)])
        /// ```
        public init(_ members: some Sequence<(key: String, value: JSONValue)> = []) {
            for member in members { self[member.key] = member.value }
        }

        public init(dictionaryLiteral elements: (String, JSONValue)...) {
            self.init(elements.lazy.map { (key: $0.0, value: $0.1) })
        }

        /// Whether there are no members.
        public var isEmpty: Bool { members.isEmpty }

        /// How many members there are.
        public var count: Int { members.count }

        /// The members' names, in order.
        public var keys: [String] { members.map(\.key) }

        public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
            members.makeIterator()
        }

        /// The member named `key`. Setting a value replaces the member where
        /// it stands, or adds it at the end; setting `nil` removes it.
        public subscript(key: String) -> JSONValue? {
            get { positions[key].map { members[$0].value } }
            set {
                if let position = positions[key] {
                    if let newValue {
                        members[position].value = newValue
                    } else {
                        members.remove(at: position)
                        positions[key] = nil
                        for later in position..<members.count { positions[members[later].key] = later }
                    }
                } else if let newValue {
                    _ = add(key, newValue)
                }
            }
        }

        /// Adds `value` as the member `key` at the end, unless there is one
        /// of that name already; whether it was added.
        mutating func add(_ key: String, _ value: JSONValue) -> Bool {
            guard positions[key] == nil else { return false }
            positions[key] = members.count
            members.append((key, value))
            return true
        }

        public static func == (left: Members, right: Members) -> Bool {
            left.members.count == right.members.count
                && zip(left.members, right.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(members.count)
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// Whether this is an object with no members.
    ///
    /// ```swift
    /// JSONValue.object([:]).isEmptyObject   // true
    /// ```
    public var isEmptyObject: Bool {
        switch self {
        case .object(let members): members.isEmpty
        default: false
        }
    }

    /// The member `key` of an object, `nil` for any other
    /// value. Setting it on an object replaces or adds the member (at the
    /// end of an ordered object); setting `nil` removes it. Setting a member
    /// of a value that is not an object is a programming error.
    ///
    /// ```swift
    /// var document: JSONValue = ["openapi": "3.1.0"]
    /// document["info"] = ["title": "Employees"]   // {"openapi":"3.1.0","info":{"title":"Employees"}}
    /// ```
    public subscript(key: String) -> JSONValue? {
        get {
            switch self {
            case .object(let members): members[key]
            default: nil
            }
        }
        set {
            switch self {
            case .object(var members):
                self = .null
                members[key] = newValue
                self = .object(members)
            default:
                // Only code building a document (OpenAPI, OpenRPC) sets members, on objects it made.
                preconditionFailure("\(key) set on a JSON value that is not an object")
            }
        }
    }
}

/// Literals build JSON values: a dictionary literal makes an
/// ``JSONValue/object(_:)`` with its members in the order written.
///
/// ```swift
/// let parameter: JSONValue = ["name": "limit", "in": "query", "required": false, "schema": ["type": "integer"]]
/// ```
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Members(elements.lazy.map { (key: $0.0, value: $0.1) }))
    }
}

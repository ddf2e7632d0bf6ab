extension JSONValue {
    /// The members of an ``JSONValue/orderedObject(_:)``, in the order they
    /// were added; a key appears at most once.
    ///
    /// ```swift
    /// var members: JSONValue.OrderedMembers = ["type": "object"]
    /// members["required"] = ["id"]   // added after "type"
    /// members["type"] = "array"      // replaced where it stands
    /// ```
    public struct OrderedMembers: Sendable, Hashable, ExpressibleByDictionaryLiteral {
        /// The members, in order.
        public private(set) var members: [(key: String, value: JSONValue)]

        /// Members from `members` in their order; a repeated key keeps its
        /// first place and its last value.
        ///
        /// ```swift
        /// JSONValue.OrderedMembers([(key: "a", value: 1), (key: "b", value: 2)])
        /// ```
        public init(_ members: some Sequence<(key: String, value: JSONValue)> = []) {
            self.members = []
            for member in members { self[member.key] = member.value }
        }

        public init(dictionaryLiteral elements: (String, JSONValue)...) {
            self.init(elements.lazy.map { (key: $0.0, value: $0.1) })
        }

        /// Whether there are no members.
        public var isEmpty: Bool { members.isEmpty }

        /// The member named `key`. Setting a value replaces the member where
        /// it stands, or adds it at the end; setting `nil` removes it.
        public subscript(key: String) -> JSONValue? {
            get { members.first { $0.key == key }?.value }
            set {
                if let index = members.firstIndex(where: { $0.key == key }) {
                    if let newValue { members[index].value = newValue } else { members.remove(at: index) }
                } else if let newValue {
                    members.append((key, newValue))
                }
            }
        }

        public static func == (left: OrderedMembers, right: OrderedMembers) -> Bool {
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

    /// Whether this is an object (of either form) with no members.
    ///
    /// ```swift
    /// JSONValue.orderedObject([:]).isEmptyObject   // true
    /// ```
    public var isEmptyObject: Bool {
        switch self {
        case .object(let members): members.isEmpty
        case .orderedObject(let members): members.isEmpty
        default: false
        }
    }

    /// The member `key` of an object of either form, `nil` for any other
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
            case .orderedObject(let members): members[key]
            default: nil
            }
        }
        set {
            switch self {
            case .object(var members):
                self = .null
                members[key] = newValue
                self = .object(members)
            case .orderedObject(var members):
                self = .null
                members[key] = newValue
                self = .orderedObject(members)
            default:
                preconditionFailure("\(key) set on a JSON value that is not an object")
            }
        }
    }
}

/// Literals build JSON values: a dictionary literal makes an
/// ``JSONValue/orderedObject(_:)`` with its members in the order written.
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
        self = .orderedObject(OrderedMembers(elements.lazy.map { (key: $0.0, value: $0.1) }))
    }
}

import WebService

extension JSONWebTokenVerifier {
    /// Where a token's claims name its role, in PostgREST's
    /// `jwt-role-claim-key` syntax: `.key` steps into a member, `."a key"`
    /// into one whose name has dots or other signs, `[0]` into an array's
    /// element. A text that does not begin with `.` is one claim's whole
    /// name (`role`, `https://example.com/role`).
    ///
    /// ```swift
    /// JSONWebTokenVerifier.ClaimPath(".app_metadata.role")            // Supabase's app metadata
    /// JSONWebTokenVerifier.ClaimPath(".realm_access.roles[0]")        // Keycloak's first realm role
    /// JSONWebTokenVerifier.ClaimPath(#"."https://example.com/role""#) // Auth0's namespaced claim
    /// JSONWebTokenVerifier.ClaimPath(".a[")                           // nil
    /// ```
    public struct ClaimPath: Sendable, Hashable, CustomStringConvertible {
        /// A step into an object's member, or an array's element.
        public enum Step: Sendable, Hashable {
            /// An object's member by name: `.app_metadata`, `."https://example.com/role"`.
            case member(String)
            /// An array's element by position from 0: `[0]`.
            case index(Int)
        }

        /// The steps from the claims to the role.
        public let steps: [Step]
        /// The text the path was read from.
        public let description: String

        /// The claim `role`, the default.
        public static let role = ClaimPath(steps: [.member("role")], description: "role")

        private init(steps: [Step], description: String) {
            self.steps = steps
            self.description = description
        }

        /// The path `text` spells; `nil` when it spells none (empty, an
        /// unclosed quote or bracket, an index that is not a number, an
        /// empty key).
        public init?(_ text: String) {
            guard !text.isEmpty else { return nil }
            guard text.hasPrefix(".") else {
                guard !text.hasPrefix("[") else { return nil }
                self.init(steps: [.member(text)], description: text)
                return
            }
            var steps: [Step] = []
            var rest = Substring(text)
            while let first = rest.first {
                rest = rest.dropFirst()
                switch first {
                case "." where rest.first == "\"":
                    rest = rest.dropFirst()
                    guard let end = rest.firstIndex(of: "\""), end != rest.startIndex else { return nil }
                    steps.append(.member(String(rest[..<end])))
                    rest = rest[rest.index(after: end)...]
                case ".":
                    let name = rest.prefix { !".[]\"".contains($0) }
                    guard !name.isEmpty else { return nil }
                    steps.append(.member(String(name)))
                    rest = rest.dropFirst(name.count)
                case "[":
                    let digits = rest.prefix { $0.isASCII && $0.isNumber }
                    guard (1...9).contains(digits.count), let index = Int(digits), rest.dropFirst(digits.count).first == "]" else {
                        return nil
                    }
                    steps.append(.index(index))
                    rest = rest.dropFirst(digits.count + 1)
                default:
                    return nil
                }
            }
            self.init(steps: steps, description: text)
        }

        /// The value at the path in `claims`; `nil` when a step finds nothing.
        ///
        /// ```swift
        /// ClaimPath(".app_metadata.role")!.value(in: claims)   // .string("payroll")
        /// ```
        public func value(in claims: JSONValue.Members) -> JSONValue? {
            var current = JSONValue.object(claims)
            for step in steps {
                switch (step, current) {
                case (.member(let name), .object(let members)):
                    guard let next = members[name] else { return nil }
                    current = next
                case (.index(let index), .array(let elements)):
                    guard elements.indices.contains(index) else { return nil }
                    current = elements[index]
                default:
                    return nil
                }
            }
            return current
        }
    }
}

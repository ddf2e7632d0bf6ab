import HTTPServer

/// The name of an operation, derived from the service and the route alone,
/// so that it stays the same as long as they do: the `operationId` of the
/// OpenAPI document and ``OperationDocumentation/operationId``.
///
/// The rule: the service's path, each segment in lowerCamelCase, joined by
/// dots; a dot; the verb in lower case; then each segment of the route's
/// path in order, a literal in UpperCamelCase and a variable as `By` and its
/// name in UpperCamelCase (a positional `?` by its index among the
/// variables). Words are split at characters that are neither letters nor
/// digits. The overloads of one verb on one path are one operation; should
/// two paths of a service give the same name, the later ones, in declaration
/// order, end in `2`, `3`, ...
///
/// ```swift
/// OperationID.name(servicePath: "/employees", method: .get, routePath: "/")                  // "employees.get"
/// OperationID.name(servicePath: "/employees", method: .get, routePath: "/?:employeeNumber")  // "employees.getByEmployeeNumber"
/// OperationID.name(servicePath: "/math", method: .get, routePath: "/sum")                    // "math.getSum"
/// OperationID.name(servicePath: "/shop/v2", method: .post, routePath: "/order-items")        // "shop.v2.postOrderItems"
/// ```
public enum OperationID {
    /// The name of `method` on `routePath` of the service at `servicePath`,
    /// before any suffix that tells apart two paths of the same name.
    public static func name(servicePath: String, method: HTTPMethod, routePath: String) -> String {
        name(servicePath: servicePath, method: method, pattern: RoutePattern(routePath))
    }

    static func name(servicePath: String, method: HTTPMethod, pattern: RoutePattern) -> String {
        let service = servicePath.split(separator: "/").map { camelCase($0, upper: false) }.joined(separator: ".")
        var name = service + "." + method.rawValue.lowercased()
        var variableIndex = 0
        for segment in pattern.segments {
            switch segment {
            case .literal(let text):
                name += camelCase(text[...], upper: true)
            case .named(let variable):
                name += "By" + camelCase(variable[...], upper: true)
                variableIndex += 1
            case .positional:
                name += "By\(variableIndex)"
                variableIndex += 1
            }
        }
        return name
    }

    /// `text`'s words (runs of letters and digits) run together, each after
    /// the first starting with a capital, the first too when `upper`; the
    /// rest of each word is kept as written (`employeeNumber` → `EmployeeNumber`).
    static func camelCase(_ text: Substring, upper: Bool) -> String {
        var result = ""
        var startsWord = upper
        for character in text {
            guard character.isLetter || character.isNumber else {
                startsWord = !result.isEmpty || upper
                continue
            }
            if startsWord {
                result += character.uppercased()
            } else if result.isEmpty {
                result += character.lowercased()
            } else {
                result.append(character)
            }
            startsWord = false
        }
        return result
    }

    /// Gives the routes of one service their names, in declaration order:
    /// one per verb and path, numbered where two paths share a name.
    struct Assigner {
        let servicePath: String
        private var assigned: [Key: String] = [:]
        private var used: Set<String> = []

        private struct Key: Hashable {
            let method: HTTPMethod
            let shape: [String?]
        }

        init(servicePath: String) {
            self.servicePath = servicePath
        }

        mutating func id(method: HTTPMethod, pattern: RoutePattern) -> String {
            let key = Key(method: method, shape: pattern.shape)
            if let id = assigned[key] { return id }
            let base = OperationID.name(servicePath: servicePath, method: method, pattern: pattern)
            var id = base
            var number = 2
            while used.contains(id) {
                id = base + String(number)
                number += 1
            }
            assigned[key] = id
            used.insert(id)
            return id
        }
    }
}

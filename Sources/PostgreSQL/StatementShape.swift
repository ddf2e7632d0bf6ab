import Locking

/// What the text of a statement says about its parameters and labels,
/// worked out once per text and kept for the process: a query built per
/// request from the same text (a filtered list wrapped around a file's
/// statement, a page of it) finds it here rather than scanning the text
/// again. Bounded: a full table is emptied, so that texts built on the fly
/// cannot grow it without end.
///
/// ```swift
/// let shape = StatementShape.of("SELECT emp_no AS employeeNumber FROM employees WHERE emp_no = :id")
/// shape.parameters.names   // ["id"]
/// shape.labelSpelling      // ["employeenumber": "employeeNumber"]
/// ```
package final class StatementShape: Sendable {
    /// The positional form and the parameter names in `$n` order.
    package let parameters: Parameters
    /// Lower-cased `AS` aliases → their spelling in the text.
    package let labelSpelling: [String: String]

    init(_ sql: String) {
        parameters = Parameters.parse(sql)
        labelSpelling = SQLTokens.aliases(in: parameters.sql)
    }

    /// How many texts the table keeps before it is emptied.
    static let limit = 4096
    private static let known = Locked<[String: StatementShape]>([:])

    /// The shape of `sql`, worked out on first use.
    package static func of(_ sql: String) -> StatementShape {
        if let shape = known.withLock({ $0[sql] }) { return shape }
        let shape = StatementShape(sql)
        known.withLock { table in
            if table.count >= limit { table.removeAll(keepingCapacity: true) }
            table[sql] = shape
        }
        return shape
    }
}

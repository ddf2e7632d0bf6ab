internal import CLibPQ

// MARK: - Checking a password by logging in

extension Connection {
    /// Whether `user` logs in with `password` to the database `conninfo`
    /// names (its other settings kept, its user and password replaced): a
    /// connection is opened, and closed at once. A login that used no
    /// password (`trust` in `pg_hba.conf`) proves nothing and counts as
    /// wrong. Throws when the server cannot be reached or refuses for
    /// another reason (it cannot tell then).
    ///
    /// ```swift
    /// guard try Connection.verifiesLogin(conninfo: "host=db dbname=employees", user: "alice", password: password) else {
    ///     throw HTTPError(.unauthorized, detail: "The user name or the password is wrong.")
    /// }
    /// ```
    public static func verifiesLogin(conninfo: String, user: String, password: String) throws -> Bool {
        // Later keywords win over the ones conninfo expands to (so its own
        // connect_timeout wins over this default); NULL ends each array.
        let keywords: [String?] = ["connect_timeout", "dbname", "user", "password", nil]
        let values: [String?] = ["10", conninfo, user, password, nil]
        let handle: OpaquePointer? = withCStringArray(keywords) { keywords in
            withCStringArray(values) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let handle else { throw DatabaseError(code: .sqlClientUnableToEstablishSQLConnection, message: "out of memory") }
        defer { PQfinish(handle) }
        if PQstatus(handle) == CONNECTION_OK { return PQconnectionUsedPassword(handle) == 1 }
        let message = String(cString: PQerrorMessage(handle))
        for refusal in [
            "authentication failed", "does not exist", "no password supplied", "not permitted to log in", "no pg_hba.conf entry",
        ]
        where message.contains(refusal) {
            return false
        }
        throw DatabaseError(code: .sqlClientUnableToEstablishSQLConnection, message: message.trimmed)
    }
}

import PostgreSQL

extension Row {
    /// Appends the row as a JSON object keyed by column label, its values
    /// written by type exactly as a streamed `Query` writes rows.
    ///
    /// ```swift
    /// var body: [UInt8] = []
    /// try connection.query("INSERT INTO items (name) VALUES (:name) RETURNING id, name", ["name": "pen"]).next()?
    ///     .appendJSON(to: &body)   // {"id":1,"name":"pen"}
    /// ```
    public func appendJSON(options: JSONRenderingOptions = JSONRenderingOptions(), to output: inout [UInt8]) {
        layout.objectTemplate.write(self, options: options, to: &output) { _, _ in }
    }
}

@testable import PostgreSQL
import Testing

/// What the layers above keep with a connection or a column layout, under
/// typed keys (`LayerCacheKey`).
@Suite struct LayerCacheTests {
    final class Counter {
        var count = 0
    }

    final class Names {
        let labels: [String]
        init(_ labels: [String]) { self.labels = labels }
    }

    enum CounterKey: LayerCacheKey {
        static func makeValue(for connection: Connection) -> Counter { Counter() }
    }

    enum OtherCounterKey: LayerCacheKey {
        static func makeValue(for connection: Connection) -> Counter { Counter() }
    }

    /// Made while making another key's value: the storage is not held then.
    enum OuterKey: LayerCacheKey {
        static func makeValue(for connection: Connection) -> Counter {
            connection[cache: CounterKey.self].count += 100
            return Counter()
        }
    }

    enum NamesKey: LayerCacheKey {
        static func makeValue(for layout: ColumnLayout) -> Names { Names(layout.columns.map(\.label)) }
    }

    @Test func eachKeyHasItsOwnValueMadeOnce() throws {
        let connection = try TestDatabase.connect()
        connection[cache: CounterKey.self].count += 1
        connection[cache: CounterKey.self].count += 1
        connection[cache: OtherCounterKey.self].count += 5
        connection[cache: OuterKey.self].count += 7
        #expect(connection[cache: CounterKey.self].count == 102)
        #expect(connection[cache: OtherCounterKey.self].count == 5)
        #expect(connection[cache: OuterKey.self].count == 7)
    }

    @Test func forgottenWithThePreparedStatements() throws {
        let connection = try TestDatabase.connect()
        connection[cache: CounterKey.self].count = 3
        connection[cache: OtherCounterKey.self].count = 4
        connection.forgetPreparedStatements()
        #expect(connection[cache: CounterKey.self].count == 0)
        #expect(connection[cache: OtherCounterKey.self].count == 0)
    }

    @Test func aLayoutKeepsItsValueForItsColumns() throws {
        let connection = try TestDatabase.connect()
        let rows = try connection.query("SELECT 1 AS a, 2 AS b")
        let row = try #require(try rows.next())
        let names = row.layout[cache: NamesKey.self]
        #expect(names.labels == ["a", "b"])
        #expect(row.layout[cache: NamesKey.self] === names)
    }
}

import Foundation
import Testing
@testable import WebServiceClient

/// The query text ``ListQuery`` writes: PostgREST's syntax, as its own
/// client writes it (the server's side is tested against the real server).
@Suite("ListQuery")
struct ListQueryTests {
    static func text(_ query: ListQuery) -> String {
        query.arguments.elements.map { "\($0.name)=\($0.value.texts.joined(separator: "&"))" }.joined(separator: "&")
    }

    @Test("each operator, not., in-lists with values that need quotes, order, select and page")
    func syntax() {
        let query = ListQuery()
            .where("lastName", .eq("Facello"))
            .where("empNo", .gte(20000))
            .where("salary", .lt(60000.5))
            .where("firstName", .ilike("geo*"))
            .where("deptName", .not(.like("*ing")))
            .where("title", .in(["Staff", "Senior, Staff", "say \"hi\"", ""]))
            .where("toDate", .isNull)
            .where("active", .not(.isTrue))
            .ordered(by: "hireDate", .descending)
            .ordered(by: "lastName", nulls: .last)
            .selecting("empNo", "lastName")
            .page(limit: 10, offset: 20)
        #expect(
            Self.text(query)
                == #"lastName=eq.Facello&empNo=gte.20000&salary=lt.60000.5&firstName=ilike.geo*&deptName=not.like.*ing&title=in.(Staff,"Senior, Staff","say \"hi\"","")&toDate=is.null&active=not.is.true&order=hireDate.desc,lastName.asc.nullslast&select=empNo,lastName&limit=10&offset=20"#
        )
        #expect(Self.text(ListQuery()).isEmpty)
        #expect(Self.text(ListQuery().page(limit: 5)) == "limit=5")
    }
}
